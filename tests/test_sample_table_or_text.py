"""A table's computed value is shown first only when the table is what the question asks about and the value is of
the kind asked (issue 49). On the sample built with the defaults (EmbeddingGemma), through ``shelfwise ask
--json``: before, "How many parking spaces does the Rotterdam office have?" (and its German form) was answered "9",
the count of the holiday sheet's rows whose office is Rotterdam, over the facilities guide's sentence "The
Rotterdam office has 12 parking spaces ..." that the walk found first; "How many offices celebrate King's Day?" was
answered "Monday" (a lookup of the holiday's day). A count the holiday sheet does answer keeps its value."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tests.cli_sample import SampleLibrary, ask_json

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def library(gemma_sample_copy) -> SampleLibrary:
    lib = gemma_sample_copy("table-or-text")
    assert isinstance(lib, SampleLibrary)
    return lib


@pytest.mark.parametrize("question", ["How many parking spaces does the Rotterdam office have?",
                                      "Wie viele Parkplätze hat das Büro in Rotterdam?"], ids=["en", "de"])
def test_a_count_of_another_tables_rows_does_not_displace_the_sentence(library: SampleLibrary,
                                                                       question: str) -> None:
    out = ask_json(library, question)
    assert "12 parking spaces" in out["answer"], out["answer"]
    short = out["short_answer"]
    assert short is None or (not short.get("cells") and "9" not in short["text"].split()), short


def test_a_table_value_not_of_the_kind_asked_is_not_shown(library: SampleLibrary) -> None:
    out = ask_json(library, "How many offices celebrate King's Day?")
    short = out["short_answer"]
    assert short is None or short["text"] != "Monday", short
    assert "King's Day" in out["answer"] and not out["answer"].startswith("Monday")


def test_a_count_the_table_answers_keeps_its_value(library: SampleLibrary) -> None:
    out = ask_json(library, "How many public holidays does Lisbon have?")
    short = out["short_answer"]
    assert short is not None and short["text"] == "8" and short.get("cells"), out["answer"]


def test_a_name_the_documents_define_reaches_its_column(library: SampleLibrary) -> None:
    # the travel policy says "The daily allowance (per diem) covers meals ..."; its table's column is "Daily
    # allowance". Before, "per diem" named no column: the answer was the defining sentence and London's row
    out = ask_json(library, "What is the per diem in London?")
    short = out["short_answer"]
    assert short is not None and short["text"] == "EUR 75" and short.get("cells"), out["answer"]


def test_a_defined_name_is_put_in_place_only_for_a_column_it_defines() -> None:
    from shelfwise.core.answers.tables import with_defined_names

    prose = ["The daily allowance (per diem) covers meals, local transport and small costs."]
    columns = ["City", "Daily allowance", "Hotel cap per night"]
    assert with_defined_names("What is the per diem in London?", prose, columns) == \
        "What is the daily allowance in London?"
    assert with_defined_names("What is the per diem in London?", prose, ["City", "Hotel cap"]) == \
        "What is the per diem in London?"  # no column is what it defines
    assert with_defined_names("How long is the stay?", prose, columns) == "How long is the stay?"


@pytest.mark.parametrize(("question", "value", "cell"), [
    ("Which company provides health insurance?", "Meridian Health", "Benefits!B3"),
    ("Who provides the pension?", "Harbourline Pension Fund", "Benefits!B2"),
])
def test_the_doer_a_question_asks_for_is_the_column_its_verb_names(library: SampleLibrary, question: str,
                                                                  value: str, cell: str) -> None:
    # before, "which company" took "Company contribution" (the only column with the word "company") and the
    # answer was "EUR 60 per month towards the premium"; "provides" names the Provider column
    out = ask_json(library, question)
    short = out["short_answer"]
    assert short is not None and short["text"] == value, out["answer"]
    assert any(cell in str(c) for c in short.get("cells") or []), short


def test_a_verb_names_its_doer_only_when_the_question_asks_who_does_it() -> None:
    from shelfwise.core.answers.table_intent import read_intent
    from shelfwise.core.answers.table_match import agent_nouns, col_scores

    names = ["Benefit", "Provider", "Company contribution", "Director"]
    assert col_scores(read_intent("Which company provides health insurance?"), names) == [0.0, 1.0, 0.5, 0.0]
    assert "director" in agent_nouns(read_intent("Who directed the film?"))
    assert agent_nouns(read_intent("What is provided for lunch?")) == set()  # the thing provided, not who


def test_a_key_cells_own_words_do_not_name_the_column(library: SampleLibrary) -> None:
    # "King's Day" is the key cell; its word "Day" named the Day column and the answer was "Monday"
    out = ask_json(library, "When is King's Day?")
    short = out["short_answer"]
    assert short is not None and short["text"] == "2026-04-27", out["answer"]


def test_a_place_the_table_does_not_list_takes_the_row_for_all_others(library: SampleLibrary) -> None:
    # the per-diem table lists seven cities and "All other cities"; Paris is none of the seven: before, "Not found"
    out = ask_json(library, "What is the hotel cap in Paris?")
    short = out["short_answer"]
    assert short is not None and short["text"] == "EUR 150", out["answer"]
    assert "All other cities" in json.dumps(short), short
    assert not out["answer"].startswith("Not found"), out["answer"]


def test_the_row_for_all_others_needs_a_name_the_table_lacks() -> None:
    from shelfwise.core.answers.table_intent import read_intent
    from shelfwise.core.answers.table_match import _catch_all

    cells = [["Lisbon", "All other cities"], ["EUR 150", "EUR 150"]]  # a whole table's parts the rule reads
    data = SimpleNamespace(table=SimpleNamespace(names=["City", "Hotel cap per night"], kinds=["text", "money"]),
                           whole=True, text=lambda c: cells[c], is_data=lambda r: True)
    assert list(_catch_all(read_intent("What is the hotel cap in Paris?"), data)) == [0]  # type: ignore[arg-type]
    assert _catch_all(read_intent("What is the hotel cap in Lisbon?"), data) == {}  # type: ignore[arg-type]
    assert _catch_all(read_intent("What is the hotel cap for a conference?"), data) == {}  # type: ignore[arg-type]


def test_a_rows_other_cell_saying_no_does_not_reverse_the_answer(library: SampleLibrary) -> None:
    # the Lunch row: "Free lunch on office days ... No enrolment needed"; before, "No: Lunch, Office canteen ..."
    out = ask_json(library, "Is there free lunch in the office?")
    short = out["short_answer"]
    # a yes or no is shown only where the confidence reaches its threshold (core/answers/short_confidence.py): "Yes"
    # or none, never "No"
    assert short is None or (short["kind"] == "yes_no" and short["text"] == "Yes"), out["answer"]
    assert not out["answer"].startswith("No"), out["answer"]
