"""The reading rules tried on the multi-turn set and not shipped, kept runnable for the conversation benchmarks
(``conversation_gate.py``, ``conversation_cost.py``; figures in docs/eval/conversation.md). The product reads with
:data:`shelfwise.core.conversation.reading.SHIPPED`; this module is never imported by it.

:class:`ResearchRule` is the shipped :class:`ReadingRule` with the variants that lost (each field's comment says what
it does) and their branches as the steps the core's :func:`~shelfwise.core.conversation.reading.read` leaves to its
rule (``wants_hits``, ``prior``, ``compare_readings``, ``coverage_counts``, ``reads_middle``, ``middle``): the reading
is written once, in the core; with the variants at their defaults a research rule reads exactly as the shipped one
(tests/test_reading_research.py checks it).
:func:`player` hands :func:`shelfwise.evaluation.dialogues.play` a player that reads with it (nothing of the
product or the evaluation is replaced at run time).

The variants, by the round of docs/eval/conversation.md that tried them:

- ``alone_gap`` (Round 4): a question the tests would read as a follow-up is read alone when
  :func:`alone_confidence` of the question alone exceeds the same confidence of the follow-up reading (its
  composed text's BM25 hits and the vector its walk reads) by more than this; chosen on tune, it lost follow-ups on
  the test split. ``gap_hits="question"`` (Round 5): that confidence from the question's own BM25 hits; it did not
  beat what ships on the tune split.
- ``coverage_inside`` (Round 7): the coverage test reads a question alone only when the best passage for it alone
  lies in the documents the last turn answered from; chosen on tune, it lost cross-document shifts on test.
- ``middle_text``, ``middle_mix``, ``middle_bonus``, ``middle_section``, ``middle_opening`` (Round 9): what the
  middle reading reads (text, vector mix, document and section bonus) and whether only questions that open with a
  continuing word get it; the shipped middle reading reads the question's own text and vector in the last answer's
  documents.
- ``passage_bonus``: a logit for the last turn's cited passages themselves, beside their documents and sections.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from shelfwise.core.answers.ask import answer_question
from shelfwise.core.conversation import reading as core_reading
from shelfwise.core.conversation.cues import CONTINUE
from shelfwise.core.conversation.model import Reading, Turn
from shelfwise.core.conversation.reading import (
    Asked,
    ReadingRule,
    alone_confidence,
    compose,
    flat_best,
    followup_vector,
    history_nodes,
    query_vectors,
    read,
)
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.snapshots import load_decision
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.store.snapshot import Snapshot
from shelfwise.evaluation.dialogues import AnswerFn, Player


@dataclass(frozen=True)
class ResearchRule(ReadingRule):
    passage_bonus: float = 0.0
    alone_gap: float | None = None  # set: a question the tests would read as a follow-up is read alone when
    # :func:`alone_confidence` of the question alone exceeds that of the follow-up reading by more than this
    gap_hits: str = "composed"  # the BM25 hits the follow-up reading's confidence reads in that comparison: the
    # composed text's ("composed") or the question's own ("question")
    coverage_inside: bool = False  # True: the coverage test reads a question alone only when the best passage for
    # it alone lies in the documents the last turn answered from
    middle_text: str = "alone"  # the text the middle reading reads (one of :data:`TEXTS`)
    middle_mix: float = 0.0  # its vector: the question's + this x the last query's (0: the question's own)
    middle_bonus: float | None = None  # its document bonus (None: ``document_bonus``)
    middle_section: float = 0.0  # its section bonus: < 0 moves the walk off the last answer's sections
    middle_opening: bool = False  # True: only questions that open with a continuing word ("And", "Also,", "OK, and")

    def wants_hits(self) -> bool:
        return super().wants_hits() or self.alone_gap is not None

    def prior(self, snap: Snapshot, turn: Turn) -> dict[int, float]:
        """The core's prior (the last turn's documents and sections), plus ``passage_bonus`` on its cited passages.
        Nodes no longer in the tree are skipped."""
        prior = core_reading.prior_for(snap, turn, self)
        if self.passage_bonus:
            for nid in history_nodes(turn):
                if nid in snap.nodes:
                    prior[nid] = prior.get(nid, 0.0) + self.passage_bonus
        return prior

    def compare_readings(self, asked: Asked, query: str, mixed: np.ndarray | None) -> None:
        """``alone_gap``: the decision model picks between the two readings: how sure it is of the question alone
        against the follow-up reading (its composed text's BM25 hits, the vector its walk reads)."""
        snap, q_vec = asked.snap, asked.q_vec
        if not asked.followup or self.alone_gap is None or snap is None or q_vec is None:
            return
        model_ = asked.decision or DecisionModel()
        if asked.sure is None:
            asked.sure, asked.alone_best = flat_best(snap, q_vec, asked.hits, model_)
        f_vec = mixed if mixed is not None else query_vectors(asked.embedder, [query])[0]
        if self.gap_hits == "question":
            f_hits = asked.hits
        elif self.gap_hits == "composed":
            f_hits = asked.search(query) if asked.search is not None else {}
        else:
            raise ValueError(f"unknown gap_hits {self.gap_hits!r} (composed or question)")
        sure, sure_f = asked.sure, alone_confidence(snap, f_vec, f_hits, model_)
        asked.scores.update(confidence=round(sure, 4), followup_confidence=round(sure_f, 4))
        if sure - sure_f > self.alone_gap:
            asked.followup = False
            asked.why = (f"alone its best passage is {sure:.2f} sure, read with the conversation {sure_f:.2f} "
                         f"(more sure alone by > {self.alone_gap:.2f}; {asked.why})")

    def coverage_counts(self, asked: Asked) -> bool:
        """``coverage_inside``: only when the best passage for the question alone lies in the last answer's
        documents."""
        snap, best = asked.snap, asked.alone_best
        return not self.coverage_inside or (snap is not None and best is not None
                                            and in_documents(snap, best, asked.documents))

    def reads_middle(self, question: str) -> bool:
        return not self.middle_opening or bool(CONTINUE.match(question))

    def middle(self, asked: Asked, snap: Snapshot, mine: np.ndarray) -> tuple[Reading, np.ndarray | None]:
        """The middle reading with its own text (``middle_text``), vector mix (``middle_mix``) and bonuses."""
        question, last = asked.question, asked.last
        text = compose(self.middle_text, question, asked.turns)
        mid = followup_vector(question, mine, last, asked.embedder, asked.model, replace(self, mix=self.middle_mix))
        vec = mine if mid is None else mid
        bonus = self.document_bonus if self.middle_bonus is None else self.middle_bonus
        prior = replace(self, document_bonus=bonus, section_bonus=self.middle_section).prior(snap, last)
        own_vec = text == question and self.middle_mix <= 0
        return Reading("followup", text, question, prior=prior, scores=asked.scores,
                       why="a follow-up in the last answer's documents, read in its own words: " + asked.why,
                       vector=mine if own_vec else None, vector_model=asked.model if own_vec else ""), vec


def research(rule: ReadingRule, **changes: object) -> ResearchRule:
    """``rule`` as a :class:`ResearchRule` (the variants at their defaults), with ``changes``."""
    return ResearchRule(**{**asdict(rule), **changes})  # type: ignore[arg-type]


SHIPPED = research(core_reading.SHIPPED)
ALONE = research(core_reading.ALONE)
CONCATENATION = research(core_reading.CONCATENATION)


def with_rule(rule: ReadingRule, **changes: object) -> ResearchRule:
    return research(rule, **changes)


def _research(rule: ReadingRule) -> ResearchRule:
    return rule if isinstance(rule, ResearchRule) else research(rule)


def in_documents(snap: Snapshot, node_id: int, documents: set[int]) -> bool:
    """Whether the node lies in one of ``documents`` (document node ids)."""
    doc = snap.document_of(node_id) if node_id in snap.nodes else None
    return doc is not None and doc.id in documents


def prior_for(snap: Snapshot, turn: Turn, rule: ReadingRule) -> dict[int, float]:
    """``rule``'s prior as a research rule (:meth:`ResearchRule.prior`)."""
    return _research(rule).prior(snap, turn)


def decision_for(shelf: LibraryWalk, snap: Snapshot | None, rule: ReadingRule) -> DecisionModel | None:
    """:func:`shelfwise.core.conversation.turn.decision_for`, also for a rule that compares the two readings."""
    r = _research(rule)
    if snap is None or not r.gate or (not r.confidence and r.alone_gap is None and r.coverage_gap is None):
        return None
    return load_decision(shelf.store, snap.collection_id, shelf.embedder, shelf.backend)


def player(answer: AnswerFn = answer_question) -> Player:
    """The dialogue evaluation's player (:func:`shelfwise.evaluation.dialogues.play`) reading with these rules
    (and answering with ``answer``: the benchmarks' memoised walks)."""
    return Player(read=read, decision_for=decision_for, answer=answer)


__all__ = ["ALONE", "CONCATENATION", "SHIPPED", "ResearchRule", "decision_for", "player", "prior_for", "read",
           "research", "with_rule"]  # read: the core's, which reads with a research rule's steps
