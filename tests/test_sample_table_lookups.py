"""Lookups over the sample's workbook that a user asked and read wrong (issue 49; found by the lead asking the
sample, session 24), through ``shelfwise ask --json`` on the sample built with the defaults (EmbeddingGemma):
a cell named inside a longer cell the question names ("Professional" in "Senior Professional") is no key of its
own; a column named by the adjective of its noun ("eligible": Eligibility) is the one asked, not the doer's;
"what is the highest X" where X is the measure's own name is the value, not the row's name; a weekday answers
"what day of the week"; a date written in words ("12 June") names the cell of a date column that holds it; a city
written in another language ("Singapour") names its row, not the row for every city not listed; a count of days of
a thing the table never names ("paternity leave") counts none of its rows."""

from __future__ import annotations

import pytest

from tests.cli_sample import SampleLibrary, ask_json

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def library(gemma_sample_copy) -> SampleLibrary:
    lib = gemma_sample_copy("table-lookups")
    assert isinstance(lib, SampleLibrary)
    return lib


@pytest.mark.parametrize(("question", "value", "cell"), [
    # before: 47,000 (the L2 "Professional" row, named inside "Senior Professional")
    ("What is the midpoint for a Senior Professional?", "73,000", "Salary bands!E5"),
    ("What is the midpoint for a Professional?", "47,000", "Salary bands!E3"),
    # before: "Pedalia", the provider ("who" read as the doer's column)
    ("Who is eligible for the bicycle lease?", "Permanent contracts", "Benefits!D6"),
    # before: "L7", the row holding it
    ("What is the highest maximum salary?", "150,000", "Salary bands!F8"),
    ("Which band has the highest maximum salary?", "L7", "Salary bands!A8"),  # which: the row, as before
    # before: "2026-06-10 | Wednesday", a span of the row's text (a weekday did not fit "what day")
    ("What day of the week is Portugal Day?", "Wednesday", "Holidays 2026!B10"),
    # before: no table value (a date written in words did not name the cell 2026-06-12)
    ("What holiday is on 12 June?", "Northwind Founders Day", "Holidays 2026!C11"),
    # before: no table value ("widest range" was read, "widest salary range" not)
    ("Which band has the widest salary range?", "L7", "Salary bands!A8"),
    ("Welches Band hat die größte Gehaltsspanne?", "L7", "Salary bands!A8"),
    # before: EUR 150, the row "All other cities" (session 28's blind check): "Singapour" is Singapore's row
    ("Quel est le plafond hôtelier à Singapour ?", "EUR 240", "table 1, row 7, Hotel cap per night"),
    ("What is the hotel cap per night in Paris?", "EUR 150", "table 1, row 8, Hotel cap per night"),  # not listed
], ids=["longer-cell", "shorter-cell", "adjective-column", "highest-value", "highest-row", "weekday", "date-words",
        "range-named", "range-de", "name-in-french", "name-not-listed"])
def test_a_lookup_answers_with_the_cell_asked_for(library: SampleLibrary, question: str, value: str,
                                                  cell: str) -> None:
    out = ask_json(library, question)
    short = out["short_answer"]
    assert short is not None and short["text"] == value, (short, out["answer"][:300])
    assert cell in {c["address"] for c in short["cells"]}, short["cells"]
    assert out["answer"].startswith(value)



def test_a_count_names_its_table_by_its_sheet_not_its_column_list(library: SampleLibrary) -> None:
    # before: "7 rows of Band, Level name, Example roles, Minimum (EUR/year) ..." (a title made of the header)
    out = ask_json(library, "How many salary bands are there?")
    short = out["short_answer"]
    assert short is not None and short["text"] == "7", short
    assert short["explanation"].startswith("7 rows of Salary bands"), short["explanation"]
    assert "Level name" not in out["answer"]
    # the walk names a passage of table rows by its rows' cells, not by its Markdown pipes and rules
    titles = [c["title"] for c in out["trace"][-1]["candidates"]]
    assert titles and not any(t.startswith("|") for t in titles), titles
    assert any(t.startswith("L1, Associate, Support Associate") for t in titles), titles


@pytest.mark.parametrize(("question", "count"), [
    ("How many holidays are after 1 June?", "6"),  # before: 3, June's (the month read as a filter)
    ("How many holidays are before June?", "7"),
    ("How many holidays are after June 1, 2026?", "6"),  # before: 3
    ("Wie viele Feiertage gibt es nach dem 1. Juni?", "6"),
    ("Combien de jours fériés après le 1er juin ?", "6"),
], ids=["day", "month", "whole-date", "de", "fr"])
def test_a_date_bound_filters_the_rows_counted(library: SampleLibrary, question: str, count: str) -> None:
    out = ask_json(library, question)
    short = out["short_answer"]
    assert short is not None and short["text"] == count, (short, out["answer"][:300])
    assert short.get("cells"), short


@pytest.mark.parametrize("question", [
    # before: "8 rows of Holidays 2026 where Offices = Lisbon" (session 28's blind check): nothing in that table is
    # paternity leave
    "How many days of paternity leave does the company give in Lisbon specifically?",
    "Combien de jours de congé paternité à Lisbonne ?",
])
def test_a_count_of_a_thing_the_table_never_names_is_no_count_of_its_rows(library: SampleLibrary,
                                                                         question: str) -> None:
    out = ask_json(library, question)
    short = out["short_answer"]
    assert short is None or not short.get("cells"), short
    assert "rows of Holidays" not in out["answer"], out["answer"][:300]


def test_a_count_of_days_the_table_names_is_still_counted(library: SampleLibrary) -> None:
    out = ask_json(library, "How many days of public holiday does the Lisbon office have?")
    short = out["short_answer"]
    assert short is not None and short["text"] == "8", (short, out["answer"][:300])
