"""The reading rules tried on the multi-turn set and not shipped, kept runnable for the conversation benchmarks
(``conversation_gate.py``, ``conversation_cost.py``; figures in docs/eval/conversation.md). The product reads with
:data:`shelfwise.core.conversation.reading.SHIPPED`; this module is never imported by it.

:class:`ResearchRule` is the shipped :class:`ReadingRule` with the variants that lost (each field's comment says what
it does), and :func:`read` the reading with their branches; with the variants at their defaults it reads exactly as
the core's :func:`~shelfwise.core.conversation.reading.read` (tests/test_reading_research.py checks it).
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

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np

from shelfwise.core.answers.ask import answer_question
from shelfwise.core.answers.extractive import share_held
from shelfwise.core.conversation import reading as core_reading
from shelfwise.core.conversation.cues import CONTINUE, content_words, names_referent, own_words, points_back
from shelfwise.core.conversation.model import Reading, Turn
from shelfwise.core.conversation.reading import (
    FEW_WORDS,
    ReadingRule,
    _moves_section,
    alone_confidence,
    compose,
    flat_best,
    followup_vector,
    history_documents,
    history_nodes,
    lexical_margin,
    passage_words,
    query_vectors,
    shift_margin,
)
from shelfwise.core.models.backend import Embedder
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
    """The core's prior (:func:`~shelfwise.core.conversation.reading.prior_for`: the last turn's documents and
    sections), plus ``passage_bonus`` on its cited passages. Nodes no longer in the tree are skipped."""
    rule = _research(rule)
    prior = core_reading.prior_for(snap, turn, rule)
    if rule.passage_bonus:
        for nid in history_nodes(turn):
            if nid in snap.nodes:
                prior[nid] = prior.get(nid, 0.0) + rule.passage_bonus
    return prior


def read(question: str, turns: Sequence[Turn], snap: Snapshot | None, embedder: Embedder,
         rule: ReadingRule = SHIPPED, *, alone: bool = False,
         search: Callable[[str], dict[int, float]] | None = None,
         decision: DecisionModel | None = None) -> tuple[Reading, np.ndarray | None]:
    """How to read ``question`` after ``turns``; also the vector the walk's embedder evidence uses when it is not
    the query text's own (the question's, already embedded, when read alone; the mix of ``rule.mix``), else None.
    ``alone=True``: the person asked to read it alone; ``search``: BM25 of a text (the gate's lexical margin);
    ``decision``: the collection's decision model (:func:`alone_confidence`; the prior when None)."""
    rule = _research(rule)
    model = embedder.model_id
    if not turns or alone:
        # the question's vector, kept with the turn for the next one's mix; the walk embeds what it reads itself
        # (the question without its inline filters), finding this in the embedder's kept vectors when that is the
        # same text
        its = query_vectors(embedder, [question])[0]
        mode, why = ("alone", "asked alone") if turns else ("first", "the first question of the conversation")
        return Reading(mode, question, question, why=why, vector=its, vector_model=model), None
    last = turns[-1]
    cue = points_back(question)
    if cue > 0 and len(content_words(question)) <= FEW_WORDS:  # "and how do I request it?": nothing of its own
        cue = 2
    scores: dict[str, float] = {"cue": float(cue)}
    q_vec = None
    hits: dict[int, float] = {}
    sure: float | None = None  # alone_confidence of the question alone, once computed
    alone_best: int | None = None  # the passage it is for
    followup = True
    documents: set[int] = set()  # the last answer's documents (document node ids), once the gate reads them
    why = "read with the conversation (every question after the first is)"
    if rule.gate and snap is not None:
        q_vec = query_vectors(embedder, [question])[0]
        documents = history_documents(snap, last)
        cin, cout = shift_margin(snap, q_vec, documents)
        margin = cin - cout
        score = margin + rule.cue_weight * cue
        wants_hits = rule.lexical_weight or rule.confidence or rule.alone_gap is not None
        hits = search(question) if search is not None and wants_hits else {}
        if rule.lexical_weight and search is not None:
            lin, lout = lexical_margin(snap, hits, documents)
            scores.update(lexical_inside=round(lin, 4), lexical_outside=round(lout, 4))
            score += rule.lexical_weight * (lin - lout)
        scores.update(inside=round(cin, 4), outside=round(cout, 4), margin=round(margin, 4), score=round(score, 4))
        followup = score >= rule.threshold
        said = {2: "its words point back and it says little of its own", 1: "its words point back",
                -1: "its words announce a new topic", 0: "no pronoun or continuing word"}
        why = (f"{said[cue]}; alone it matches the last answer's documents {cin:.2f} vs elsewhere {cout:.2f}: "
               f"score {score:+.2f} {'>=' if followup else '<'} {rule.threshold:+.2f}")
        own = len(content_words(question))
        if rule.own_words and cue < 0:
            followup = False  # "OK, new question: ...": the person said so
        elif rule.own_words and cue == 0 and own >= rule.own_words:
            followup = False
            why = f"it says what it asks in {own} words of its own, none pointing back ({why})"
        elif rule.confidence and cue == 0:
            conf, alone_best = flat_best(snap, q_vec, hits, decision or DecisionModel())
            sure = conf
            scores["confidence"] = round(conf, 4)
            followup = conf < rule.confidence
            why = (f"no word points back; read alone, its best passage is {conf:.2f} sure "
                   f"({'<' if followup else '>='} {rule.confidence:.2f})")
    query = compose(rule.text, question, turns)
    mixed = followup_vector(question, q_vec, last, embedder, model, rule) if followup else None
    if followup and rule.alone_gap is not None and snap is not None and q_vec is not None:
        # the decision model picks between the two readings: how sure it is of the question alone against the
        # follow-up reading (its composed text's BM25 hits, the vector its walk reads)
        model_ = decision or DecisionModel()
        if sure is None:
            sure, alone_best = flat_best(snap, q_vec, hits, model_)
        f_vec = mixed if mixed is not None else query_vectors(embedder, [query])[0]
        if rule.gap_hits == "question":
            f_hits = hits
        elif rule.gap_hits == "composed":
            f_hits = search(query) if search is not None else {}
        else:
            raise ValueError(f"unknown gap_hits {rule.gap_hits!r} (composed or question)")
        sure_f = alone_confidence(snap, f_vec, f_hits, model_)
        scores.update(confidence=round(sure, 4), followup_confidence=round(sure_f, 4))
        if sure - sure_f > rule.alone_gap:
            followup = False
            why = (f"alone its best passage is {sure:.2f} sure, read with the conversation {sure_f:.2f} "
                   f"(more sure alone by > {rule.alone_gap:.2f}; {why})")
    if (followup and rule.coverage_gap is not None and snap is not None and q_vec is not None
            and not names_referent(question)):
        stems = own_words(question)
        if len(stems) >= rule.coverage_words:
            model_ = decision or DecisionModel()
            f_vec = mixed if mixed is not None else query_vectors(embedder, [query])[0]
            f_hits = search(query) if search is not None else {}
            if sure is None:
                sure, alone_best = flat_best(snap, q_vec, hits, model_)
            cov_a = share_held(stems, passage_words(snap, alone_best))
            cov_f = share_held(stems, passage_words(snap, flat_best(snap, f_vec, f_hits, model_)[1]))
            scores.update(coverage_alone=round(cov_a, 3), coverage_followup=round(cov_f, 3))
            inside = not rule.coverage_inside or (alone_best is not None and in_documents(snap, alone_best, documents))
            if cov_a - cov_f >= rule.coverage_gap - 1e-9 and inside:
                followup = False
                why = (f"its own words are {cov_a:.0%} in the best passage read alone, {cov_f:.0%} in the best "
                       f"read with the conversation ({why})")
    if not followup:
        return Reading("shift", question, question, why="a new topic: " + why, scores=scores, vector=q_vec,
                       vector_model=model if q_vec is not None else ""), q_vec
    if (rule.middle_words and snap is not None and not names_referent(question)
            and len(own_words(question)) >= rule.middle_words
            and (not rule.middle_opening or CONTINUE.match(question))):
        mine = q_vec if q_vec is not None else query_vectors(embedder, [question])[0]
        own_hits = hits if hits or rule.middle_gap is None or search is None else search(question)
        if rule.middle_gap is None or _moves_section(snap, mine, own_hits, last, rule.middle_gap, decision, scores):
            text = compose(rule.middle_text, question, turns)
            mid = followup_vector(question, mine, last, embedder, model, replace(rule, mix=rule.middle_mix))
            vec = mine if mid is None else mid
            bonus = rule.document_bonus if rule.middle_bonus is None else rule.middle_bonus
            prior = prior_for(snap, last, replace(rule, document_bonus=bonus, section_bonus=rule.middle_section))
            own_vec = text == question and rule.middle_mix <= 0
            return Reading("followup", text, question, prior=prior, scores=scores,
                           why="a follow-up in the last answer's documents, read in its own words: " + why,
                           vector=mine if own_vec else None, vector_model=model if own_vec else ""), vec
    prior = prior_for(snap, last, rule) if snap is not None else {}
    return Reading("followup", query, question, prior=prior, why="a follow-up: " + why, scores=scores), mixed


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
           "research", "with_rule"]
