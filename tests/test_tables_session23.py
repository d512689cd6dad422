"""The table questions added in session 23 (issue 49), asked through the CLI (``shelfwise ask --json`` in process,
click's CliRunner) over small real workbooks (tests/table_workbooks.py: the matches workbook of conftest's
``matches_library``, and four canals ingested once here), real SQLite, the real bundled encoder (MiniLM),
generation off: "A or B" with the two things named by a part of their cells (one of the two is the answer, or no
table value when the table does not decide), a comparison's column from the unit after its bound, a number
column after "no", a number that is a cell of two columns, "above / below X" in the table's order, "ranked first"
(the lowest place), a row's name shown for "which canal has the greatest length" (an amount named, a row asked
for), and no value of another kind than the one asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.table_workbooks import ask_json

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def canals_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.table_workbooks import workbook_library, write_canals

    return workbook_library(tmp_path_factory.mktemp("canals"), write_canals, "canals.xlsx")


@pytest.mark.parametrize(("question", "value", "operation"), [
    # "naples" and "vienna" are parts of the City cells: Naples 41000, Vienna 22000
    ("Which city had a bigger attendance, Naples or Vienna?", "Naples, Italy", "choice"),
    ("Which city hosted more matches, Belgrade or Lisbon?", "Belgrade, Serbia", "choice"),  # 3 rows against 1
    ("Was Celtic played in Glasgow or in Lisbon?", "Glasgow", "choice"),  # the row Celtic names holds Glasgow
    ("How many matches had no goals?", "1", "count"),  # Goals = 0: Celtic
    ("Which opponent is listed below Porto?", "Ajax", "next"),  # the table's own order
    ("Which opponent was above Celtic?", "Ajax", "previous"),
])
def test_matches(matches_library: Path, question: str, value: str, operation: str) -> None:
    short = ask_json(matches_library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == (value, operation), question
    assert short["cells"] and all(c["number"] >= 1 for c in short["cells"])  # every cell used is cited


@pytest.mark.parametrize(("question", "value", "operation"), [
    ("Which canal is longer, the Grand Western or the Kennet and Avon?", "Kennet and Avon Canal", "choice"),
    ("Which canal opened earlier, Union or Trent and Mersey?", "Trent and Mersey Canal", "choice"),  # 1777
    ("How many canals are longer than thirty miles?", "3", "count"),  # the unit names Length (miles)
    ("How many canals are wider than 10 ft?", "3", "count"),  # Width (ft): 14, 14, 14
    ("How many canals have 14 locks?", "2", "count"),  # Locks, not the rows with 14 in Locks and in Width
    ("Which canal is ranked first?", "Trent and Mersey Canal", "lookup"),  # the lowest Rank
    # "length" is an amount a question may ask for, but "which canal" asks for the row: its name is shown
    ("Which canal has the greatest length?", "Trent and Mersey Canal", "argmax"),
])
def test_canals(canals_library: Path, question: str, value: str, operation: str) -> None:
    short = ask_json(canals_library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == (value, operation), question


@pytest.mark.parametrize("question", [
    "Which canal is wider, Union or Trent and Mersey?",  # both 14 ft: the table does not decide
    "Which canal is nicer, Union or Trent and Mersey?",  # no comparison the table can make
    "What year had the most locks?",  # the row with the most locks has no year: its name is no answer
])
def test_no_table_value_where_the_table_does_not_decide(canals_library: Path, question: str) -> None:
    out = ask_json(canals_library, question)
    assert out["short_answer"] is None or not out["short_answer"]["operation"], question
    assert out["answer"]  # the walk's sentence is shown
