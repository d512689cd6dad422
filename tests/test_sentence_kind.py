"""The sentence shown first holds a value of the kind asked (issue 48, ``core/answers/sentence_kind.py``):
"How long does the parking permit application take?" showed first the sentence with the question's words ("The
parking permit application is made through the facilities portal ...") and the one with the duration only
second; now the duration's sentence comes first, and its value is shown. Through ``shelfwise ask --json`` on a
copy of the bundled sample with a short note added by ``shelfwise ingest`` (real SQLite, the real bundled
encoder); the cue itself on strings below."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.cli_sample import SampleLibrary, ask_json, run_shelfwise

NOTE = """Parking permits

Staff who drive to the office can apply for a parking permit for the courtyard car park. The parking permit \
application is made through the facilities portal with your number plate. Facilities usually decide within 10 \
working days. Permits are not transferable between cars.
"""


@pytest.fixture(scope="module")
def with_note(sample_copy: Callable[[str], SampleLibrary], tmp_path_factory: pytest.TempPathFactory) -> SampleLibrary:
    lib = sample_copy("sentence-kind")
    notes = tmp_path_factory.mktemp("sentence-kind-notes")
    (notes / "parking-permits.txt").write_text(NOTE)
    done = run_shelfwise(lib.db, ["ingest", str(notes)])
    assert done.returncode == 0, done.stdout[-2000:]
    return lib


def test_the_sentence_holding_the_duration_asked_is_shown_first(with_note: SampleLibrary) -> None:
    out = ask_json(with_note, "How long does the parking permit application take?")
    assert out["sentences"][0]["text"] == "Facilities usually decide within 10 working days.", out["answer"][:300]
    # before, the value was withheld (the first sentence held none); now it is shown above its sentence
    assert out["short_answer"] is not None and out["short_answer"]["text"] == "within 10 working days", out["answer"]


def test_the_cue_reads_the_kind_asked() -> None:
    from shelfwise.core.answers.sentence_kind import kind_cue

    def cue(question: str, *texts: str) -> list[float]:
        return [float(x) for x in kind_cue(question, list(texts))]

    notice = ["Either side may end the employment with one week of notice.", "The notice is given in writing.",
              "Probation lasts three months."]
    assert cue("How long is the notice period?", *notice) == [1.0, 0.0, 1.0]  # "one week" is a duration
    assert cue("How many remote days can I have?", "You may have one remote day per week.", "Ask the one in charge.") \
        == [1.0, 0.0]
    fee = ["The permit costs EUR 40 a year.", "It is valid for 12 months."]
    assert cue("How much does the permit cost?", *fee) == [1.0, 0.0]  # a sum asked: not any number
    assert cue("How long must the password be?", "It needs at least 14 characters.", "Change it often.") == [1.0, 0.0]
    assert cue("When was the first case confirmed?", "It was confirmed on January 15, 2020.", "It was confirmed.") \
        == [1.0, 0.0]
    assert cue("Who decides the application?", *fee) == [0.0, 0.0]  # no value asked: no cue
    # a value read from the words ("limit"), not asked for outright: no cue (any sum of the library would do)
    assert cue("What is the expenses limit for hotels?", "Dinners are limited to EUR 85.", "Book hotels early.") \
        == [0.0, 0.0]
