"""Re-deriving the hand-set choices on ConditionalQA's TUNE half (never the test half): the decision model's prior
weights per level and the hybrid baseline's lexical weight.

``shelfwise eval conditionalqa --split tune --fit-prior`` runs this and writes ``prior-fit-tune.json``; the weights
in ``core/navigation/decision.py`` and ``RRF``/hybrid constants in ``evaluation/retrieval.py`` are copied from
that file (their comments say so). The walk is run on every tune question with its gold evidence forced open, so
every level yields candidates with features and labels (the same rows self-calibration collects from probes), and
one logistic model per level kind is fitted toward the current prior with the strength that ranks best on
held-out tune questions (3 folds by question).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from shelfwise.core.navigation.calibrate import STRENGTHS, Probe, collect, fit_level, level_mrr, probe_split
from shelfwise.core.navigation.decision import LEVEL_KINDS, DecisionModel
from shelfwise.core.navigation.features import FEATURES
from shelfwise.core.navigation.navigator import Navigator
from shelfwise.evaluation.datasets import EvalQuestion
from shelfwise.evaluation.retrieval import Methods, judge

HYBRID_WEIGHTS = (0.0, 0.05, 0.1, 0.15, 0.25, 0.35, 0.5, 0.75, 1.0)


def gold_probes(m: Methods, questions: Sequence[EvalQuestion]) -> list[Probe]:
    """A labelled question as a probe: its gold passages (by document and content item) as node ids."""
    by_key: dict[tuple[str, int | None], int] = {}
    for pid, n in zip(m.snap.passage_ids.tolist(), m.snap.nodes.many(m.snap.passage_ids.tolist()), strict=True):
        by_key[(m.doc_path.get(n.document_id or -1, ""), n.location.line)] = int(pid)
    out = []
    for q in questions:
        ids = [by_key[(g.path, g.item)] for g in q.gold if (g.path, g.item) in by_key]
        if ids:
            out.append(Probe(q.query, ids[0], "question", frozenset(ids[1:])))
    return out


def fit_prior(m: Methods, questions: Sequence[EvalQuestion], log: Callable[[str], None] | None = None) -> dict:
    say = log or (lambda s: None)
    probes = gold_probes(m, questions)
    say(f"fit-prior: {len(probes)} tune questions with gold passages in the collection")
    wide = replace(m.settings.budgets, first_keep_ratio=0.5, keep=8, passages=30, hybrid=20)
    nav = Navigator(m.store, None, m.embedder, replace(m.settings, readout="embedding", budgets=wide),
                    decision=DecisionModel())
    rows = collect(nav, m.snap, DecisionModel(), probes, m.embedder)
    out: dict = {"questions": len(probes), "levels": {}}
    for kind in LEVEL_KINDS:
        r = rows[kind]
        if not r:
            continue
        cv: dict[str, float] = {}
        for s in STRENGTHS:
            scores = []
            for fold in range(3):
                train, test = probe_split(r, fold, 3)
                fitted = fit_level(train, True, kind=kind, strength=s)
                if fitted is not None and test:
                    scores.append(level_mrr(fitted, test, True))
            if scores:
                cv["prior" if np.isinf(s) else f"l2={s:g}"] = round(float(np.mean(scores)), 4)
        best = max(cv, key=lambda k: cv[k])
        strength = float("inf") if best == "prior" else float(best.split("=")[1])
        fitted = fit_level(r, True, kind=kind, strength=strength)
        if fitted is None:
            continue
        out["levels"][kind] = {
            "rows": len(r), "heldout_mrr": cv, "chosen": best,
            "weights": {f: round(float(w / fitted.scale), 3) for f, w in zip(FEATURES, fitted.weights, strict=True)
                        if abs(w / fitted.scale) >= 0.005},
        }
        say(f"fit-prior: {kind}: {best} (held-out MRR {cv})")
    q_vecs = np.asarray(m.embedder.embed_queries([q.query for q in questions]), np.float32)
    hybrid: dict[str, float] = {}
    for w in HYBRID_WEIGHTS:
        hits = [judge(m.snap, m.doc_path, q, m.hybrid(q.query, v, lexical_weight=w).passages)["passage_hit1"]
                for q, v in zip(questions, q_vecs, strict=True)]
        hybrid[f"{w:g}"] = round(float(np.mean(hits)), 4)
    out["hybrid_lexical_weight"] = {"passage_hit1": hybrid, "chosen": max(hybrid, key=lambda k: hybrid[k])}
    say(f"fit-prior: hybrid lexical weight {out['hybrid_lexical_weight']}")
    return out


# -- the passage combiner chosen across collections (leave-one-collection-out) -------------------------------------
# The last level decides all three granularities (the first passage's section and document are the answer's), and
# its candidate pool does not depend on the passage weights (the tree's kept branches + the hybrid candidates): the
# pool each question's walk built, with every candidate's features and whether it is a gold passage / in a gold
# section / in a gold document, scores any passage weights exactly, offline. ``benchmarks/research/combiner_loco.py``
# collects the pools on the ConditionalQA tune half and the traindata collections, fits with ``fit_listwise`` and
# chooses by ``loco``; docs/eval/combiner.md has the figures.
PASSAGE_FREE = ("g_cos_max", "g_lex_max", "g_cos_nb", "z_cos_max", "z_lex_max", "rank_cos", "rank_lex", "parent",
                "z_cos_q_max")
GRANULARITIES = ("passage", "section", "document")


@dataclass
class Pool:
    """One question's last-level candidates: features (n, len(FEATURES)) and gold flags (n, 3) per granularity."""

    x: np.ndarray
    gold: np.ndarray


def hit1(pools: Sequence[Pool], w: np.ndarray) -> dict[str, float]:
    """Hit@1 per granularity of the weights ``w`` (the navigator's order: score descending, stable)."""
    if not pools:
        return {g: 0.0 for g in GRANULARITIES}
    tops = np.array([p.gold[int(np.argsort(-(p.x @ w), kind="stable")[0])] if len(p.x) else np.zeros(3)
                     for p in pools])
    return {g: round(float(tops[:, i].mean()), 4) for i, g in enumerate(GRANULARITIES)}


def fit_listwise(collections: Sequence[Sequence[Pool]], prior: np.ndarray, strength: float,
                 free: Sequence[str] = PASSAGE_FREE, section_weight: float = 0.0) -> np.ndarray:
    """Passage weights ``a * prior + delta`` maximising, per question, the softmax probability of its gold passages
    among its pool (plus ``section_weight`` x that of the passages in a gold section), every collection weighted
    equally whatever its size; ``delta`` (over ``free`` features only) is penalised by ``strength * |delta|^2``,
    ``strength=inf`` keeps the prior's ranking (only its scale ``a`` is fitted, which changes no order)."""
    from scipy.optimize import minimize

    if np.isinf(strength):
        return prior.astype(np.float32)
    idx = [FEATURES.index(f) for f in free]
    batches = []  # per collection: rows, segment starts, gold masks (passage, section), questions
    for pools in collections:
        usable = [p for p in pools if len(p.x) and p.gold[:, 0].any()]
        if usable:
            x = np.concatenate([p.x for p in usable]).astype(np.float64)
            gold = np.concatenate([p.gold for p in usable])
            starts = np.cumsum([0] + [len(p.x) for p in usable[:-1]])
            seg = np.repeat(np.arange(len(usable)), [len(p.x) for p in usable])
            batches.append((x, starts, seg, gold[:, 0] > 0, gold[:, 1] > 0, len(usable)))
    if not batches:
        return prior.astype(np.float32)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        a, delta = theta[0], theta[1:]
        w = a * prior.astype(np.float64)
        w[idx] += delta
        value, grad_w = 0.0, np.zeros(len(w))
        for x, starts, seg, gp, gs, nq in batches:
            s = x @ w
            s = s - np.maximum.reduceat(s, starts)[seg]
            e = np.exp(s)
            prob = e / np.add.reduceat(e, starts)[seg]
            ex = np.add.reduceat(prob[:, None] * x, starts)  # (nq, F): the pool's expected features
            cv, cg = 0.0, np.zeros(len(w))
            for mask, lam in ((gp, 1.0), (gs, section_weight)):
                if lam == 0:
                    continue
                pm = np.where(mask, prob, 0.0)
                pg = np.add.reduceat(pm, starts)
                has = pg > 0
                cv -= lam * float(np.log(pg[has]).sum())
                eg = np.add.reduceat(pm[:, None] * x, starts) / np.maximum(pg, 1e-300)[:, None]
                cg -= lam * (eg[has] - ex[has]).sum(0)
            value += cv / nq / len(batches)
            grad_w += cg / nq / len(batches)
        value += strength * float(delta @ delta)
        grad = np.concatenate([[float(grad_w @ prior)], grad_w[idx] + 2 * strength * delta])
        return value, grad

    theta0 = np.concatenate([[1.0], np.zeros(len(idx))])
    res = minimize(loss, theta0, jac=True, method="L-BFGS-B", bounds=[(1e-3, None)] + [(None, None)] * len(idx))
    w = res.x[0] * prior.astype(np.float64)
    w[idx] += res.x[1:]
    return w.astype(np.float32)


def loco(collections: dict[str, Sequence[Pool]], prior: np.ndarray, choices: dict[str, dict],
         free: Sequence[str] = PASSAGE_FREE) -> dict:
    """Leave-one-collection-out: for each choice (``{"strength": s, "section_weight": l}``, optionally ``"free"``:
    the features it may move, default ``free``) and each collection,
    fit on all the others and score Hit@1 on the held-out one; per choice the held-out change against the prior
    (mean over the three granularities), its worst and mean over collections. The choice with the best worst
    held-out change is chosen (ties: the better mean), so a weight that pays on some collections and costs on
    another loses to one that costs nowhere."""
    base = {name: hit1(pools, prior) for name, pools in collections.items()}
    table: dict[str, dict] = {}
    for label, ch in choices.items():
        held: dict[str, dict] = {}
        for name, pools in collections.items():
            others = [p for n, p in collections.items() if n != name]
            w = fit_listwise(others, prior, ch["strength"], ch.get("free", free), ch.get("section_weight", 0.0))
            h = hit1(pools, w)
            held[name] = {**h, "change": round(float(np.mean([h[g] - base[name][g] for g in GRANULARITIES])), 4)}
        changes = [v["change"] for v in held.values()]
        table[label] = {"held_out": held, "worst_change": round(min(changes), 4),
                        "mean_change": round(float(np.mean(changes)), 4)}
    chosen = max(table, key=lambda k: (table[k]["worst_change"], table[k]["mean_change"]))
    return {"prior_hit1": base, "choices": table, "chosen": chosen, "rule": "best worst held-out change"}
