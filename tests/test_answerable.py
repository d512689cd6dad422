"""What the not-found rule's fitted part reads (core/answers/answerable.py) and where weak_evidence uses it: the
question's rarest key terms by the library's own counts, whether the top passages hold them, the guard that leaves
a question in another language to the walk's P(relevant), and the fitted rule taking the place of the floor on
P(relevant) (a real SQLite library in memory; the model's weights scripted). Through the CLI on the sample with the
real encoder and the chosen weights: tests/test_sample_answers.py."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from shelfwise.core.answers.answer import weak_evidence
from shelfwise.core.answers.answerable import FEATURES, evidence, rarity, reads, unanswered
from shelfwise.core.answers.tuning import EMBEDDINGGEMMA, MINILM, Logistic
from shelfwise.core.navigation.trace import Hit, Location
from shelfwise.core.store.db import Store
from tests.handbook_store import handbook_store

HANDBOOK = ["Full-time employees receive 27 days of paid annual leave per calendar year.",
            "Leave requests go to your manager at least two weeks ahead.",
            "Unused leave days expire on 31 March of the following year.",
            "The Lisbon studio is on the top floor and is open from 08:00 to 20:00 on weekdays.",
            "Employees may take leave for a family emergency at short notice.",
            "How many days of leave do I get, and what is the notice? Ask your manager."]


@pytest.fixture
def store() -> Iterator[Store]:
    s = handbook_store(HANDBOOK)
    yield s
    s.close()


def _hits(store: Store, score: float = 0.9) -> list[Hit]:
    return [Hit(p.id, p.document_id, p.text, score, "/handbook.md", "Employee Handbook", ["Leave"], Location(line=2))
            for p in store.passages()]


def test_a_term_few_passages_hold_is_rarer_than_a_common_one(store: Store) -> None:
    rare = rarity(store, "How many leave days may a Lisbon employee take?")
    assert rare["Lisbon"] > rare["leave"] > 0  # "Lisbon" in one passage, "leave" in four and the heading
    assert "pension" not in rarity(store, "Which pension fund do employees join?")  # held nowhere: left out
    lisbon = next(p.id for p in store.passages() if "Lisbon" in p.text)
    # counted in a part of the library only (a walk's scope): there "annual" is held nowhere (a passage's row holds
    # its title and headings too: "Employee Handbook", "Leave")
    question = "How much annual leave may a Lisbon employee take?"
    assert "annual" in rarity(store, question)
    assert set(rarity(store, question, allowed={lisbon})) == {"Lisbon", "leave", "employee"}


def test_the_evidence_says_whether_the_top_passages_hold_the_rarest_terms(store: Store) -> None:
    hits = _hits(store)
    question = "When was the Lisbon studio opened?"
    rare = rarity(store, question)
    cos = {h.node_id: 0.5 for h in hits}
    held = evidence(question, [h for h in hits if "Lisbon" in h.text], cos, rare)
    missed = evidence(question, [h for h in hits if "Lisbon" not in h.text], cos, rare)
    assert held.rare_held > missed.rare_held and held.rare_weighted > missed.rare_weighted
    assert held.cos == 0.5 and len(held.vector()) == len(FEATURES)
    assert held.margin == held.vector()[FEATURES.index("margin")]


def test_a_question_in_another_language_is_left_to_the_walk(store: Store) -> None:
    assert reads(store, "How many days of annual leave do I get?")
    german = "Wie viele Urlaubstage bekomme ich im Jahr?"
    assert not reads(store, german)
    assert not reads(store, "Was ist das Leave für Mitarbeiter?")  # one word of the library's: still another language
    tuning = replace(EMBEDDINGGEMMA, unanswered=Logistic((0.0,) * len(FEATURES), 10.0))
    assert unanswered(store, german, _hits(store), {}, tuning) is None


def test_the_fitted_rule_takes_the_place_of_the_floor_on_p_relevant(store: Store) -> None:
    unsure = _hits(store, score=EMBEDDINGGEMMA.abstain_max_p / 2)  # under the floor
    cos = {h.node_id: 0.6 for h in unsure}
    question = "How many days of annual leave do I get?"
    answered = replace(EMBEDDINGGEMMA, unanswered=Logistic((0.0,) * len(FEATURES), -10.0))
    not_answered = replace(EMBEDDINGGEMMA, unanswered=Logistic((0.0,) * len(FEATURES), 10.0))
    assert not weak_evidence(unsure, cos, tuning=answered, question=question, store=store)
    assert weak_evidence(_hits(store), cos, tuning=not_answered, question=question, store=store)
    # without the question or the library, or with no fitted rule (MiniLM's values), the floor decides as before
    assert weak_evidence(unsure, cos, tuning=answered)
    assert weak_evidence(unsure, cos, tuning=replace(answered, unanswered=None), question=question, store=store)
    assert MINILM.unanswered is None
    # a question in another language: the floor decides, whatever the fitted rule would say
    german = "Wie viele Urlaubstage bekomme ich im Jahr?"
    assert weak_evidence(unsure, cos, tuning=answered, question=german, store=store)
    assert not weak_evidence(_hits(store), cos, tuning=not_answered, question=german, store=store)


def test_the_chosen_weights_read_a_close_passage_as_an_answer(store: Store) -> None:
    # EmbeddingGemma's chosen values (docs/eval/answers.md, "Session 27: not found"): the passage that answers,
    # close in cosine and holding the question's words, is an answer; a far one holding few of them is not
    question = "How many days of paid annual leave do full-time employees receive?"
    hits = _hits(store)
    assert unanswered(store, question, hits, {h.node_id: 0.7 for h in hits}, EMBEDDINGGEMMA) is False
    far = [replace(h, score=0.05) for h in hits if "Lisbon" in h.text]  # the walk unsure of it too
    assert unanswered(store, question, far, {far[0].node_id: 0.1}, EMBEDDINGGEMMA) is True
