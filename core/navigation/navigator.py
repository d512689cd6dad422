"""Navigation: DecisionRAG's Algorithm 1 over the collection tree.

Level by level from the collection root: score every candidate of the level in one pass with the decision model,
keep the best (the first level keeps a ratio, leaning to recall; later levels keep ``k``), expand only the kept
ones, and at the last level score the passages beneath the kept branches (plus, optionally, the dense and lexical
top passages of the whole collection: the paper's hybrid configuration), returning the top ``r`` in rank order with
a trace of every level.

Which readout scores a level is configuration (``Settings.readout``):
- ``fused`` (default): the calibrated decision model over embedder, lexical and tree evidence, plus the generative
  model's query likelihood on the top few candidates of the levels where calibration found it pays;
- ``embedding``: the same without the generative model (no tokens evaluated);
- ``likelihood``: the generative model's query likelihood alone, on every candidate;
- ``binary``: zero-shot Yes/No over a shared listing (for instruction-tuned models).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from shelfwise.core.languages import is_question
from shelfwise.core.models.backend import (
    CancelCheck,
    Cancelled,
    Cost,
    DecisionBackend,
    Embedder,
    RelevanceJudge,
    Scores,
)
from shelfwise.core.navigation.decision import DecisionModel, LevelModel
from shelfwise.core.navigation.features import (
    FEATURES,
    QueryEvidence,
    WordsOnly,
    level_features,
    scan_ahead,
    set_judge,
    set_lm,
    words_only,
)
from shelfwise.core.navigation.parallel import (
    pool_likelihoods,
    pool_scores,
    request_concurrency,
    score_requests,
)
from shelfwise.core.navigation.readout_prompts import (
    binary_prompt,
    candidate_text,
    judge_text,
    likelihood_context,
    likelihood_query,
)
from shelfwise.core.navigation.request import SearchRequest
from shelfwise.core.navigation.scope import ResolvedScope
from shelfwise.core.navigation.snapshots import load_decision, snapshot_for
from shelfwise.core.navigation.trace import Candidate, Hit, Level, SearchResult, Trace
from shelfwise.core.settings import Budgets, Settings
from shelfwise.core.store.db import Store
from shelfwise.core.store.snapshot import NodeInfo, Snapshot
from shelfwise.ingest.model import PIPE_RULE, pipe_cells

LABELS = {"cluster": "topics", "document": "documents", "section": "sections", "passage": "passages"}
FLATTEN_LIMIT = 64  # a document with at most this many sections shows them all in one level
LM_TOP = 6  # candidates of a level the generative readout re-reads in the fused readout (best by the decision model)


@dataclass
class Scored:
    node: NodeInfo
    p: float
    logit: float
    features: np.ndarray
    rank_score: float  # the prior-scale score a child level reads as ``parent`` (see LevelModel.ranking_score)
    source: str = "tree"
    judged: bool = False  # the relevance judge read it (its logit is then in the features, even when 0)


class Navigator:
    def __init__(
        self,
        store: Store,
        backend: DecisionBackend | None,
        embedder: Embedder,
        settings: Settings | None = None,
        *,
        decision: DecisionModel | None = None,
        judge: RelevanceJudge | None = None,
    ) -> None:
        self.store = store
        self.backend = backend
        self.embedder = embedder
        self.settings = settings or Settings()
        self.decision = decision
        self.judge = judge  # the relevance judge, read at the levels Settings.judge_levels names

    # -- public -------------------------------------------------------------------------------------------------
    def navigate(self, request: SearchRequest, cancel: CancelCheck | None = None) -> SearchResult:
        """Walk for ``request`` (:mod:`shelfwise.core.navigation.request`: its question already read and clipped).
        Its ``scope`` (``core/navigation/scope.py``) limits the walk to its documents before it starts: branches
        outside it are never judged, and no dense or lexical candidate from outside it is added. Its ``prior``
        (node id -> a logit added to that branch wherever it is judged: a conversation's earlier branches,
        :mod:`shelfwise.core.conversation.reading`) leaves a level still ranking on its evidence first."""
        t0 = time.perf_counter()
        query, scope = request.question, request.scope
        coll = self.store.collection(request.collection or "default")
        snap = snapshot_for(self.store, coll.id, self.embedder.model_id)
        decision = self.decision or load_decision(self.store, coll.id, self.embedder, self.backend)
        ev = self.evidence(snap, query, coll.id, request.q_vec, scope=scope)
        allowed = scope.allowed_nodes(snap) if scope is not None else None
        result = self.walk(snap, decision, ev, query, keep=set(request.keep), cancel=cancel, t0=t0, allowed=allowed,
                           prior=request.prior)
        if scope is not None:
            result.trace.scope = scope.label()
        result.trace.notes.extend(request.notes)
        result.trace.notes.extend(lean_notes(self.words_only(snap), self.embedder, len(snap.passage_ids)))
        return result

    def evidence(self, snap: Snapshot, query: str, collection_id: int, q_vec: np.ndarray | None = None,
                 lexical_limit: int = 200, scope: ResolvedScope | None = None) -> QueryEvidence:
        if q_vec is None:
            q_vec = self.embedder.embed_query(query)
        question = question_part(query)
        question_vec = self.embedder.embed_query(question) if question else None
        scanned = scan_ahead(snap, q_vec, question_vec)  # the cosines computed while the words are ranked
        docs = scope.document_ids if scope is not None and scope.restricted else None
        try:
            lexical = {nid: s for nid, s in self.store.search_ids(query, limit=lexical_limit, kinds=("passage",),
                                                                  collection_id=collection_id, document_ids=docs,
                                                                  match=scope.lexical if scope is not None else None)
                       if scope is None or nid not in scope.excluded_passages}
        finally:
            scanned()
        return QueryEvidence.build(snap, q_vec, lexical, question_vec, self.words_only(snap))

    def words_only(self, snap: Snapshot) -> WordsOnly | None:
        """The documents whose language the encoder does not read and the passages with no vector yet (they are
        judged by their words)."""
        profile = self.embedder.profile
        return words_only(snap, profile.languages if profile is not None else None)

    # -- the walk -----------------------------------------------------------------------------------------------
    def walk(
        self, snap: Snapshot, decision: DecisionModel, ev: QueryEvidence, query: str, *, keep: set[int],
        cancel: CancelCheck | None, t0: float, allowed: set[int] | None = None,
        prior: Mapping[int, float] | None = None,
    ) -> SearchResult:
        """``allowed``: the only node ids the walk may judge (a scope's), None for all."""
        budgets = self.settings.budgets
        trace = Trace(query=query, readout=self.settings.readout, calibration=decision.ranking_note(),
                      judge=self.judge.model_id if self.judge is not None else "",
                      encoder=f"{self.embedder.model_id}, {self.embedder.ran}")
        frontier = [snap.nodes[snap.root]]
        flattened: set[int] = set()
        pool: dict[int, NodeInfo] = {}
        parent_logit: dict[int, float] = {}
        depth = 0
        forced = _with_ancestors(snap, keep)
        while frontier:
            if cancel and cancel():
                raise Cancelled("query cancelled")
            cands: list[NodeInfo] = []
            for node in frontier:
                containers, passages = self._expand(snap, node, flattened)
                if allowed is not None:
                    containers = [c for c in containers if c.id in allowed]
                    passages = [p for p in passages if p.id in allowed]
                cands.extend(containers)
                for p in passages:
                    pool[p.id] = p
            if not cands:
                break
            depth += 1
            kind = _dominant_kind(cands)
            scored, cost = self._score_level(snap, decision, ev, query, cands, kind, parent_logit, cancel)
            _prefer(scored, prior)
            n_keep = self._keep_count(decision, budgets, kind, len(cands), depth == 1)
            order = sorted(range(len(scored)), key=lambda i: -scored[i].p)
            kept_idx = set(order[:n_keep]) | {i for i, s in enumerate(scored) if s.node.id in forced}
            level = Level(depth=depth, label=LABELS.get(kind, kind), candidates=[], requests=cost.requests,
                          tokens=cost.tokens, seconds=cost.seconds, judged=cost.judged)
            frontier = []
            for i in order:
                s = scored[i]
                kept = i in kept_idx
                level.candidates.append(self._candidate(s, kept, decision.model(kind)))
                parent_logit[s.node.id] = s.rank_score
                if kept:
                    frontier.append(s.node)
            trace.levels.append(level)
        # last level: passages under the kept branches, plus hybrid candidates from the whole collection
        if cancel and cancel():
            raise Cancelled("query cancelled")
        sources = self._add_hybrid(snap, ev, pool, budgets.hybrid, allowed)
        passages = list(pool.values())
        depth += 1
        snap.nodes.many(list({p.parent for p in passages if p.parent is not None}))  # read in one statement
        for p in passages:  # ancestors never judged in the walk get their own calibrated logit, not a guess
            if p.parent is not None and p.parent not in parent_logit:
                parent_logit[p.parent] = self._offline_logit(snap, decision, ev, snap.nodes[p.parent])
        scored, cost = self._score_level(snap, decision, ev, query, passages, "passage", parent_logit, cancel)
        _prefer(scored, prior)
        for s in scored:
            s.source = sources.get(s.node.id, "tree")
        order = sorted(range(len(scored)), key=lambda i: -scored[i].p)
        r = budgets.passages
        level = Level(depth=depth, label="passages", candidates=[], requests=cost.requests, tokens=cost.tokens,
                      seconds=cost.seconds, judged=cost.judged)
        for rank, i in enumerate(order):
            level.candidates.append(self._candidate(scored[i], rank < r, decision.model("passage")))
        trace.levels.append(level)
        hits = self._hits(snap, [scored[i] for i in order[:r]])
        trace.seconds = time.perf_counter() - t0
        return SearchResult(query=query, hits=hits, trace=trace)

    # -- pieces -------------------------------------------------------------------------------------------------
    def _add_hybrid(self, snap: Snapshot, ev: QueryEvidence, pool: dict[int, NodeInfo], hybrid: int,
                    allowed: set[int] | None) -> dict[int, str]:
        """Adds the ``hybrid`` candidates from the whole collection to the last level's ``pool`` (the passages under
        the kept branches); returns where each passage of the pool came from ("tree" or the hybrid's source)."""
        sources = {pid: "tree" for pid in pool}
        if hybrid > 0:
            extra = [(pid, source) for pid, source in self._hybrid(snap, ev, hybrid, allowed) if pid not in pool]
            for (pid, source), node in zip(extra, snap.nodes.many([pid for pid, _ in extra]), strict=True):
                if pid not in pool:
                    pool[pid] = node
                    sources[pid] = source
        return sources

    def _expand(self, snap: Snapshot, node: NodeInfo, flattened: set[int]) -> tuple[list[NodeInfo], list[NodeInfo]]:
        """Containers to judge next, and passages that go straight to the last level."""
        children = snap.children(node.id)
        passages = [c for c in children if c.kind == "passage"]
        if node.id in flattened:  # its subsections were already judged beside it
            return [], passages
        containers = [c for c in children if c.kind != "passage"]
        if node.kind in ("document", "section") and containers:
            every = _descendant_sections(snap, node)
            if len(every) <= FLATTEN_LIMIT:
                flattened.update(s.id for s in every)
                return every, passages
        return containers, passages

    def _keep_count(self, decision: DecisionModel, budgets: Budgets, kind: str, n: int, first: bool) -> int:
        if first:
            ratio = decision.first_keep_ratio if decision.first_keep_ratio is not None else budgets.first_keep_ratio
            return max(1, min(n, math.ceil(ratio * n)))
        k = decision.keep.get(kind, budgets.keep)
        return max(1, min(n, k))

    def _score_level(
        self, snap: Snapshot, decision: DecisionModel, ev: QueryEvidence, query: str, cands: list[NodeInfo],
        kind: str, parent_logit: dict[int, float], cancel: CancelCheck | None,
    ) -> tuple[list[Scored], Cost]:
        t = time.perf_counter()
        x = level_features(snap, ev, cands, parent_logit)
        model = decision.model(kind)
        cost = Cost()
        readout = self.settings.readout
        read: list[int] = []
        if readout == "fused" and kind in decision.lm_levels and self.backend is not None and len(cands) > 1:
            pre = model.logits(x)
            top = [int(i) for i in np.argsort(-pre)[:LM_TOP]]
            lm, c = self._likelihood(snap, query, [cands[i] for i in top], cancel)
            set_lm(x, top, lm)
            cost.add(c)
        if self.judge is not None and kind in self.settings.judge_levels and readout in ("fused", "embedding") \
                and len(cands) > 1:
            read, c = self._judge(snap, query, cands, x, model.logits(x), cancel)
            cost.add(c)
        if readout in ("likelihood", "binary") and self.backend is not None:
            if readout == "likelihood":
                lm, c = self._likelihood(snap, query, cands, cancel)
                set_lm(x, list(range(len(cands))), lm)
                zl = x[:, FEATURES.index("z_lm")]
                logits = zl.astype(np.float32)
            else:
                probs, c = self._binary(snap, query, cands, cancel)
                x[:, FEATURES.index("lm")] = probs
                logits = np.log(np.clip(probs, 1e-6, 1)) - np.log(np.clip(1 - probs, 1e-6, 1))
            cost.add(c)
            p = 1 / (1 + np.exp(-logits))
            ranks = logits
        else:
            logits = model.logits(x)
            p = model.proba(x)
            ranks = model.ranking_score(x)
        cost.seconds = time.perf_counter() - t
        was_read = set(read)
        return [Scored(c, float(p[i]), float(logits[i]), x[i], float(ranks[i]), judged=i in was_read)
                for i, c in enumerate(cands)], cost

    def _judge(self, snap: Snapshot, query: str, cands: list[NodeInfo], x: np.ndarray, pre: np.ndarray,
               cancel: CancelCheck | None) -> tuple[list[int], Cost]:
        """The judge reads the ``judge_top`` candidates the other evidence ranks highest (one batch of pairs)."""
        assert self.judge is not None
        if cancel and cancel():
            raise Cancelled("query cancelled")
        t = time.perf_counter()
        top = [int(i) for i in np.argsort(-pre, kind="stable")[: self.settings.judge_top]]
        texts = [judge_text(snap, cands[i]) for i in top]
        logits = self.judge.score(judge_query(self.judge, query), texts)
        set_judge(x, top, [float(v) for v in logits])
        return top, Cost(seconds=time.perf_counter() - t, judged=len(top))

    def _likelihood(self, snap: Snapshot, query: str, cands: list[NodeInfo],
                    cancel: CancelCheck | None) -> tuple[list[float], Cost]:
        """Query likelihood per candidate; a level larger than one request is split, and the requests run
        concurrently where the backend can (a server pool), pooled in input order either way."""
        assert self.backend is not None
        backend = self.backend
        texts = [candidate_text(snap, c) for c in cands]
        size = self.settings.budgets.request_size
        chunks = [texts[i:i + size] for i in range(0, len(texts), size)]
        q = likelihood_query(question_part(query) or query)
        res = pool_likelihoods(score_requests(
            lambda ch: backend.likelihood(likelihood_context(), ch, q, cancel=cancel), chunks,
            request_concurrency(backend)))
        return list(res.mean), res.cost

    def _binary(self, snap: Snapshot, query: str, cands: list[NodeInfo],
                cancel: CancelCheck | None) -> tuple[np.ndarray, Cost]:
        assert self.backend is not None
        backend = self.backend
        size = self.settings.budgets.request_size
        chunks = [[candidate_text(snap, c) for c in cands[i:i + size]] for i in range(0, len(cands), size)]

        def one(texts: list[str]) -> Scores:
            context, questions = binary_prompt(query, texts)
            return backend.binary(context, questions, cancel=cancel)

        res = pool_scores(score_requests(one, chunks, request_concurrency(backend)))
        return np.asarray(res.values, np.float32), res.cost

    def _offline_logit(self, snap: Snapshot, decision: DecisionModel, ev: QueryEvidence, node: NodeInfo) -> float:
        kind = node.kind if node.kind in ("section", "document", "cluster") else "section"
        x = level_features(snap, ev, [node])
        return float(decision.model(kind).ranking_score(x)[0])

    def _hybrid(self, snap: Snapshot, ev: QueryEvidence, n: int,
                allowed: set[int] | None = None) -> list[tuple[int, str]]:
        """The dense and the lexical top ``n`` passages of the whole collection (of the ``allowed`` nodes only,
        when given), tagged with where they came from."""
        out: list[tuple[int, str]] = []
        rows = np.arange(len(snap.passage_ids))
        if allowed is not None:
            rows = np.nonzero(np.isin(snap.passage_ids, np.fromiter(allowed, np.int64, len(allowed))))[0]
        if len(ev.cos) and len(rows):
            out.extend((int(snap.passage_ids[i]), "dense") for i in rows[_top(ev.cos[rows], n)])
        lex_rows = rows[np.nonzero(ev.lex[rows])[0]] if len(rows) else rows
        if len(lex_rows):
            out.extend((int(snap.passage_ids[i]), "lexical") for i in lex_rows[_top(ev.lex[lex_rows], n)])
        return out

    def _candidate(self, s: Scored, kept: bool, model: LevelModel) -> Candidate:
        feats = {f: round(v, 4) for f, v in zip(FEATURES, s.features.tolist(), strict=True)
                 if v != 0 or (s.judged and f == "judge")}
        return Candidate(
            node_id=s.node.id, kind=s.node.kind, title=_title(s.node),
            description=s.node.description or s.node.text[:200],
            score=round(s.p, 4), kept=kept, parent_id=s.node.parent, features=feats, source=s.source,
        )

    def _hits(self, snap: Snapshot, scored: list[Scored]) -> list[Hit]:
        # the hits' documents only, not every document of the collection
        docs = {d.id: d for d in (self.store.document(i) for i in sorted({s.node.document_id or -1 for s in scored}))
                if d is not None and d.collection_id == snap_collection(snap)}
        hits = []
        for s in scored:
            n = s.node
            d = docs.get(n.document_id or -1)
            hits.append(Hit(
                node_id=n.id, document_id=n.document_id or 0, text=n.text, score=round(s.p, 4),
                path=d.path if d else "", title=d.title if d else "", heading_path=n.heading_path,
                location=n.location,
            ))
        return hits


def _top(values: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` largest values, largest first (ties in index order, as a stable sort gives them), without
    sorting the whole array."""
    if len(values) > n:
        part = np.argpartition(-values, n - 1)[:n]
        cut = values[part].min()
        part = np.flatnonzero(values >= cut)  # every tie at the cut, so the stable order below decides as before
        return part[np.argsort(-values[part], kind="stable")][:n]
    return np.argsort(-values, kind="stable")[:n]


def _prefer(scored: list[Scored], prior: Mapping[int, float] | None) -> None:
    """Add each preferred branch's logit to its score (the candidate's features keep the evidence alone)."""
    if not prior:
        return
    for s in scored:
        bonus = prior.get(s.node.id)
        if bonus:
            s.logit += bonus
            s.p = float(1 / (1 + math.exp(-max(-30.0, min(30.0, s.logit)))))


_SENTENCE_END = re.compile(r"(?<=[.!?\u0964\u0965\u061f\u06d4\u1362\u104b\u17d4])\s+|(?<=[\u3002\uff01\uff1f])")


def question_part(query: str) -> str | None:
    """The question sentence of a query that has context before it (its last sentence ending in '?', else its
    last sentence), or None for a one-sentence query. Scored beside the whole query: context sentences describe
    the asker's situation and dilute the embedding of what is asked."""
    sentences = [s.strip() for s in _SENTENCE_END.split(query.strip()) if s.strip()]
    if len(sentences) < 2:
        return None
    asked = [s for s in sentences if is_question(s)]
    return asked[-1] if asked else sentences[-1]


def judge_query(judge: RelevanceJudge, query: str) -> str:
    """What the relevance judge reads of a query: the whole of it for a judge trained on situations with their
    question (``whole_query``), else the question sentence (the first judge was trained on questions alone)."""
    return query if judge.whole_query else (question_part(query) or query)


def snap_collection(snap: Snapshot) -> int:
    return snap.collection_id


def _title(node: NodeInfo) -> str:
    if node.kind == "passage":
        text = _table_words(node.text) or " ".join(node.text.split())
        return text[:90] + ("..." if len(text) > 90 else "")
    return node.title or "(untitled)"


def _table_words(text: str) -> str:
    """A passage of table rows (Markdown pipe lines, as a sheet's or a document's table is stored) as a reader would
    say it: each row's cells ("2026-01-01, Thursday, New Year's Day; 2026-04-03, ..."), which tell one passage of a
    table from the next (its column names, the same in each, are its section's title); "" for a passage that is
    not one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines or not all(line.startswith("|") for line in lines):
        return ""
    rows = [pipe_cells(line) for line in lines if not PIPE_RULE.match(line)]  # not the |---| under a header
    if len(rows) < 2:
        return ""
    return "; ".join(", ".join(c for c in r if c) for r in rows[1:])


def lean_notes(lean: WordsOnly | None, embedder: Embedder, passages: int) -> list[str]:
    """What the trace says about the passages judged by their words (:func:`words_only`)."""
    if lean is None:
        return []
    notes = []
    if lean.documents:
        profile = embedder.profile
        encoder = profile.name if profile is not None else "this one"
        notes.append(f"{lean.documents} document(s) in {', '.join(lean.languages)}, which the sentence encoder "
                     f"({encoder}) does not read: their passages were judged by their words (BM25).")
    if lean.unembedded:
        notes.append(f"{lean.unembedded:,} of {passages:,} passages have no vector yet (the index is not finished): "
                     "they were judged by their words (BM25).")
    return notes


def _with_ancestors(snap: Snapshot, keep: set[int]) -> set[int]:
    """The nodes a walk must keep: ``keep`` and their ancestors (forcing a node forces its ancestors too)."""
    forced = set(keep)
    for n in list(forced):
        if n in snap.nodes:
            forced.update(a.id for a in snap.ancestors(n))
    return forced


def _dominant_kind(cands: list[NodeInfo]) -> str:
    kinds = [c.kind for c in cands]
    for k in ("cluster", "document", "section"):
        if kinds.count(k) * 2 >= len(kinds):
            return k
    return max(set(kinds), key=kinds.count)


def _descendant_sections(snap: Snapshot, node: NodeInfo) -> list[NodeInfo]:
    """The sections beneath ``node`` in reading order (stopping past FLATTEN_LIMIT). Which children are sections
    is read from the snapshot's arrays, so only the sections' rows are read, not their passages' (at 10^6 passages
    four documents of 32 sections of 32 passages: 4,096 rows a question, a fifth of its time)."""

    def sections(node_id: int) -> list[NodeInfo]:
        return snap.nodes.many(snap.child_ids_of_kind(node_id, "section"))

    out: list[NodeInfo] = []
    stack = list(reversed(sections(node.id)))
    while stack:
        s = stack.pop()
        out.append(s)
        if len(out) > FLATTEN_LIMIT:
            break
        stack.extend(reversed(sections(s.id)))
    return out
