"""Evidence per candidate: what the decision model combines into one P(relevant).

Per query, two vectorised passes over the snapshot give every node's evidence at once: the cosine of the query with
every passage (the bundled embedder) and the BM25 scores of the query's lexical hits (SQLite FTS5). A candidate's
features are then slices over its subtree (best passage below it, top-3 mean, lexical hits below it), the cosine of
its own description, its size, and z-scores within the level it competes in (so scales do not drift between
queries). The generative model's readout (query likelihood) and the relevance judge's logit are added by the
navigator where they are used (``set_lm``, ``set_judge``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from shelfwise.core.store.snapshot import NodeInfo, Snapshot

FEATURES = (
    "cos_desc", "cos_max", "cos_top3", "lex_max", "lex_hits", "z_cos_max", "z_cos_top3", "z_cos_desc",
    "z_lex_max", "rank_cos", "rank_lex", "log_size", "parent", "lm", "z_lm", "cos_q_max", "z_cos_q_max",
    "g_cos_max", "g_lex_max", "g_cos_nb", "judge", "z_judge",
)


@dataclass
class QueryEvidence:
    """Per-query arrays over the snapshot's passage rows."""

    q_vec: np.ndarray
    cos: np.ndarray  # (n_passages,)
    lex: np.ndarray  # (n_passages,) normalised BM25 in [0, 1] for lexical hits, 0 elsewhere
    node_cos: np.ndarray  # (n_node_vecs,)
    cos_q: np.ndarray | None = None  # (n_passages,) cosine with the question sentence alone, when the query has
    # context before its question (e.g. "I care for my mother 40 hours a week. Can I claim Carer's Allowance?")
    _stats: dict[str, tuple[float, float]] = field(default_factory=dict, repr=False)  # global_z's mean and sd

    @classmethod
    def build(cls, snap: Snapshot, q_vec: np.ndarray, lexical: dict[int, float],
              question_vec: np.ndarray | None = None, lean: WordsOnly | None = None) -> QueryEvidence:
        """``lean``: what is judged by its words (:func:`words_only` with the encoder's languages); its cosine is
        replaced by its BM25 evidence on the cosine's scale (:func:`lean_on_words`). Not given: the passages and
        nodes with no vector yet (``words_only(snap, None)``), so every caller's walk leans on words where an index
        run has not reached."""
        both = question_vec is not None and question_vec.shape == q_vec.shape
        cols = snap.passage_cos(scanned(q_vec, question_vec))
        cos = cols[:, 0] if both else cols
        node_cos = snap.node_cos(q_vec)
        lex = np.zeros(len(snap.passage_ids), dtype=np.float32)
        if lexical:
            best = max(lexical.values()) or 1.0
            for nid, s in lexical.items():
                row = snap.row_of.get(nid)
                if row is not None:
                    lex[row] = max(0.0, s) / best
        cos_q = cols[:, 1].astype(np.float32) if both and snap.dim == q_vec.shape[0] else None
        cos, node_cos = cos.astype(np.float32), node_cos.astype(np.float32)
        if lean is None:
            lean = words_only(snap, None)
        if lean is not None:
            cos, node_cos, cos_q = lean_on_words(lean, cos, node_cos, lex, cos_q)
        return cls(q_vec=q_vec, cos=cos, lex=lex, node_cos=node_cos, cos_q=cos_q)

    def global_z(self, values: np.ndarray, which: str) -> np.ndarray:
        """``values`` (a slice statistic of ``cos`` or ``lex``) as z-scores against every passage of the collection
        for this query: unlike the per-level z-scores, comparable across levels and across candidate pools."""
        stats = self._stats
        if which not in stats:
            arr = self.cos if which == "cos" else self.lex
            sd = float(arr.std()) if len(arr) else 1.0
            stats[which] = (float(arr.mean()) if len(arr) else 0.0, sd if sd > 1e-6 else 1.0)
        mean, sd = stats[which]
        return ((values - mean) / sd).astype(np.float32)


def scanned(q_vec: np.ndarray, question_vec: np.ndarray | None) -> np.ndarray:
    """What :meth:`QueryEvidence.build` scans the passages with: the query vector, or the query's and its question
    sentence's as two columns (one pass over the vectors for both)."""
    if question_vec is not None and question_vec.shape == q_vec.shape:
        return np.stack([q_vec, question_vec], axis=1)
    return q_vec


# passages from which the scan runs beside the keyword ranking (:func:`scan_ahead`): below, the scan is too short for a
# thread to gain what it costs (docs/scale.md, "Session 22")
SCAN_AHEAD_MIN = 250_000


def scan_ahead(snap: Snapshot, q_vec: np.ndarray, question_vec: np.ndarray | None) -> Callable[[], None]:
    """Start the cosine scan :meth:`QueryEvidence.build` will read on a thread of its own and return a function that
    waits for it (and raises what it raised). :meth:`Snapshot.passage_cos` keeps the cosines it computes, so the
    build reads them instead of scanning: the same values. The scan (NumPy, the GIL released) and the keyword
    ranking that the caller runs meanwhile (SQLite, the GIL released) then share two cores; on a large library
    both grow with it (docs/scale.md, "Session 22"). Below :data:`SCAN_AHEAD_MIN` passages, or with another
    encoder's vectors, nothing is started."""
    if len(snap.passage_ids) < SCAN_AHEAD_MIN or snap.dim != q_vec.shape[0]:
        return lambda: None
    failed: list[BaseException] = []

    def scan() -> None:
        try:
            snap.passage_cos(scanned(q_vec, question_vec))
        except BaseException as exc:  # raised in the caller's thread by wait()
            failed.append(exc)

    thread = threading.Thread(target=scan, name="shelfwise-scan", daemon=True)
    thread.start()

    def wait() -> None:
        thread.join()
        if failed:
            raise failed[0]

    return wait


@dataclass(frozen=True)
class WordsOnly:
    """The parts of a snapshot the walk judges by their words (:func:`words_only`): documents in a language the
    encoder does not read, and passages and nodes that have no vector yet."""

    passages: np.ndarray  # (n_passages,) bool
    nodes: np.ndarray  # (n_node_vecs,) bool: description vectors of nodes inside those documents, or zero rows
    languages: tuple[str, ...] = ()  # the languages the encoder does not read, most passages first
    documents: int = 0  # how many documents are in them
    unembedded: int = 0  # how many passages have no vector yet


def words_only(snap: Snapshot, covered: Sequence[str] | None) -> WordsOnly | None:
    """What the walk judges by its words instead of the encoder's cosine, or None when there is nothing:

    * the passages of documents whose main language is not in ``covered`` (the encoder's languages; None: it reads
      them all), and the description vectors of the nodes inside them;
    * the passages with no vector yet (a zero row in the snapshot: an index run part of the way, or a library not
      embedded with this encoder), whose cosine 0 would rank them below every embedded passage whatever their
      words say, and the node vectors that are zero rows. A node with no stored vector at all has none in the
      snapshot (``vec_row`` -1) and is read by the passages beneath it already."""
    data = snap.data
    passages = np.asarray(data.passage_scale) == 0
    nodes = np.asarray(data.node_scale) == 0
    unembedded = int(passages.sum())
    languages: tuple[str, ...] = ()
    documents = 0
    unread = _unread_documents(snap, covered)
    if unread:
        these = np.fromiter(unread, np.int64, len(unread))
        row_doc = snap.passage_documents()
        in_them = np.isin(row_doc, these)
        with_vec = data.vec_row >= 0
        nodes[data.vec_row[with_vec & np.isin(data.document_id, these)]] = True
        found, per_doc = np.unique(row_doc[in_them], return_counts=True)
        counts: dict[str, int] = {}
        for d, c in zip(found.tolist(), per_doc.tolist(), strict=True):
            counts[unread[d]] = counts.get(unread[d], 0) + c
        passages |= in_them
        languages, documents = tuple(sorted(counts, key=lambda k: -counts[k])), len(unread)
    if not passages.any() and not nodes.any():
        return None
    return WordsOnly(passages, nodes, languages, documents, unembedded)


def _unread_documents(snap: Snapshot, covered: Sequence[str] | None) -> dict[int, str]:
    """Document id -> main language, for the documents whose main language is not in ``covered``."""
    if covered is None or not snap.doc_languages:
        return {}
    return {d: langs[0] for d, langs in snap.doc_languages.items() if langs and langs[0] not in covered}


def lean_on_words(w: WordsOnly, cos: np.ndarray, node_cos: np.ndarray, lex: np.ndarray,
                  cos_q: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Cosines where the encoder cannot read the language or has not embedded the passage yet, replaced by the
    passage's BM25 evidence mapped onto the cosine's own scale: no lexical hit -> the median cosine of the passages
    it reads (all passages when it reads none), the best hit -> their best cosine. Such node descriptions get the
    median (no evidence either way); their passages carry the words below them."""
    cos, node_cos = cos.copy(), node_cos.copy()
    ref = cos[~w.passages] if (~w.passages).any() else cos
    lo = float(np.median(ref)) if len(ref) else 0.0
    hi = max(float(ref.max()) if len(ref) else 0.0, lo + 1e-3)
    cos[w.passages] = lo + lex[w.passages] * (hi - lo)
    node_cos[w.nodes] = lo
    if cos_q is not None:
        cos_q = cos_q.copy()
        cos_q[w.passages] = cos[w.passages]
    return cos, node_cos, cos_q


def _z(values: np.ndarray) -> np.ndarray:
    if len(values) < 2:
        return np.zeros_like(values)
    sd = float(values.std())
    return (values - values.mean()) / (sd if sd > 1e-6 else 1.0)


def _rank_feature(values: np.ndarray) -> np.ndarray:
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float32)
    ranks[order] = np.arange(len(values), dtype=np.float32)
    return 1.0 / (1.0 + ranks)


def _subtree_stats(snap: Snapshot, ev: QueryEvidence, cands: Sequence[NodeInfo]) -> tuple[np.ndarray, ...]:
    """Per candidate: best, top-3 mean and own-description cosine, best and count of BM25 hits, best cosine with
    the question sentence, the neighbour cosine (a single passage's, :func:`_neighbour_cos_rows`) and log size. A
    candidate that is one passage (the last level, and every conversation test's flat pool) is read straight off
    the per-passage arrays, all at once; the others slice their subtree. Both give the same values."""
    n = len(cands)
    spans = np.array([c.span for c in cands], dtype=np.int64).reshape(n, 2)
    a, b = spans[:, 0], spans[:, 1]
    vec_rows = np.array([c.vec_row for c in cands], dtype=np.int64)
    cos_max = np.zeros(n, np.float32)
    cos_top3 = np.zeros(n, np.float32)
    lex_max = np.zeros(n, np.float32)
    lex_hits = np.zeros(n, np.float32)
    cos_q_max = np.zeros(n, np.float32)
    cos_nb = np.zeros(n, np.float32)
    one = np.flatnonzero(b - a == 1)
    if len(one):
        rows = a[one]
        cos_max[one] = ev.cos[rows]
        cos_top3[one] = ev.cos[rows]
        lex_max[one] = ev.lex[rows]
        lex_hits[one] = np.log1p((ev.lex[rows] > 0).astype(np.float64))
        if ev.cos_q is not None:
            cos_q_max[one] = ev.cos_q[rows]
        cos_nb[one] = _neighbour_cos_rows(snap, ev, rows)
    for i in np.flatnonzero(b - a > 1).tolist():
        lo, hi = int(a[i]), int(b[i])
        sl = ev.cos[lo:hi]
        cos_max[i] = float(sl.max())
        k = min(3, hi - lo)
        cos_top3[i] = float(np.partition(sl, -k)[-k:].mean()) if hi - lo > k else float(sl.mean())
        ls = ev.lex[lo:hi]
        lex_max[i] = float(ls.max())
        lex_hits[i] = float(np.log1p((ls > 0).sum()))
        cos_q_max[i] = float(ev.cos_q[lo:hi].max()) if ev.cos_q is not None else 0.0
        cos_nb[i] = cos_max[i]
    size = np.log1p(np.maximum(b - a, 0)).astype(np.float32)
    has_vec = vec_rows >= 0
    cos_desc = cos_max.copy()
    cos_desc[has_vec] = ev.node_cos[vec_rows[has_vec]]
    return cos_max, cos_top3, cos_desc, lex_max, lex_hits, cos_q_max, cos_nb, size


def _neighbour_cos_rows(snap: Snapshot, ev: QueryEvidence, rows: np.ndarray) -> np.ndarray:
    """Per passage row, the best cosine of the passages just before and after it in the same section (its own if
    it has none): a list item is read with its lead-in, a lead-in ("You can apply if:") with its items."""
    parents = snap.row_parent
    n_rows = len(parents)
    best = np.full(len(rows), -np.inf, np.float32)
    for step in (-1, 1):
        other = rows + step
        ok = (other >= 0) & (other < n_rows)
        ok[ok] = parents[other[ok]] == parents[rows[ok]]
        best[ok] = np.maximum(best[ok], ev.cos[other[ok]])
    none = np.isneginf(best)
    best[none] = ev.cos[rows[none]]
    return best


def level_features(
    snap: Snapshot, ev: QueryEvidence, cands: Sequence[NodeInfo], parent_logit: dict[int, float] | None = None,
) -> np.ndarray:
    """Feature matrix (len(cands), len(FEATURES)); the LM columns are zero until the navigator fills them."""
    n = len(cands)
    out = np.zeros((n, len(FEATURES)), dtype=np.float32)
    if n == 0:
        return out
    cos_max, cos_top3, cos_desc, lex_max, lex_hits, cos_q_max, cos_nb, size = _subtree_stats(snap, ev, cands)
    cols = {
        "cos_desc": cos_desc, "cos_max": cos_max, "cos_top3": cos_top3, "lex_max": lex_max, "lex_hits": lex_hits,
        "z_cos_max": _z(cos_max), "z_cos_top3": _z(cos_top3), "z_cos_desc": _z(cos_desc), "z_lex_max": _z(lex_max),
        "rank_cos": _rank_feature(cos_max), "rank_lex": _rank_feature(lex_max), "log_size": size,
        "cos_q_max": cos_q_max, "z_cos_q_max": _z(cos_q_max),
        "g_cos_max": ev.global_z(cos_max, "cos"), "g_lex_max": ev.global_z(lex_max, "lex"),
        "g_cos_nb": ev.global_z(cos_nb, "cos"),
    }
    if parent_logit:
        cols["parent"] = np.array([parent_logit.get(c.parent or -1, 0.0) for c in cands], np.float32)
    for name, col in cols.items():
        out[:, FEATURES.index(name)] = col
    return out


def set_lm(features: np.ndarray, rows: Sequence[int], lm_mean: Sequence[float]) -> None:
    """Fill the LM columns for the candidates that were read by the generative model (others stay at 0 = unknown;
    z-scores are taken among the rows that were read)."""
    if not rows:
        return
    vals = np.asarray(lm_mean, dtype=np.float32)
    features[list(rows), FEATURES.index("lm")] = vals
    features[list(rows), FEATURES.index("z_lm")] = _z(vals)


def set_judge(features: np.ndarray, rows: Sequence[int], logits: Sequence[float]) -> None:
    """Fill the judge columns for the candidates the judge read. ``z_judge`` is the z-score among those; the rows it
    did not read (ranked below them before the judge) get the lowest z of the read ones, so skipping a candidate
    never lifts it above one the judge read and rejected."""
    if not rows:
        return
    vals = np.asarray(logits, dtype=np.float32)
    z = _z(vals)
    col = FEATURES.index("z_judge")
    features[:, col] = float(z.min()) if len(z) else 0.0
    features[list(rows), FEATURES.index("judge")] = vals
    features[list(rows), col] = z
