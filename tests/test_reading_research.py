"""The reading rules tried and not shipped (benchmarks/research/reading_research.py, outside the product): each
variant's
branch, and the research reading with the variants off reads exactly as the core's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from benchmarks.research.reading_research import SHIPPED, ResearchRule, prior_for, read, with_rule
from shelfwise.core.conversation import reading as core
from shelfwise.core.conversation.reading import alone_confidence
from shelfwise.core.navigation.decision import DecisionModel
from tests.test_conversation import _three_axes, _Vectors


def test_with_the_variants_off_it_reads_as_the_core_does(tmp_path: Path) -> None:
    store, snap, (leave, _, hotel), history = _three_axes(tmp_path)
    first = "How many days of annual leave?"
    questions = ["And how do I request days?", "And how do I request it?", "what is the hotel cap?",
                 "And where do I book hotels?", "Any exceptions?", "OK, new question: how do I request leave?"]
    axes = {q: np.array([0.1 * i, 1.0 - 0.1 * i, 0.2 * (i % 3)], np.float32) for i, q in enumerate(questions)}
    vec = _Vectors({first: np.array([1.0, 0.0, 0.0], np.float32)} | axes)

    def search(text: str) -> dict[int, float]:
        return {hotel: 9.0} if "hotel" in text else {leave: 9.0}

    assert isinstance(SHIPPED, ResearchRule) and SHIPPED.passage_bonus == 0.0 and SHIPPED.alone_gap is None
    for rule_core, rule_research in ((core.SHIPPED, SHIPPED), (core.ALONE, with_rule(core.ALONE)),
                                     (core.SHIPPED, with_rule(core.SHIPPED, middle_words=2, middle_gap=None))):
        for q in questions:
            want, want_vec = core.read(q, history, snap, vec, core.ReadingRule(**{
                k: getattr(rule_research, k) for k in core.ReadingRule.__dataclass_fields__}), search=search)
            got, got_vec = read(q, history, snap, vec, rule_research, search=search)
            assert (got.mode, got.query, got.prior, got.why, got.scores) == \
                (want.mode, want.query, want.prior, want.why, want.scores), (q, rule_core)
            assert (got_vec is None) == (want_vec is None) and (got_vec is None or np.array_equal(got_vec, want_vec))
    assert prior_for(snap, history[0], SHIPPED) == core.prior_for(snap, history[0], core.SHIPPED)
    store.close()


def test_passage_bonus_adds_the_cited_passage(tmp_path: Path) -> None:
    store, snap, (leave, request, hotel), history = _three_axes(tmp_path)
    prior = prior_for(snap, history[0], ResearchRule(document_bonus=0.5, section_bonus=0.25, passage_bonus=0.1))
    # the document and all inside it +0.5, the cited passage's section and what it holds +0.25, the passage +0.1
    handbook = snap.document_of(leave)
    assert handbook is not None and prior[handbook.id] == 0.5 and prior[request] == 0.5 and hotel not in prior
    assert prior[leave] == pytest.approx(0.85) and len(prior) == 5
    store.close()


def test_coverage_inside_leaves_a_question_found_in_another_document_a_follow_up(tmp_path: Path) -> None:
    store, snap, (leave, _, hotel), history = _three_axes(tmp_path)
    moved = "And where do I book hotels?"
    vec = _Vectors({moved: np.array([0.7, 0.0, 0.7], np.float32),
                    "How many days of annual leave?": np.array([1.0, 0.0, 0.0], np.float32)})

    def search(text: str) -> dict[int, float]:
        return {hotel: 9.0} if text == moved else {leave: 9.0}

    rule = with_rule(SHIPPED, coverage_gap=0.5)
    assert read(moved, history, snap, vec, rule, search=search)[0].mode == "shift"
    # the hotel passage lies outside the last answer's document, so the inside-only test leaves it a follow-up
    assert read(moved, history, snap, vec, with_rule(rule, coverage_inside=True), search=search)[0].mode == "followup"
    store.close()


def test_middle_reading_variants(tmp_path: Path) -> None:
    store, snap, (leave, request, _), history = _three_axes(tmp_path)
    moved = "And how do I request days?"
    short = "Request days?"  # no pointer, no continuing opening
    first = "How many days of annual leave?"
    vec = _Vectors({moved: np.array([0.0, 1.0, 0.0], np.float32), short: np.array([0.0, 1.0, 0.0], np.float32),
                    first: np.array([1.0, 0.0, 0.0], np.float32)})
    shipped, _ = read(moved, history, snap, vec, SHIPPED)
    rule = with_rule(SHIPPED, middle_words=2)
    handbook = snap.document_of(leave)
    assert handbook is not None
    # the variants: the last query's text, half the mix, another document bonus, off the last answer's section
    varied, v_vec = read(moved, history, snap, vec, with_rule(rule, middle_text="previous", middle_mix=0.25,
                                                               middle_bonus=2.0, middle_section=-2.0))
    want = vec.table[moved] + 0.25 * vec.table[first]
    assert varied.query == shipped.query and v_vec is not None and varied.vector is None
    assert np.allclose(v_vec, want / np.linalg.norm(want), atol=1e-6)
    assert varied.prior[handbook.id] == 2.0 and varied.prior[request] == 2.0 and varied.prior[leave] == 0.0
    opening = with_rule(rule, middle_opening=True, confidence=0.0, threshold=-9.0)  # the short one is a follow-up
    assert read(short, history, snap, vec, with_rule(rule, confidence=0.0, threshold=-9.0))[0].query == short
    assert read(short, history, snap, vec, opening)[0].query == f"{first} {short}"  # no continuing opening
    assert read(moved, history, snap, vec, opening)[0].query == moved
    store.close()


def test_alone_gap_reads_a_question_alone_when_the_model_is_surer_of_it_alone(tmp_path: Path) -> None:
    store, snap, _, history = _three_axes(tmp_path)
    moved = "And how do I request days?"  # opens with "And", its answer inside the last answer's document
    vague = "And any exceptions?"  # opens with "And", nothing stands out alone: the history says what it asks
    vec = _Vectors({moved: np.array([0.0, 1.0, 0.0], np.float32), vague: np.array([0.58, 0.58, 0.57], np.float32),
                    "How many days of annual leave?": np.array([1.0, 0.0, 0.0], np.float32)})
    # what ships (the margins): both inside the last answer's document, both follow-ups
    assert [read(q, history, snap, vec, SHIPPED)[0].mode for q in (moved, vague)] == ["followup", "followup"]
    rule = with_rule(SHIPPED, alone_gap=0.03)
    reading, q_vec = read(moved, history, snap, vec, rule)
    sure, sure_f = reading.scores["confidence"], reading.scores["followup_confidence"]
    assert reading.mode == "shift" and sure - sure_f > 0.03 and not reading.prior
    assert q_vec is not None and np.allclose(q_vec, vec.table[moved]) and "read with the conversation" in reading.why
    mixed = vec.table[moved] + rule.mix * vec.table["How many days of annual leave?"]
    want = alone_confidence(snap, mixed / np.linalg.norm(mixed), {}, DecisionModel())
    assert sure_f == pytest.approx(want, abs=1e-4)  # the follow-up reading as its walk would read it
    follow = read(vague, history, snap, vec, rule)[0]
    assert follow.mode == "followup" and follow.scores["followup_confidence"] > follow.scores["confidence"]
    store.close()


def test_gap_hits_question_reads_the_follow_up_confidence_from_the_questions_own_bm25_hits(tmp_path: Path) -> None:
    store, snap, _, history = _three_axes(tmp_path)
    moved = "And how do I request days?"
    first = "How many days of annual leave?"
    vec = _Vectors({moved: np.array([0.0, 1.0, 0.0], np.float32), first: np.array([1.0, 0.0, 0.0], np.float32)})
    own = {int(snap.passage_ids[0]): 3.0}
    asked: list[str] = []

    def search(text: str) -> dict[int, float]:
        asked.append(text)
        return own if text == moved else {int(snap.passage_ids[-1]): 9.0}

    rule = with_rule(SHIPPED, alone_gap=0.03, gap_hits="question")
    reading = read(moved, history, snap, vec, rule, search=search)[0]
    mixed = vec.table[moved] + rule.mix * vec.table[first]
    want = alone_confidence(snap, mixed / np.linalg.norm(mixed), own, DecisionModel())
    assert reading.scores["followup_confidence"] == pytest.approx(want, abs=1e-4)  # only the vector differs
    assert asked == [moved]  # the composed text is not searched
    composed = read(moved, history, snap, vec, with_rule(rule, gap_hits="composed"), search=search)[0]
    theirs = alone_confidence(snap, mixed / np.linalg.norm(mixed), search(asked[-1]), DecisionModel())
    assert asked[1] == moved and asked[2] != moved  # round 4's reading searches the composed text too
    assert composed.scores["followup_confidence"] == pytest.approx(theirs, abs=1e-4)
    with pytest.raises(ValueError):
        read(moved, history, snap, vec, with_rule(rule, gap_hits="other"), search=search)
    store.close()


def test_coverage_inside_reads_alone_a_question_that_moved_inside_the_last_answers_document(tmp_path: Path) -> None:
    store, snap, (leave, request, _), history = _three_axes(tmp_path)
    moved = "And the LeaveDesk portal?"  # its words are in the leave-request passage, the same document
    vec = _Vectors({moved: np.array([0.4, 0.6, 0.0], np.float32),
                    "How many days of annual leave?": np.array([1.0, 0.0, 0.0], np.float32)})

    def search(text: str) -> dict[int, float]:  # alone: the request passage; the composed text: the leave passage
        return {request: 9.0} if text == moved else {leave: 9.0}

    reading = read(moved, history, snap, vec, with_rule(SHIPPED, coverage_inside=True), search=search)[0]
    assert reading.mode == "shift" and reading.scores["coverage_alone"] > reading.scores["coverage_followup"]
    store.close()
