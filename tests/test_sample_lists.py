"""A sentence that announces a list brings its items, also when they are written on as prose after it (issue 48):
the sample handbook's "We work by three values. Measure twice: ... Share the weather: ... Leave the quay
cleaner: ..." is one paragraph of a PDF. Before, the answer showed "We work by three values." alone, and the value
shown first was a word of another sentence ("events"). Through ``shelfwise ask`` on the sample built with the
defaults (EmbeddingGemma), the terminal's lines and ``--json``."""

from __future__ import annotations

import pytest

from tests.cli_sample import SampleLibrary, ask_json, run_shelfwise

pytestmark = pytest.mark.model

VALUES = ("Measure twice", "Share the weather", "Leave the quay cleaner")


@pytest.fixture(scope="module")
def library(gemma_sample_copy) -> SampleLibrary:
    lib = gemma_sample_copy("sample-lists")
    assert isinstance(lib, SampleLibrary)
    return lib


def test_the_announced_values_are_brought_and_named_first(library: SampleLibrary) -> None:
    out = ask_json(library, "What are the company values?")
    short = out["short_answer"]
    assert short is not None and short["kind"] == "list", out["answer"]
    assert short["text"] == "; ".join(VALUES)
    for value in VALUES:
        assert value in out["answer"]
    assert "we check our assumptions with data" in out["answer"]  # the items' own sentences, not only the lead-in
    text = run_shelfwise(library.db, ["ask", "What are the company values?", "--no-generate"],
                         unset=("SHELFWISE_EMBEDDER",))
    first = next(line for line in text.stdout.splitlines() if line.startswith("Answer:"))
    assert first.startswith("Answer: " + "; ".join(VALUES)), text.stdout
    sources = text.stdout[text.stdout.index("In the sources:"):]
    assert "We work by three values. Measure twice: we check our assumptions" in sources
    assert "Leave the quay cleaner: we leave code, documents and shared spaces" in sources


def test_an_item_of_a_list_answers_a_question_with_a_when_clause(library: SampleLibrary) -> None:
    # before: "Days above the carry-over limit expire on 31 December ..." (the "when" of "when I move house" was
    # read as asking for a date, and a sentence with one was preferred to the list's item)
    out = ask_json(library, "How many days off do I get when I move house?")
    assert "Moving house: 1 day per calendar year." in out["answer"], out["answer"][:300]
    assert "carry-over" not in out["answer"].split("\n")[0], out["answer"][:300]
    short = out["short_answer"]
    assert short is None or "1 day" in short["text"], short
