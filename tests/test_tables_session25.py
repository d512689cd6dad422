"""The table questions added in session 25 (issue 49), asked through the CLI (``shelfwise ask --json`` in process,
click's CliRunner) over small real workbooks written here and ingested once (real SQLite, the real bundled encoder,
MiniLM, generation off): "how long did X play / serve" as the years of X's row (a span cell, or a start and an end
column; English, German, French), "in the 1910s" as a range of years, and a date column holding a cell that is no
date ("(1914)") read without a crash."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests.table_workbooks import ask_json, write_sheets

pytestmark = pytest.mark.model

SHEETS: dict[str, tuple[list[str], list[list[object]]]] = {
    "players.xlsx": (["Player", "Career", "Club"], [
        ["Cap Anson", "1871–97", "Chicago"], ["Hank Aaron", "1954–76", "Milwaukee"],
        ["Mia Hamm", "1987–2004", "Washington"], ["Ada Open", "2001–present", "Boston"]]),
    "bishops.xlsx": (["Name", "Office started", "Office ended"], [
        ["Geir Vidalin", 1801, 1823], ["Steingrimur Jonsson", 1824, 1845], ["Helgi Thordersen", 1846, 1866],
        ["Petur Petursson", 1866, 1889]]),
    "amt.xlsx": (["Name", "Von", "Bis"], [["Helgi Thordersen", 1846, 1866], ["Petur Petursson", 1866, 1889]]),
    "mandats.xlsx": (["Nom", "Début", "Fin"], [["Helgi Thordersen", 1846, 1866], ["Petur Petursson", 1866, 1889]]),
    "stations.xlsx": (["Station", "Opened", "Height (m)"], [
        ["Mount Wilson", 1908, 1737], ["Hump Mountain", 1917, 1500], ["Calama", 1918, 2250],
        ["Montezuma", 1920, 2711], ["Table Mountain", 1925, 2286]]),
    "premieres.xlsx": (["Title", "Premiere date", "Acts"], [
        ["Das Orakel", dt.date(1872, 9, 21), 2], ["Wiener Kinder", dt.date(1881, 1, 19), 3],
        ["Der Zauberer", dt.date(1890, 9, 20), 1], ["Wiener Luft", dt.date(1889, 5, 10), 3],
        ["Die Spottvogelwirtin", "(1914)", 3]]),
    "releases.xlsx": (["Title", "Year", "Label"], [
        ["Alpha", 2003, "Decca"], ["Beta", 2003, "Decca"], ["Gamma", 2004, "Epic"], ["Delta", 2004, "Epic"],
        ["Epsilon", 2004, "Decca"], ["Zeta", 2005, "Epic"]]),
}


def _write(docs: Path) -> Path:
    write_sheets(docs, SHEETS)
    return docs / "players.xlsx"


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.table_workbooks import workbook_library

    return workbook_library(tmp_path_factory.mktemp("s25"), lambda p: _write(p.parent), "players.xlsx")


@pytest.mark.parametrize(("question", "value"), [
    ("How long did Cap Anson play? in:players.xlsx", "26 years"),  # "1871–97"
    ("How many years did Mia Hamm play? in:players.xlsx", "17"),  # "how many years": the number
    ("For how many years did Helgi Thordersen serve as bishop? in:bishops.xlsx", "20"),  # Office started / ended
    ("How long was Geir Vidalin in office? in:bishops.xlsx", "22 years"),
    ("Wie lange war Helgi Thordersen im Amt? in:amt.xlsx", "20 Jahre"),  # Von / Bis
    ("Combien de temps Petur Petursson a-t-il servi ? in:mandats.xlsx", "23 ans"),  # Début / Fin
])
def test_how_long_a_row_lasted(library: Path, question: str, value: str) -> None:
    short = ask_json(library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == (value, "span"), question
    assert len(short["cells"]) >= 2 and all(c["number"] >= 1 for c in short["cells"])  # the span and the key cited


@pytest.mark.parametrize("question", [
    "How long did Ada Open play? in:players.xlsx",  # "2001–present": no end, no span
    "How long did Hank Aaron and Mia Hamm play? in:players.xlsx",  # two rows: not one span
])
def test_no_span_without_one_closed_row(library: Path, question: str) -> None:
    short = ask_json(library, question)["short_answer"]
    assert short is None or short["operation"] != "span", question


@pytest.mark.parametrize(("question", "value"), [
    ("How many stations opened in the 1910s? in:stations.xlsx", "2"),  # 1917, 1918
    ("Wie viele Stationen gibt es in den 1920er Jahren? in:stations.xlsx", "2"),  # 1920, 1925
    ("Combien de stations dans les années 1900 ? in:stations.xlsx", "1"),  # 1908
    ("How many titles premiered in the 1880s? in:premieres.xlsx", "2"),  # the dates' years
])
def test_a_decade_is_a_range_of_years(library: Path, question: str, value: str) -> None:
    short = ask_json(library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == (value, "count"), question


def test_a_decade_over_two_year_columns_is_not_read(library: Path) -> None:
    # Office started and Office ended: which one "in the 1840s" is about is not said, so no count of either
    short = ask_json(library, "How many bishops were there in the 1840s? in:bishops.xlsx")["short_answer"]
    assert short is None or short["operation"] != "count"


def test_a_date_column_cell_that_is_no_date(library: Path) -> None:
    # "(1914)" in the dates column is stored as a number that is no day; the month filter read it and crashed
    short = ask_json(library, "How many titles premiered in the month of September? in:premieres.xlsx")["short_answer"]
    assert short is not None
    assert (short["text"], short["operation"]) == ("2", "count")


@pytest.mark.parametrize(("question", "value"), [
    ("Who served longer, Helgi Thordersen or Geir Vidalin? in:bishops.xlsx", "Geir Vidalin"),  # 22 years to 20
    ("Which bishop served the longest? in:bishops.xlsx", "Petur Petursson"),  # 23 years
    ("Which bishop served the shortest time? in:bishops.xlsx", "Helgi Thordersen"),  # 20 years
    ("Wer war am längsten im Amt? in:amt.xlsx", "Petur Petursson"),
])
def test_the_longest_span(library: Path, question: str, value: str) -> None:
    short = ask_json(library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == (value, "span"), question


@pytest.mark.parametrize("question", [
    "What year had the most titles? in:releases.xlsx",
    "Welches Jahr hatte die meisten Titel? in:releases.xlsx",
    "Quelle année a eu le plus de titres ? in:releases.xlsx",
])
def test_the_year_with_the_most_rows(library: Path, question: str) -> None:
    # 2004 has three rows, 2003 two, 2005 one: the year the most rows have, not the latest year (2005)
    short = ask_json(library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == ("2004", "most_often"), question


def test_tied_extremes_are_all_given(library: Path) -> None:
    # three titles share the most acts (3): each of them, not the first listed
    short = ask_json(library, "Which titles had the most acts? in:premieres.xlsx")["short_answer"]
    assert short is not None
    assert (short["text"], short["operation"]) == ("Wiener Kinder; Wiener Luft; Die Spottvogelwirtin", "argmax")


def test_next_row_after_a_date_gives_the_column_asked(library: Path) -> None:
    # the row after 1881-01-19's is Der Zauberer's (the table's order): its label, not its date again
    short = ask_json(library, "What came after the 19 January 1881 premiere? in:premieres.xlsx")["short_answer"]
    assert short is not None
    assert (short["text"], short["operation"]) == ("Der Zauberer", "next")
