"""The evaluation harness: navigation against the baselines a user would otherwise pick, in one run.

Methods (each returns a ranked passage list per question, with its cost):
- ``bm25``: SQLite FTS5 BM25 over the same passages;
- ``dense``: the bundled embedder's cosine over the same passages;
- ``hybrid``: dense + BM25 over the whole collection, z-scores summed with the embedder weighted 4x (the
  strongest flat combination in the engine issue's measurements; what a user of a hybrid search engine gets);
- ``rrf``: reciprocal rank fusion of the dense and BM25 rankings (score = sum of 1 / (60 + rank); the constant 60 is
  the one published with the method, nothing tuned here);
- ``rerank_control``: the decision model scoring the dense top-100 passages exactly as navigation's last level
  scores passages (the paper's central control: same model and readout, no tree; with the judge when it is on);
- ``rerank_judge``: the relevance judge alone reordering the dense top-100 (needs a judge);
- ``navigation`` (the configured readout, ``fused`` by default) and ``navigation_<readout>`` variants.
Metrics at three granularities (document, section = heading path, passage = content item): Hit@1, Recall@5,
Recall@10, MRR; per query seconds, requests and tokens evaluated.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypedDict, Unpack

import numpy as np

from shelfwise.core.models.backend import Cost, DecisionBackend, Embedder, RelevanceJudge
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.features import QueryEvidence
from shelfwise.core.navigation.navigator import Navigator, judge_query
from shelfwise.core.navigation.readout_prompts import judge_text
from shelfwise.core.settings import Readout, Settings, as_readout
from shelfwise.core.store.db import Store
from shelfwise.core.store.snapshot import NodeInfo, Snapshot
from shelfwise.evaluation.datasets import EvalQuestion


class BudgetChanges(TypedDict, total=False):
    """Fields of :class:`~shelfwise.core.settings.Budgets` one evaluated walk overrides."""

    first_keep_ratio: float
    keep: int
    passages: int
    request_size: int
    hybrid: int
    branching: int


@dataclass
class Ranked:
    """One method's answer to one question: passage node ids, best first, and what it cost."""

    passages: list[int]
    seconds: float
    cost: Cost = field(default_factory=Cost)


@dataclass
class MethodResult:
    name: str
    metrics: dict[str, float]
    per_query: list[dict] = field(default_factory=list)


def _unit_keys(snap: Snapshot, pid: int, doc_path: dict[int, str]) -> tuple[str, tuple[str, ...], int | None]:
    n = snap.nodes[pid]
    return doc_path.get(n.document_id or -1, ""), tuple(n.heading_path), n.location.line


def judge(snap: Snapshot, doc_path: dict[int, str], q: EvalQuestion, ranked: Sequence[int]) -> dict[str, float]:
    """Hit@1 / Recall@5 / Recall@10 / MRR at passage, section and document level for one ranked passage list."""
    gold_docs = {g.path for g in q.gold}
    gold_secs = {(g.path, g.heading_path) for g in q.gold}
    out: dict[str, float] = {}

    def same_doc(path: str, gold_path: str) -> bool:  # user sets name files; eval sets give full ids
        return path == gold_path or path.endswith("/" + gold_path)

    def section_ok(path: str, heads: tuple[str, ...], pid: int) -> str | None:
        for g in q.gold:
            if not same_doc(path, g.path):
                continue
            if heads == g.heading_path or (len(g.heading_path) == 1 and g.heading_path[0] in heads):
                return f"{g.path}{g.heading_path}"
        hit = passage_ok(pid)  # the section holding a gold passage is a gold section
        return f"{hit}:{heads}" if hit else None

    def passage_ok(pid: int) -> str | None:
        path, _heads, item = _unit_keys(snap, pid, doc_path)
        for g in q.gold:
            if not same_doc(path, g.path):
                continue
            if g.item is not None:
                if item == g.item:
                    return f"{g.path}#{g.item}"
            elif g.text:
                if g.text.lower()[:80] in snap.nodes[pid].text.lower():
                    return f"{g.path}#{g.text[:40]}"
            else:
                return g.path
        return None

    n_gold_passages = len({(g.path, g.item, g.text[:40] if g.item is None else "") for g in q.gold})
    levels: dict[str, list[str | None]] = {"passage": [], "section": [], "document": []}
    seen_sec: list = []
    seen_doc: list = []
    for pid in ranked:
        levels["passage"].append(passage_ok(pid))
        path, heads, _ = _unit_keys(snap, pid, doc_path)
        if (path, heads) not in seen_sec:
            seen_sec.append((path, heads))
            levels["section"].append(section_ok(path, heads, pid))
        if path not in seen_doc:
            seen_doc.append(path)
            levels["document"].append(path if any(same_doc(path, g) for g in gold_docs) else None)
    totals = {"passage": n_gold_passages, "section": len(gold_secs), "document": len(gold_docs)}
    for level, marks in levels.items():
        first = next((i for i, m in enumerate(marks) if m), None)
        out[f"{level}_hit1"] = 1.0 if first == 0 else 0.0
        out[f"{level}_mrr"] = 1.0 / (first + 1) if first is not None else 0.0
        for k in (5, 10):
            found = {m for m in marks[:k] if m}
            out[f"{level}_recall{k}"] = min(1.0, len(found) / max(1, totals[level]))
    return out


RRF_K = 60


class Methods:
    """Runs every method on one collection; shares the query vectors and lexical hits between them."""

    def __init__(self, store: Store, collection_id: int, snap: Snapshot, embedder: Embedder,
                 backend: DecisionBackend | None,
                 settings: Settings, decision: DecisionModel, judge: RelevanceJudge | None = None) -> None:
        self.store, self.collection_id, self.snap = store, collection_id, snap
        self.embedder, self.backend, self.settings, self.decision = embedder, backend, settings, decision
        self.judge = judge
        self.doc_path = {d.id: d.path for d in store.documents(collection_id)}

    def navigator(self, readout: Readout, **budget_changes: Unpack[BudgetChanges]) -> Navigator:
        budgets = replace(self.settings.budgets, **budget_changes)
        s = replace(self.settings, readout=readout, budgets=budgets)
        return Navigator(self.store, self.backend, self.embedder, s, decision=self.decision, judge=self.judge)

    def bm25(self, query: str, q_vec: np.ndarray) -> Ranked:
        t = time.perf_counter()
        hits = self.store.search_ids(query, limit=100, kinds=("passage",), collection_id=self.collection_id)
        return Ranked([nid for nid, _ in hits], time.perf_counter() - t)

    def dense(self, query: str, q_vec: np.ndarray, n: int = 100) -> Ranked:
        t = time.perf_counter()
        cos = self.snap.passage_cos(q_vec)
        top = np.argsort(-cos)[:n]
        return Ranked([int(self.snap.passage_ids[i]) for i in top], time.perf_counter() - t)

    def hybrid(self, query: str, q_vec: np.ndarray, n: int = 100, lexical_weight: float = 0.25) -> Ranked:
        t = time.perf_counter()
        lexical = dict(self.store.search_ids(query, limit=200, kinds=("passage",), collection_id=self.collection_id))
        ev = QueryEvidence.build(self.snap, q_vec, lexical)  # the z-scores navigation's passage level uses
        fused = ev.global_z(ev.cos, "cos") + lexical_weight * ev.global_z(ev.lex, "lex")
        top = np.argsort(-fused)[:n]
        return Ranked([int(self.snap.passage_ids[i]) for i in top], time.perf_counter() - t)

    def rrf(self, query: str, q_vec: np.ndarray, n: int = 100, k: int = RRF_K) -> Ranked:
        """Reciprocal rank fusion of dense and BM25 (Cormack et al. 2009): parameter-free, the usual hybrid."""
        t = time.perf_counter()
        lexical = [nid for nid, _ in self.store.search_ids(query, limit=200, kinds=("passage",),
                                                            collection_id=self.collection_id)]
        cos = self.snap.passage_cos(q_vec)
        dense = [int(self.snap.passage_ids[i]) for i in np.argsort(-cos)[:200]]
        fused: dict[int, float] = {}
        for ranking in (dense, lexical):
            for rank, pid in enumerate(ranking, start=1):
                fused[pid] = fused.get(pid, 0.0) + 1.0 / (k + rank)
        top = sorted(fused, key=lambda pid: -fused[pid])[:n]
        return Ranked(top, time.perf_counter() - t)

    def rerank_control(self, query: str, q_vec: np.ndarray) -> Ranked:
        """Dense top-100, scored by navigation's last-level scorer (same features, model and readout)."""
        t = time.perf_counter()
        nav = self.navigator(self.settings.readout)
        ev = nav.evidence(self.snap, query, self.collection_id, q_vec)
        cands: list[NodeInfo] = self.snap.nodes.many(self.dense(query, q_vec).passages)
        parent_logit = {c.parent: nav._offline_logit(self.snap, self.decision, ev, self.snap.nodes[c.parent])
                        for c in cands if c.parent is not None}
        scored, cost = nav._score_level(self.snap, self.decision, ev, query, cands, "passage", parent_logit, None)
        order = sorted(range(len(scored)), key=lambda i: -scored[i].p)
        return Ranked([scored[i].node.id for i in order], time.perf_counter() - t, cost)

    def rerank_judge(self, query: str, q_vec: np.ndarray, n: int = 100) -> Ranked:
        """Dense top-``n`` reordered by the relevance judge alone (the texts it reads in the walk)."""
        if self.judge is None:
            raise ValueError("rerank_judge needs a relevance judge (--judge)")
        t = time.perf_counter()
        pids = self.dense(query, q_vec, n).passages
        asked = judge_query(self.judge, query)  # what the judge reads in the walk too
        logits = self.judge.score(asked, [judge_text(self.snap, self.snap.nodes[p]) for p in pids])
        order = np.argsort(-np.asarray(logits), kind="stable")
        return Ranked([pids[i] for i in order], time.perf_counter() - t, Cost(judged=len(pids)))

    def navigation(self, query: str, q_vec: np.ndarray, readout: Readout | None = None, sweep: bool = False,
                   **budget_changes: Unpack[BudgetChanges]) -> Ranked:
        """One walk. ``sweep=True`` lets ``budget_changes`` override the calibrated first-level keep ratio."""
        t = time.perf_counter()
        nav = self.navigator(readout or self.settings.readout, **budget_changes)
        decision = replace(self.decision, first_keep_ratio=None) if sweep else self.decision
        ev = nav.evidence(self.snap, query, self.collection_id, q_vec)
        res = nav.walk(self.snap, decision, ev, query, keep=set(), cancel=None, t0=t)
        cost = Cost(requests=res.trace.requests, tokens=res.trace.tokens, judged=res.trace.judged)
        return Ranked([h.node_id for h in res.hits], time.perf_counter() - t, cost)


def run_methods(
    methods: Methods, questions: Sequence[EvalQuestion], names: Sequence[str], q_vecs: np.ndarray,
    progress: Callable[[int, int, str], None] | None = None,
) -> dict[str, MethodResult]:
    results: dict[str, MethodResult] = {}
    total = len(names) * len(questions)
    done = 0
    for name in names:
        per_query = []
        for q, vec in zip(questions, q_vecs, strict=True):
            if name == "bm25":
                r = methods.bm25(q.query, vec)
            elif name == "dense":
                r = methods.dense(q.query, vec)
            elif name == "hybrid":
                r = methods.hybrid(q.query, vec)
            elif name == "rrf":
                r = methods.rrf(q.query, vec)
            elif name == "rerank_control":
                r = methods.rerank_control(q.query, vec)
            elif name == "rerank_judge":
                r = methods.rerank_judge(q.query, vec)
            elif name == "navigation":
                r = methods.navigation(q.query, vec)
            elif name.startswith("navigation_"):
                r = methods.navigation(q.query, vec, readout=as_readout(name.split("_", 1)[1]))
            else:
                raise ValueError(f"unknown method {name!r}")
            m = judge(methods.snap, methods.doc_path, q, r.passages)
            per_query.append({"qid": q.qid, **m, "seconds": r.seconds, "tokens": r.cost.tokens,
                              "requests": r.cost.requests, "judged": r.cost.judged})
            done += 1
            if progress:
                progress(done, total, name)
        results[name] = MethodResult(name, summarise(per_query), per_query)
    return results


def summarise(per_query: list[dict]) -> dict[str, float]:
    if not per_query:
        return {}
    keys = [k for k in per_query[0] if k not in ("qid",)]
    out = {k: round(float(np.mean([p[k] for p in per_query])), 4) for k in keys}
    seconds = sorted(p["seconds"] for p in per_query)
    out["median_seconds"] = round(statistics.median(seconds), 4)
    out["p90_seconds"] = round(float(np.percentile(seconds, 90)), 4)
    out["tokens_per_query"] = round(float(np.mean([p["tokens"] for p in per_query])), 1)
    out["requests_per_query"] = round(float(np.mean([p["requests"] for p in per_query])), 2)
    out["judged_per_query"] = round(float(np.mean([p.get("judged", 0) for p in per_query])), 1)
    out["questions"] = len(per_query)
    return out
