"""Which texts ask several questions at once (``asked_together``): each then gets its own walk and answer, the
model asked nothing (``tests/test_adaptive_cli.py`` asks them through the command line and the window); a question
that stands a pronoun for what a question before it named is searched with that question (``searched_as``), here
through ``shelfwise ask --json`` on a copy of the bundled sample too."""

from __future__ import annotations

import pytest

from shelfwise.core.answers.adaptive import asked_together, searched_as
from tests.cli_sample import SampleLibrary, ask_json


@pytest.mark.parametrize(("text", "want"), [
    ("How many days of annual leave do I get? And how do I request it?",
     ["How many days of annual leave do I get?", "And how do I request it?"]),
    ("Wie viele Urlaubstage habe ich?  Und wie beantrage ich sie?",
     ["Wie viele Urlaubstage habe ich?", "Und wie beantrage ich sie?"]),
    # a statement before a question is its context
    ("I work in Lisbon. How many holidays do I have? And when is the next one?",
     ["I work in Lisbon. How many holidays do I have?", "And when is the next one?"]),
])
def test_several_questions_are_split_at_their_question_marks(text: str, want: list[str]) -> None:
    assert asked_together(text) == want


@pytest.mark.parametrize("text", [
    "How many days of annual leave do I get?",
    "How and when do I request leave?",  # one question with two wh-words
    "Who approves travel, and when is it paid?",  # one sentence: the single walk (or --adaptive) reads it
    "What is the per diem? Thanks",  # a closing word is not a question
    "Is it? Yes it is?",  # too short to be questions of their own
    "What? Why? How? Who? When?",
    "Who approves it? What is the limit? When is it paid? Where is the form?",  # more than a run takes
])
def test_one_question_is_not_split(text: str) -> None:
    assert asked_together(text) == []


def test_a_question_pointing_back_is_searched_with_the_one_before() -> None:
    parts = ["What is the home office allowance?", "When does it become available again?",
             "Who pays the internet stipend?", "How much is it?"]
    assert searched_as(parts) == {
        "What is the home office allowance?": "What is the home office allowance?",
        "When does it become available again?": "What is the home office allowance? When does it become available "
                                                "again?",
        "Who pays the internet stipend?": "Who pays the internet stipend?",  # names its own subject
        "How much is it?": "Who pays the internet stipend? How much is it?",
    }


def test_a_second_question_about_the_firsts_subject_is_answered(sample_library: SampleLibrary) -> None:
    # before: "When does it become available again?" was walked by its own words alone and "Not found"
    out = ask_json(sample_library, "What is the home office allowance? When does it become available again?")
    first, second = out["steps"]
    assert first["question"] == "What is the home office allowance?" and "EUR 600" in first["answer"], first
    assert second["question"] == "When does it become available again?", second  # shown as typed
    assert "four years" in second["answer"], second
    assert "four years" in out["answer"].splitlines()[1], out["answer"]


def test_a_question_pointing_back_reads_the_table_with_the_one_before(sample_library: SampleLibrary) -> None:
    # before: "How do I enrol in it?" read the benefits table by its own words: the rows of the lunch and the
    # counselling service, not the bicycle lease's "Benefits portal"
    out = ask_json(sample_library, "What is the bicycle lease? How do I enrol in it?")
    second = out["steps"][1]
    short = second.get("short_answer") or {}
    assert "Benefits portal" in second["answer"], second
    assert "Office canteen" not in second["answer"] and "Clearwater" not in second["answer"], second
    assert short.get("text") in (None, "Benefits portal"), short


def test_the_value_the_question_before_was_answered_with_is_no_answer_to_a_part_pointing_back(
        sample_library: SampleLibrary) -> None:
    # read with the question before it, "How many people are in it?" would be answered "102,000", the band's
    # maximum salary that the first question asked for
    out = ask_json(sample_library, "What is the maximum salary for band L5? How many people are in it?")
    first, second = out["steps"]
    assert "102,000" in first["answer"], first
    assert not second["answer"].startswith("102,000"), second
