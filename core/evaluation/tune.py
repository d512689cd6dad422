"""Re-deriving the hand-set choices on ConditionalQA's TUNE half (never the test half): the decision model's prior
weights per level and the hybrid baseline's lexical weight.

``shelfwise eval conditionalqa --split tune --fit-prior`` runs this and writes ``prior-fit-tune.json``; the weights
in ``core/navigation/decision.py`` and ``RRF``/hybrid constants in ``core/evaluation/retrieval.py`` are copied from
that file (their comments say so). The walk is run on every tune question with its gold evidence forced open, so
every level yields candidates with features and labels (the same rows self-calibration collects from probes), and
one logistic model per level kind is fitted toward the current prior with the strength that ranks best on
held-out tune questions (3 folds by question).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from shelfwise.core.evaluation.datasets import EvalQuestion
from shelfwise.core.evaluation.retrieval import Methods, judge
from shelfwise.core.navigation.calibrate import STRENGTHS, Probe, _fit, _mrr, _split, collect
from shelfwise.core.navigation.decision import LEVEL_KINDS, DecisionModel
from shelfwise.core.navigation.features import FEATURES
from shelfwise.core.navigation.navigator import Navigator

HYBRID_WEIGHTS = (0.0, 0.05, 0.1, 0.15, 0.25, 0.35, 0.5, 0.75, 1.0)


def gold_probes(m: Methods, questions: Sequence[EvalQuestion]) -> list[Probe]:
    """A labelled question as a probe: its gold passages (by document and content item) as node ids."""
    by_key: dict[tuple[str, int | None], int] = {}
    for pid in m.snap.passage_ids:
        n = m.snap.nodes[int(pid)]
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
                train, test = _split(r, fold, 3)
                fitted = _fit(train, True, kind=kind, strength=s)
                if fitted is not None and test:
                    scores.append(_mrr(fitted, test, True))
            if scores:
                cv["prior" if np.isinf(s) else f"l2={s:g}"] = round(float(np.mean(scores)), 4)
        best = max(cv, key=lambda k: cv[k])
        strength = float("inf") if best == "prior" else float(best.split("=")[1])
        fitted = _fit(r, True, kind=kind, strength=strength)
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
