"""The table questions added in session 24 (issue 49), asked through the CLI (``shelfwise ask --json`` in process,
click's CliRunner) over small real workbooks (tests/table_workbooks.py: the matches workbook of conftest's
``matches_library``; the same matches with German and French column names, ingested once here), real SQLite, the
real bundled encoder (MiniLM), generation off: "the first / last X" in the table's order among the rows the
question's filters keep, its cell in the column asked for ("when" -> the date, "who" / "which opponent" -> that
column); "other than A" / "A and which other": the other rows of A's kind that pass the question's other filters
(one value, the first for "name a", a list for a plural, else no table value); in English, German and French."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.table_workbooks import MATCHES, ask_json

pytestmark = pytest.mark.model


def _write_de_fr(docs: Path) -> Path:
    """The matches workbook twice more, its column names German (spiele.xlsx) and French (matchs.xlsx)."""
    import openpyxl

    docs.mkdir(parents=True, exist_ok=True)
    for name, head in (("spiele.xlsx", ["Datum", "Gegner", "Stadt", "Tore"]),
                       ("matchs.xlsx", ["Date", "Adversaire", "Ville", "Buts"])):
        wb = openpyxl.Workbook()
        ws = wb.active
        assert ws is not None
        ws.append(head)
        for day, opponent, city, _result, goals, _crowd, _notes in MATCHES:
            ws.append([day, opponent, city.split(",")[0], goals])
        for cell in ws["A"][1:]:
            cell.number_format = "yyyy-mm-dd"
        wb.save(str(docs / name))
    return docs / "spiele.xlsx"


@pytest.fixture(scope="module")
def de_fr_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.table_workbooks import workbook_library

    return workbook_library(tmp_path_factory.mktemp("de-fr"), lambda p: _write_de_fr(p.parent), "spiele.xlsx")


@pytest.mark.parametrize(("question", "value", "operation"), [
    ("When was the last match?", "2024-04-19", "last"),  # "when": the row's date
    ("Who was the last opponent?", "Rapid", "last"),  # the column "opponent" names
    ("Which opponent was the first one?", "Lyon", "first"),
    # a name written with a capital that is a part of cells filters first: not the last of every match
    ("On what date was the last match in Belgrade?", "2024-03-29", "max"),
    ("Which opponent was the last one in Belgrade?", "Benfica", "last"),
])
def test_first_and_last(matches_library: Path, question: str, value: str, operation: str) -> None:
    short = ask_json(matches_library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == (value, operation), question
    assert short["cells"] and all(c["number"] >= 1 for c in short["cells"])  # the cell used is cited


@pytest.mark.parametrize(("question", "value"), [
    ("Wann war das letzte Spiel? in:spiele.xlsx", "2024-04-19"),
    ("Welcher Gegner war der erste? in:spiele.xlsx", "Lyon"),
    ("Wann war das letzte Spiel in Belgrade? in:spiele.xlsx", "2024-03-29"),
    ("Quand était le dernier match ? in:matchs.xlsx", "2024-04-19"),
    ("Quel adversaire était le premier ? in:matchs.xlsx", "Lyon"),
    ("Quel adversaire était le dernier à Belgrade ? in:matchs.xlsx", "Benfica"),
])
def test_first_and_last_in_german_and_french(de_fr_library: Path, question: str, value: str) -> None:
    short = ask_json(de_fr_library, question)["short_answer"]
    assert short is not None, question
    assert short["text"] == value, question


@pytest.mark.parametrize("question", [
    "Which canal came first?",  # "came first": a place, not the first row; the matches have no place
    "What was the first day of the new starter's training?",  # words the table lacks: not its first row
])
def test_no_first_or_last_row_where_the_table_is_not_asked(matches_library: Path, question: str) -> None:
    out = ask_json(matches_library, question)
    assert out["short_answer"] is None or out["short_answer"]["operation"] not in ("first", "last"), question


@pytest.mark.parametrize(("question", "value", "operation"), [
    # Belgrade's matches: Lyon, Ajax, Benfica; wins in Belgrade: Lyon, Ajax
    ("Other than Lyon, name an opponent we played in Belgrade. in:matches.xlsx", "Ajax", "lookup"),
    ("Lyon and which other opponent did we win against in Belgrade? in:matches.xlsx", "Ajax", "lookup"),
    ("Besides Ajax, which opponents did we play in Belgrade? in:matches.xlsx", "Lyon; Benfica", "list"),
    ("Nenne einen Gegner außer Lyon in Belgrade. in:spiele.xlsx", "Ajax", "lookup"),
    ("Citez un adversaire autre que Lyon à Belgrade. in:matchs.xlsx", "Ajax", "lookup"),
    ("Quels adversaires sauf Ajax ont joué à Belgrade ? in:matchs.xlsx", "Lyon; Benfica", "list"),
])
def test_other_than(de_fr_library: Path, matches_library: Path, question: str, value: str, operation: str) -> None:
    library = matches_library if "matches.xlsx" in question else de_fr_library
    short = ask_json(library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == (value, operation), question
    assert short["cells"] and all(c["number"] >= 1 for c in short["cells"])


def test_other_than_with_two_left_is_no_table_value(matches_library: Path) -> None:
    # Ajax and Benfica both: one is asked for, so neither is shown (before: Lyon's row, the one set aside)
    out = ask_json(matches_library, "Which opponent other than Lyon did we play in Belgrade?")
    assert out["short_answer"] is None or not out["short_answer"]["operation"]


@pytest.fixture(scope="module")
def canals_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.table_workbooks import workbook_library, write_canals

    return workbook_library(tmp_path_factory.mktemp("canals24"), write_canals, "canals.xlsx")


def test_the_only_row_is_shown_where_an_amount_is_named(canals_library: Path) -> None:
    # "length" is an amount, but "which is the only canal ..." asks for the row: its name is shown (before: the
    # product's kind check withheld it, and the walk's sentence was shown)
    short = ask_json(canals_library, "Which is the only canal with a length of 12 miles?")["short_answer"]
    assert short is not None
    assert (short["text"], short["operation"]) == ("Union Canal", "lookup")


def test_the_last_value_listed_of_a_number_column(canals_library: Path) -> None:
    # "rank" is asked for: the last row's Rank, not its canal's name (before: "Kennet and Avon Canal")
    short = ask_json(canals_library, "What is the last rank listed?")["short_answer"]
    assert short is not None
    assert (short["text"], short["operation"]) == ("2", "last")
