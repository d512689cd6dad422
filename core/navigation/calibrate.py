"""Self-calibration on the user's own documents: no labels needed.

Probe queries are made from the collection itself: a sentence taken out of a passage, thinned to part of its words
(so it is not a verbatim copy), is the query and that passage with its ancestors is the gold; section headings
serve as queries for their sections. The walk is run on each probe with the gold branch forced open, so every level
yields candidates with features and a label. From those:
1. a logistic model per level kind is fitted (the decision model's weights, ``core/decision.py``);
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

from shelfwise.core.navigation.decision import LEVEL_KINDS, DecisionModel, LevelModel, prior_model
from shelfwise.core.navigation.features import FEATURES
from shelfwise.core.navigation.navigator import Navigator
from shelfwise.core.navigation.snapshots import load_decision, model_set, save_decision, snapshot_for
from shelfwise.core.settings import Settings
from shelfwise.core.store.db import Store
from shelfwise.core.store.snapshot import Snapshot

_SENT = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\w+", re.UNICODE)
LM_FEATURES = ("lm", "z_lm")


@dataclass
class Probe:
    query: str
    gold: int  # node id (passage, or section for heading probes)
    kind: str  # "sentence" | "heading"


def make_probes(snap: Snapshot, n: int = 240, seed: int = 0, keep_words: float = 0.6) -> list[Probe]:
    rng = random.Random(seed)
    passages = [snap.nodes[int(p)] for p in snap.passage_ids]
    passages = [p for p in passages if len(p.text.split()) >= 8]
    rng.shuffle(passages)
    probes: list[Probe] = []
    for p in passages[: int(n * 0.8)]:
        sents = [s for s in _SENT.split(p.text) if len(s.split()) >= 6] or [p.text]
        words = _WORD.findall(rng.choice(sents))
        k = max(4, int(len(words) * keep_words))
        start = rng.randint(0, max(0, len(words) - k))
        chosen = words[start:start + k]
        probes.append(Probe(" ".join(chosen), p.id, "sentence"))
    sections = [s for s in snap.nodes.values() if s.kind == "section" and len(s.title.split()) >= 2]
    rng.shuffle(sections)
    for s in sections[: n - len(probes)]:
        probes.append(Probe(s.title, s.id, "heading"))
    return probes


def _vector(feats: dict[str, float], drop_lm: bool = False) -> np.ndarray:
    v = np.array([feats.get(f, 0.0) for f in FEATURES], np.float32)
    if drop_lm:
        for f in LM_FEATURES:
            v[FEATURES.index(f)] = 0.0
    return v


def collect(nav: Navigator, snap: Snapshot, decision: DecisionModel, probes: list[Probe], embedder,
            progress: Callable[[int, int], None] | None = None) -> dict[str, list[tuple[int, np.ndarray, int]]]:
    """Per level kind: (probe index, features, is-gold) rows from walks with the gold branch forced open."""
    rows: dict[str, list[tuple[int, np.ndarray, int]]] = {k: [] for k in LEVEL_KINDS}
    vecs = embedder.embed([p.query for p in probes])
    for i, (probe, vec) in enumerate(zip(probes, vecs, strict=True)):
        gold_chain = {probe.gold} | {a.id for a in snap.ancestors(probe.gold)}
        ev = nav.evidence(snap, probe.query, snap.collection_id, np.asarray(vec, np.float32))
        res = nav.walk(snap, decision, ev, probe.query, keep={probe.gold}, cancel=None, t0=0.0)
        for level in res.trace.levels:
            for c in level.candidates:
                kind = c.kind if c.kind in LEVEL_KINDS else "section"
                if probe.kind == "heading" and kind == "passage":
                    continue
                rows[kind].append((i, _vector(c.features), int(c.node_id in gold_chain)))
        if progress:
            progress(i + 1, len(probes))
    return rows


def _fit(rows: list[tuple[int, np.ndarray, int]], drop_lm: bool, kind: str = "section") -> LevelModel | None:
    """Fit one level's model on probe rows.

    Keeps the prior's relative weights and fits only their scale and offset (Platt scaling), so the output is a
    calibrated probability while the balance between the signals stays as measured on real questions. Fitting
    every weight (an earlier mode, removed) learned on ConditionalQA to trust lexical overlap far too much, because
    a probe made of a passage's own words is easier for BM25 than a real question is
    (measured: navigation passage Hit@1 0.55 with the prior, 0.34 with fully fitted weights).
    """
    from sklearn.linear_model import LogisticRegression

    if len(rows) < 20 or len({r[2] for r in rows}) < 2:
        return None
    x = np.stack([r[1] for r in rows])
    lm_cols = [FEATURES.index(f) for f in LM_FEATURES]
    if drop_lm:
        x[:, lm_cols] = 0.0
    y = np.array([r[2] for r in rows])
    prior = prior_model(kind)
    if drop_lm:
        prior.weights[lm_cols] = 0.0
    z = prior.logits(x).reshape(-1, 1)
    clf = LogisticRegression(C=10.0, max_iter=500).fit(z, y)
    a = max(float(clf.coef_[0][0]), 1e-3)  # keep the ordering of the prior
    return LevelModel(weights=(prior.weights * a).astype(np.float32), bias=float(a * prior.bias + clf.intercept_[0]),
                      fitted=True, n_train=len(rows), scale=a)


def _hit1(model: LevelModel, rows: list[tuple[int, np.ndarray, int]], drop_lm: bool = False) -> float:
    groups: dict[int, list[tuple[np.ndarray, int]]] = {}
    for q, x, y in rows:
        groups.setdefault(q, []).append((x, y))
    hits = []
    for items in groups.values():
        if not any(y for _, y in items):
            continue
        x = np.stack([i[0] for i in items])
        if drop_lm:
            x = x.copy()
            x[:, [FEATURES.index(f) for f in LM_FEATURES]] = 0.0
        best = int(np.argmax(model.logits(x)))
        hits.append(items[best][1])
    return float(np.mean(hits)) if hits else 0.0


def _gold_ranks(model: LevelModel, rows: list[tuple[int, np.ndarray, int]]) -> list[tuple[int, int]]:
    """(rank of the best gold candidate, level size) per probe."""
    groups: dict[int, list[tuple[np.ndarray, int]]] = {}
    for q, x, y in rows:
        groups.setdefault(q, []).append((x, y))
    out = []
    for items in groups.values():
        if not any(y for _, y in items):
            continue
        logits = model.logits(np.stack([i[0] for i in items]))
        order = np.argsort(-logits)
        rank = next(r for r, j in enumerate(order) if items[j][1])
        out.append((rank, len(items)))
    return out


def _split(rows, fold: int, folds: int = 2):
    train = [r for r in rows if r[0] % folds != fold]
    test = [r for r in rows if r[0] % folds == fold]
    return train, test


KEEP_CAP = {"document": 8, "section": 12}  # budgets never grow past these, whatever the probes say


def calibrate(store: Store, collection_id: int, embedder, backend, settings: Settings, *, n_probes: int = 240,
              target_recall: float = 0.9, try_lm: bool = True,
              log: Callable[[str], None] | None = None,
              progress: Callable[[int, int], None] | None = None) -> DecisionModel:
    say = log or (lambda s: None)
    snap = snapshot_for(store, collection_id, embedder.model_id)
    if try_lm and backend is not None:
        n_probes = min(n_probes, 120)  # every probe then costs the generative model ~1k tokens
    probes = make_probes(snap, n_probes)
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
        scores: dict[str, float | None] = {}
        for drop in (True, False):
            if drop is False and not use_lm:
                continue
            hits = []
            for fold in (0, 1):
                train, test = _split(r, fold)
                m = _fit(train, drop, kind=kind)
                if m is not None:
                    hits.append(_hit1(m, test, drop))
            scores["without_lm" if drop else "with_lm"] = round(float(np.mean(hits)), 4) if hits else None
        with_score, without_score = scores.get("with_lm"), scores.get("without_lm")
        with_lm = use_lm and with_score is not None and without_score is not None and with_score > without_score + 0.02
        fitted = _fit(r, drop_lm=not with_lm, kind=kind)
        if fitted is not None:
            model.levels[kind] = fitted
        if with_lm:
            lm_levels.append(kind)
        ranks = _gold_ranks(model.levels[kind], r)
        keep = None
        if ranks:
            for k in range(1, 64):
                if np.mean([rk < k for rk, _ in ranks]) >= target_recall:
                    keep = k
                    break
            keep = keep or 64
        report["levels"][kind] = {"rows": len(r), "probe_hit1": scores, "keep_for_target": keep,
                                  "uses_lm": with_lm, "weights": {f: round(float(w), 3) for f, w in
                                                                  zip(FEATURES, model.levels[kind].weights,
                                                                      strict=True) if abs(w) > 1e-3}}
        if keep is not None and kind in ("document", "section"):
            model.keep[kind] = min(keep, KEEP_CAP[kind])
        if keep is not None and kind == "cluster" and ranks:
            sizes = float(np.mean([n for _, n in ranks]))
            model.first_keep_ratio = round(min(1.0, keep / max(1.0, sizes)), 3)
    model.lm_levels = tuple(lm_levels)
    report["target_recall"] = target_recall
    report["model_set"] = model_set(embedder, backend)
    model.report = report
    save_decision(store, collection_id, embedder, backend, model)
    say(f"calibration: done; generative model used at levels {list(model.lm_levels) or 'none'}")
    return model


def ensure_calibrated(store: Store, collection_id: int, embedder, backend, settings: Settings,
                      log: Callable[[str], None] | None = None) -> DecisionModel:
    """The stored calibration for this collection and model set, fitted now if missing or stale."""
    current = load_decision(store, collection_id, embedder, backend)
    version_key = f"calibrated_tree:{collection_id}:{model_set(embedder, backend)}"
    snap = snapshot_for(store, collection_id, embedder.model_id)
    if current.key != "prior" and store.get_meta(version_key) == snap.version:
        return current
    model = calibrate(store, collection_id, embedder, backend, settings, log=log)
    store.set_meta(version_key, snap.version)
    return model
