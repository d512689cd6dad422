"""Does what the walk found answer the question, or only name its subject? The evidence the not-found rule's
fitted part (:func:`~shelfwise.core.answers.answer.weak_evidence`) reads when the subject is in the library: how
sure the walk was of its top passage and of its document, how much of the question the top passages hold, and
whether they hold the question's *rarest* words (by how many of the library's passages hold each): a question
about one guide asked of its neighbours shares their common words ("claim", "pension") and misses its own.

One logistic model over :class:`Evidence` (:class:`~shelfwise.core.answers.tuning.Logistic`; its weights and
threshold are the encoder's own, ``core/answers/tuning.py``), chosen by ``benchmarks/research/not_found_fit.py``
(docs/eval/answers.md).
"""
from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import astuple, dataclass, fields

from shelfwise.core.answers.coverage import PASSAGES, SCAFFOLD, key_coverage, key_terms
from shelfwise.core.answers.extractive import focus_question
from shelfwise.core.answers.short import stems
from shelfwise.core.answers.tuning import AnswerTuning
from shelfwise.core.languages import query_terms
from shelfwise.core.navigation.trace import Hit
from shelfwise.core.store.db import Store

RARE = 2  # the question's rarest key terms whose presence in the top passages counts
MIN_HELD = 0.6  # the share of the question's words the library must hold for the fitted rule to read it
COUNT_CAP = 500  # passages counted per term at most (a common word's count says only that it is common)


@dataclass(frozen=True)
class Evidence:
    """``cos``: the best shown passage's query cosine; ``log_p``: the log of the walk's P(relevant) of its top
    passage; ``margin``: that P less the best P of a passage of another document among the shown; ``coverage``:
    the share of the question's key terms the top passages hold (:func:`key_coverage`); ``rare_held``: the share of
    its :data:`RARE` rarest key terms that the library holds which the top passages hold too; ``rare_weighted``:
    the key terms the top passages hold, each weighted by its rarity (the log of the library's passages over the
    passages holding it), over all the key terms the library holds so weighted."""

    cos: float
    log_p: float
    margin: float
    coverage: float
    rare_held: float
    rare_weighted: float

    def vector(self) -> tuple[float, ...]:
        return astuple(self)


FEATURES = tuple(f.name for f in fields(Evidence))


def _count(store: Store, term: str, allowed: Collection[int] | None, cap: int = COUNT_CAP) -> int:
    """How many rows of the full-text index (passages, titles, headings) hold ``term``, at most ``cap``; of the node
    ids ``allowed`` only, when given (a part of the library)."""
    if allowed is None:
        row = store.conn.execute(f"SELECT count(*) FROM (SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ? "
                                 f"LIMIT {int(cap)})", (f'"{term}"',)).fetchone()
        return int(row[0]) if row else 0
    ids = store.conn.execute("SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ?", (f'"{term}"',))
    return min(sum(1 for (i,) in ids if i in allowed), cap)


def key_query_terms(question: str, whole: bool = False) -> list[str]:
    """The question's key terms (of its asking sentence; of the ``whole`` text, its scene too) as the index's query
    terms (as :func:`~shelfwise.core.answers.coverage.absent_terms` reads them)."""
    keys = key_terms(question) | (stems(question) - SCAFFOLD if whole else set())
    text = question if whole else focus_question(question)
    return [t for t in query_terms(text) if " " not in t and stems(t) & keys]


def rarity(store: Store, question: str, allowed: Collection[int] | None = None,
           whole: bool = False) -> dict[str, float]:
    """The question's :func:`key_query_terms` that the library holds, each with its rarity: the log of the
    library's rows over the rows holding it (:data:`COUNT_CAP` at most counted). ``allowed``: the node ids of the
    part of the library that counts (all of it when ``None``)."""
    if allowed is None:  # the library's rows, read off the highest node id (a count would read every row)
        row = store.conn.execute("SELECT max(id) FROM nodes").fetchone()
        size = int(row[0] or 0) if row else 0
    else:
        size = len(allowed)
    out: dict[str, float] = {}
    for term in key_query_terms(question, whole):
        n = _count(store, term, allowed)
        if n:
            out[term] = math.log((max(size, 1) + 1) / n)
    return out


def reads(store: Store, question: str, allowed: Collection[int] | None = None) -> bool:
    """Whether the fitted rule reads the question: the library holds at least :data:`MIN_HELD` of the words of its
    asking sentence, function words too (a question in another language than the library shares almost none of
    them, and is left to the walk's P(relevant)), as the absent-subject rule's ``absent_min_present`` reads it."""
    terms = [t for t in query_terms(focus_question(question)) if " " not in t]
    return not terms or sum(_count(store, t, allowed, cap=1) > 0 for t in terms) / len(terms) >= MIN_HELD


def evidence(question: str, hits: Sequence[Hit], cosines: dict[int, float], rare: dict[str, float]) -> Evidence:
    """The :class:`Evidence` of the shown ``hits`` (best first) with their query ``cosines`` and the question's
    key terms' :func:`rarity`."""
    top = hits[0]
    other = [h.score for h in hits if h.document_id != top.document_id]
    held: set[str] = set()
    for h in hits[:PASSAGES]:
        held |= stems(" ".join([h.text, h.title, *h.heading_path]))
    holds = {t: bool(stems(t) <= held) for t in rare}
    rarest = sorted(rare, key=lambda t: -rare[t])[:RARE]
    weight = sum(rare.values())
    return Evidence(
        cos=max((cosines.get(h.node_id, 0.0) for h in hits), default=0.0),
        log_p=math.log(max(top.score, 1e-4)),
        margin=top.score - max(other, default=0.0),
        coverage=key_coverage(question, hits),
        rare_held=sum(holds[t] for t in rarest) / len(rarest) if rarest else 1.0,
        rare_weighted=sum(rare[t] for t in rare if holds[t]) / weight if weight > 0 else 1.0,
    )



def unanswered(store: Store, question: str, hits: Sequence[Hit], cosines: dict[int, float],
               tuning: AnswerTuning) -> bool | None:
    """Whether the encoder's fitted rule (``tuning.unanswered``, at ``tuning.unanswered_min``) says the shown
    ``hits`` do not answer ``question``, read against the whole library; ``None`` where it does not read the
    question (no fitted rule, no hits, or a question in another language than the library: :func:`reads`)."""
    model = tuning.unanswered
    if model is None or not hits:
        return None
    if not reads(store, question):
        return None
    ev = evidence(question, hits, cosines, rarity(store, question))
    return model.probability(ev.vector()) >= tuning.unanswered_min
