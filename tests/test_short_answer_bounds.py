"""The bound said with a quantity is part of the short answer (issue 48, session 26): "at least 24 hours", "up to
EUR 50", "6 to 9 months", "21 or over"; how often ("twice a year") and a duration answer "when" where no date is
said; a percentage answers a rate. Through ``shelfwise ask --json`` on a copy of the bundled sample (real
SQLite, the real bundled encoder); the spans one by one: tests/test_short_answer.py."""

from __future__ import annotations

import pytest

from tests.cli_sample import ask_json


@pytest.mark.parametrize(("question", "value"), [
    # "Register visitors in the Frontdesk system at least 24 hours before they arrive.": before, "24 hours"
    ("How far in advance do I register visitors?", "at least 24 hours"),
    # "... there are at least two on every floor.": before, "two"
    ("How many first aiders are there on every floor?", "at least two"),
    # "A room booking that is not checked in within 10 minutes of its start is released automatically.": a "when"
    # answered by a duration where the sentence names no date (before: no value)
    ("When is an unused room booking released?", "within 10 minutes"),
    # "Fire drills are held twice a year, in April and October.": how often (before: no value)
    ("How often are fire drills held?", "twice a year"),
    # "... up to once per calendar month. Flexi days ... with only two working days of notice.": before, "two
    # working days" (a frequency with "calendar" before its unit was not read as one)
    ("How often can I take a flexi day?", "once per calendar month"),
    # "... 100 percent of your salary for the first 26 weeks and 70 percent for the following 78 weeks.": before,
    # "100 percent" (the first period's, next to the question's "26 weeks")
    ("What percentage of salary is paid after 26 weeks of illness?", "70 percent"),
])
def test_the_bound_of_a_quantity_is_shown_with_it(sample_library, question: str, value: str) -> None:
    out = ask_json(sample_library, question)
    assert out["short_answer"] is not None and out["short_answer"]["text"] == value, out["answer"][:300]
    assert out["answer"].startswith(value + " ["), out["answer"][:300]


@pytest.mark.parametrize(("sentence", "spans"), [
    ("You can get up to £11,100 a year.", ["up to £11,100 a year"]),
    ("Valuing an estate takes 6 to 9 months.", ["6 to 9 months"]),
    ("It takes between 6 and 9 months.", ["between 6 and 9 months"]),
    ("You must score 75% or more to pass.", ["75% or more"]),
    ("Applicants must be aged 21 or over.", ["21 or over"]),
    ("Sie erhalten bis zu 30 % mehr.", ["bis zu 30 %"]),
    ("Vous devez attendre au moins 3 ans.", ["au moins 3 ans"]),
    ("First class is allowed for journeys longer than 3 hours.", ["longer than 3 hours"]),
])
def test_a_quantity_span_takes_its_bound_and_its_range(sentence: str, spans: list[str]) -> None:
    from shelfwise.core.answers.typed_spans import quantity_spans

    assert [sentence[s.start:s.end] for s in quantity_spans(sentence)] == spans


def test_a_rate_is_a_percentage_and_a_when_may_be_a_duration() -> None:
    from shelfwise.core.answers.first_value import short_answer
    from shelfwise.core.answers.short_confidence import SHOW_ALL
    from shelfwise.core.answers.types import Extracted

    def value(question: str, sentence: str) -> str:
        got = short_answer(question, [Extracted(sentence, 1, 0, len(sentence), 1.0)], show=SHOW_ALL)
        return got.text if got else ""

    # the band the rate applies to is no rate
    assert value("What rate of tax will I pay?", "On income from £12,571 to £50,270 you pay 20%.") == "20%"
    assert value("When will I receive the tribunal decision?", "You will get the decision within 1 month.") \
        == "within 1 month"
    assert value("When do I pay the vehicle tax?", "You can pay every 6 or 12 months.") == "every 6 or 12 months"
