"""Self-calibration on the user's own documents: no labels needed.

Probe queries are made from the collection itself: a sentence taken out of a passage, thinned to part of its words
(so it is not a verbatim copy), is the query and that passage with its ancestors is the gold; section headings
serve as queries for their sections. The walk is run on each probe with the gold branch forced open, so every level
yields candidates with features and a label. From those:
1. a logistic model per level kind is fitted (the decision model's weights, ``core/navigation/decision.py``);
2. the generative model's query likelihood is tried on the levels where it is affordable, and kept only where it
   improves the probes' Hit@1 in cross-validation (``lm_levels``);
3. per-level budgets are chosen: the smallest ``k`` whose probe recall of the gold branch reaches the target.
The result is stored per collection and model set and redone when either changes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from shelfwise.core.languages import has_unsegmented, word_count
from shelfwise.core.models.backend import DecisionBackend, Embedder
from shelfwise.core.navigation.decision import LEVEL_KINDS, DecisionModel, LevelModel, prior_model
from shelfwise.core.navigation.features import FEATURES
from shelfwise.core.navigation.navigator import Navigator
from shelfwise.core.navigation.snapshots import load_decision, model_set, save_decision, snapshot_for
from shelfwise.core.settings import Settings
from shelfwise.core.store.db import Store
from shelfwise.core.store.snapshot import Snapshot

_SENT = re.compile(r"(?<=[.!?\u0964\u0965\u061f\u06d4\u1362\u104b\u17d4])\s+|(?<=[\u3002\uff01\uff1f])")
_WORD = re.compile(r"\w+", re.UNICODE)
LM_FEATURES = ("lm", "z_lm")


@dataclass
class Probe:
    query: str
    gold: int  # node id (passage, or section for heading probes)
    kind: str  # "sentence" | "heading" | "question" (a labelled real question, e.g. ConditionalQA's tune half)
    also: frozenset[int] = frozenset()  # further gold nodes (a real question may have several evidence passages)


def make_probes(snap: Snapshot, n: int = 240, seed: int = 0, keep_words: float = 0.6) -> list[Probe]:
    rng = random.Random(seed)
    conn = snap.store.conn  # the words are read here, not kept for every node (a library may be large)
    long_enough = {int(nid) for nid, text in conn.execute(
        "SELECT id, text FROM nodes WHERE collection_id = ? AND kind = 'passage'", (snap.collection_id,))
        if word_count(text or "") >= 8}
    ids = [int(p) for p in snap.passage_ids if int(p) in long_enough]
    rng.shuffle(ids)
    passages = snap.nodes.many(ids[: int(n * 0.8)])
    probes: list[Probe] = []
    for p in passages[: int(n * 0.8)]:
        sents = [s for s in _SENT.split(p.text) if word_count(s) >= 6] or [p.text]
        sentence = rng.choice(sents)
        if has_unsegmented(sentence):  # no spaces to cut at: a run of its characters
            k = max(4, int(len(sentence) * keep_words))
            start = rng.randint(0, max(0, len(sentence) - k))
            probes.append(Probe(sentence[start:start + k], p.id, "sentence"))
            continue
        words = _WORD.findall(sentence)
        k = max(4, int(len(words) * keep_words))
        start = rng.randint(0, max(0, len(words) - k))
        chosen = words[start:start + k]
        probes.append(Probe(" ".join(chosen), p.id, "sentence"))
    sections = [(int(nid), title) for nid, title in conn.execute(
        "SELECT id, title FROM nodes WHERE collection_id = ? AND kind = 'section' ORDER BY parent_id, ordinal, id",
        (snap.collection_id,)) if int(nid) in snap.nodes and len((title or "").split()) >= 2]
    rng.shuffle(sections)
    for nid, title in sections[: n - len(probes)]:
        probes.append(Probe(title, nid, "heading"))
    return probes


def _vector(feats: dict[str, float], drop_lm: bool = False) -> np.ndarray:
    v = np.array([feats.get(f, 0.0) for f in FEATURES], np.float32)
    if drop_lm:
        for f in LM_FEATURES:
            v[FEATURES.index(f)] = 0.0
    return v


def collect(nav: Navigator, snap: Snapshot, decision: DecisionModel, probes: list[Probe], embedder: Embedder,
            progress: Callable[[int, int], None] | None = None) -> dict[str, list[tuple[int, np.ndarray, int]]]:
    """Per level kind: (probe index, features, is-gold) rows from walks with the gold branch forced open."""
    rows: dict[str, list[tuple[int, np.ndarray, int]]] = {k: [] for k in LEVEL_KINDS}
    vecs = embedder.embed_queries([p.query for p in probes])
    for i, (probe, vec) in enumerate(zip(probes, vecs, strict=True)):
        golds = {probe.gold} | set(probe.also)
        gold_chain = golds | {a.id for g in golds for a in snap.ancestors(g)}
        ev = nav.evidence(snap, probe.query, snap.collection_id, np.asarray(vec, np.float32))
        res = nav.walk(snap, decision, ev, probe.query, keep=golds, cancel=None, t0=0.0)
        for level in res.trace.levels:
            for c in level.candidates:
                kind = c.kind if c.kind in LEVEL_KINDS else "section"
                if probe.kind == "heading" and kind == "passage":
                    continue
                rows[kind].append((i, _vector(c.features), int(c.node_id in gold_chain)))
        if progress:
            progress(i + 1, len(probes))
    return rows


Rows = list[tuple[int, np.ndarray, int]]
# L2 strengths tried for the departure from the prior (per row, on z-scored features); inf = the prior's ranking
# with only its scale and offset fitted (Platt). Chosen per level by held-out probes (see _choose_strength).
STRENGTHS = (float("inf"), 3.0, 0.3, 0.03)
MIN_HELDOUT_GAIN = 0.02  # held-out probe MRR a fitted ranking must gain over the prior's to replace it


def _matrix(rows: Rows, drop_lm: bool) -> tuple[np.ndarray, np.ndarray]:
    x = np.stack([r[1] for r in rows]).astype(np.float64)
    if drop_lm:
        x[:, [FEATURES.index(f) for f in LM_FEATURES]] = 0.0
    return x, np.array([r[2] for r in rows], np.float64)


def fit_level(rows: Rows, drop_lm: bool, kind: str = "section", strength: float = float("inf")) -> LevelModel | None:
    """Fit one level's model on probe rows, regularised toward the prior.

    The weights are ``a * prior + delta``: ``a > 0`` and the offset are fitted freely (Platt scaling: calibrated
    probabilities), ``delta`` is penalised by ``strength * |delta|^2`` (per row). ``strength=inf`` keeps the
    prior's ranking exactly; smaller strengths let the probes move weight between features, which changes the
    order of candidates. A plain unregularised fit is not offered: probes made of a passage's own words make
    lexical overlap look decisive (a full fit lost most of the prior's passage Hit@1 on ConditionalQA:
    docs/eval/attempts.md, "End to end").
    """
    from scipy.optimize import minimize

    if len(rows) < 20 or len({r[2] for r in rows}) < 2:
        return None
    x, y = _matrix(rows, drop_lm)
    prior = prior_model(kind)
    w0 = prior.weights.astype(np.float64)
    if drop_lm:
        w0[[FEATURES.index(f) for f in LM_FEATURES]] = 0.0
    z = x @ w0
    free = np.ones(len(FEATURES), bool)
    if drop_lm:
        free[[FEATURES.index(f) for f in LM_FEATURES]] = False
    xf = x[:, free]
    n = len(y)
    fit_delta = np.isfinite(strength)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        a, b = theta[0], theta[1]
        delta = theta[2:] if fit_delta else np.zeros(0)
        s = a * z + b + (xf @ delta if fit_delta else 0.0)
        p = 1.0 / (1.0 + np.exp(-np.clip(s, -30, 30)))
        ll = np.logaddexp(0.0, s) - y * s
        g = (p - y) / n
        grad = [float(g @ z), float(g.sum())]
        value = float(ll.mean())
        if fit_delta:
            value += strength * float(delta @ delta)
            return value, np.concatenate([grad, xf.T @ g + 2 * strength * delta])
        return value, np.array(grad)

    theta0 = np.concatenate([[1.0, prior.bias], np.zeros(int(free.sum()) if fit_delta else 0)])
    bounds = [(1e-3, None), (None, None)] + [(None, None)] * (len(theta0) - 2)
    res = minimize(loss, theta0, jac=True, method="L-BFGS-B", bounds=bounds)
    a, b = float(res.x[0]), float(res.x[1])
    w = a * w0
    if fit_delta:
        w[free] += res.x[2:]
    return LevelModel(weights=w.astype(np.float32), bias=b, fitted=True, n_train=n, scale=a)


def level_mrr(model: LevelModel, rows: Rows, drop_lm: bool = False) -> float:
    ranks = _gold_ranks(model, rows, drop_lm)
    return float(np.mean([1.0 / (r + 1) for r, _ in ranks])) if ranks else 0.0


def _choose_strength(rows: Rows, drop_lm: bool, kind: str, folds: int = 3) -> tuple[float, dict[str, float]]:
    """The regularisation strength whose fits rank best on held-out probes (probes split by query, so a probe's
    candidates are never in both halves); the prior's ranking (inf) unless a fitted one gains MIN_HELDOUT_GAIN."""
    scores: dict[float, list[float]] = {s: [] for s in STRENGTHS}
    for fold in range(folds):
        train, test = probe_split(rows, fold, folds)
        if not train or not test:
            continue
        for s in STRENGTHS:
            m = fit_level(train, drop_lm, kind=kind, strength=s)
            if m is not None:
                scores[s].append(level_mrr(m, test, drop_lm))
    mean = {s: float(np.mean(v)) for s, v in scores.items() if v}
    if not mean:
        return float("inf"), {}
    base = mean.get(float("inf"), 0.0)
    best = max(mean, key=lambda s: mean[s])
    chosen = best if mean[best] >= base + MIN_HELDOUT_GAIN else float("inf")
    return chosen, {("prior" if np.isinf(s) else f"l2={s:g}"): round(v, 4) for s, v in mean.items()}


def _gold_ranks(model: LevelModel, rows: Rows, drop_lm: bool = False) -> list[tuple[int, int]]:
    """(rank of the best gold candidate, level size) per probe."""
    groups: dict[int, list[tuple[np.ndarray, int]]] = {}
    for q, x, y in rows:
        groups.setdefault(q, []).append((x, y))
    out = []
    for items in groups.values():
        if not any(y for _, y in items):
            continue
        x = np.stack([i[0] for i in items])
        if drop_lm:
            x = x.copy()
            x[:, [FEATURES.index(f) for f in LM_FEATURES]] = 0.0
        logits = model.logits(x)
        order = np.argsort(-logits)
        rank = next(r for r, j in enumerate(order) if items[j][1])
        out.append((rank, len(items)))
    return out


def probe_split(rows: Rows, fold: int, folds: int = 2) -> tuple[Rows, Rows]:
    train = [r for r in rows if r[0] % folds != fold]
    test = [r for r in rows if r[0] % folds == fold]
    return train, test


KEEP_CAP = {"document": 8, "section": 12}  # budgets never grow past these, whatever the probes say


def calibrate(store: Store, collection_id: int, embedder: Embedder, backend: DecisionBackend | None,
              settings: Settings, *, n_probes: int = 240,
              target_recall: float = 0.9, try_lm: bool = True, fit_ranking: bool | None = None,
              log: Callable[[str], None] | None = None,
              progress: Callable[[int, int], None] | None = None, keep_words: float = 0.6) -> DecisionModel:
    """Fit and store the collection's decision model on probes made from it (``keep_words``: the share of a
    sentence's words a probe keeps, :func:`make_probes`)."""
    say = log or (lambda s: None)
    if fit_ranking is None:
        fit_ranking = settings.rank_fit
    snap = snapshot_for(store, collection_id, embedder.model_id)
    if try_lm and backend is not None:
        n_probes = min(n_probes, 120)  # every probe then costs the generative model ~1k tokens
    probes = make_probes(snap, n_probes, keep_words=keep_words)
    say(f"calibration: {len(probes)} probe queries made from the collection")
    wide = replace(settings.budgets, first_keep_ratio=0.5, keep=8, passages=30, hybrid=20)
    use_lm = try_lm and backend is not None
    s = replace(settings, budgets=wide, readout="fused" if use_lm else "embedding")
    prior = DecisionModel(lm_levels=("section", "passage") if use_lm else ())
    nav = Navigator(store, backend, embedder, s, decision=prior)
    rows = collect(nav, snap, prior, probes, embedder, progress)
    model = DecisionModel()
    report: dict = {"probes": len(probes), "levels": {}}
    lm_levels = []
    for kind in LEVEL_KINDS:
        r = rows[kind]
        if not r:
            continue
        variants = [True, False] if use_lm else [True]  # drop_lm
        chosen: dict[bool, tuple[float, dict[str, float]]] = {}
        for drop in variants:
            chosen[drop] = _choose_strength(r, drop, kind) if fit_ranking else (float("inf"), {})
        with_lm = False
        if use_lm and False in chosen:
            best_with = max(chosen[False][1].values(), default=0.0)
            best_without = max(chosen[True][1].values(), default=0.0)
            with_lm = best_with > best_without + MIN_HELDOUT_GAIN  # the readout earns its tokens on held-out probes
        strength, cv = chosen[not with_lm]
        fitted = fit_level(r, drop_lm=not with_lm, kind=kind, strength=strength)
        if fitted is not None:
            model.levels[kind] = fitted
        if with_lm:
            lm_levels.append(kind)
        ranking = ("prior" if fit_ranking else "prior (rank fit off)") if np.isinf(strength) \
            else f"fitted (l2={strength:g})"
        ranks = _gold_ranks(model.levels[kind], r)
        keep = None
        if ranks:
            for k in range(1, 64):
                if np.mean([rk < k for rk, _ in ranks]) >= target_recall:
                    keep = k
                    break
            keep = keep or 64
        report["levels"][kind] = {"rows": len(r), "ranking": ranking, "heldout_probe_mrr": cv,
                                  "keep_for_target": keep, "uses_lm": with_lm,
                                  "weights": {f: round(float(w), 3) for f, w in
                                                                  zip(FEATURES, model.levels[kind].weights,
                                                                      strict=True) if abs(w) > 1e-3}}
        if keep is not None and kind in ("document", "section"):
            model.keep[kind] = min(keep, KEEP_CAP[kind])
        if keep is not None and kind == "cluster" and ranks:
            sizes = float(np.mean([n for _, n in ranks]))
            model.first_keep_ratio = round(min(1.0, keep / max(1.0, sizes)), 3)
    model.lm_levels = tuple(lm_levels)
    report["target_recall"] = target_recall
    report["fit_ranking"] = fit_ranking
    report["model_set"] = model_set(embedder, backend)
    model.report = report
    save_decision(store, collection_id, embedder, backend, model)
    say(f"calibration: done; generative model used at levels {list(model.lm_levels) or 'none'}")
    return model


def ensure_calibrated(store: Store, collection_id: int, embedder: Embedder, backend: DecisionBackend | None,
                      settings: Settings,
                      log: Callable[[str], None] | None = None,
                      progress: Callable[[int, int], None] | None = None) -> DecisionModel:
    """The stored calibration for this collection and model set, fitted now if missing or stale."""
    current = load_decision(store, collection_id, embedder, backend)
    version_key = f"calibrated_tree:{collection_id}:{model_set(embedder, backend)}"
    snap = snapshot_for(store, collection_id, embedder.model_id)
    # A calibration stored without the flag predates it (some of those refitted the ranking): redo it.
    same_mode = current.report.get("fit_ranking") == settings.rank_fit
    if current.key != "prior" and same_mode and store.get_meta(version_key) == snap.version:
        return current
    model = calibrate(store, collection_id, embedder, backend, settings, log=log, progress=progress)
    store.set_meta(version_key, snap.version)
    return model
