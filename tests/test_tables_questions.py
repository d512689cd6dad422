"""The table questions added in session 20 (issue 49), asked through the CLI (``shelfwise ask --json`` in process,
click's CliRunner) over a small real workbook (tests/table_workbooks.py) with the real SQLite and the real bundled
encoder (MiniLM), generation off: a part of a cell as a filter ("in Belgrade" for "Belgrade, Serbia"), its
negation ("not in Belgrade"), a column left empty ("no notes"), a yes/no comparison of two rows, "more or less",
every row counted ("listed"), the rows after a named one counted, the column a "which X" asks for, and a question
the table does not answer, which keeps the walk's sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.table_workbooks import ask_json

pytestmark = pytest.mark.model


@pytest.mark.parametrize(("question", "value", "operation", "cells"), [
    ("How many matches were played in Belgrade?", "3", "count",  # each row counted: its opponent, its city
     ["Matches!B2", "Matches!C2", "Matches!B4", "Matches!C4", "Matches!B6", "Matches!C6"]),
    ("How many matches were not played in Belgrade?", "5", "count", ["Matches!B3", "Matches!B5", "Matches!B7",
                                                                     "Matches!B8", "Matches!B9"]),
    ("How many matches have no notes?", "5", "count", None),
    ("Did the match against Lyon have more goals than the match against Ajax?", "yes", "compare", None),
    ("Did the match against Ajax have more goals than the match against Lyon?", "no", "compare", None),
    ("Was the attendance against Porto higher or lower than against Celtic?", "lower", "compare", None),
    ("How many matches are listed?", "8", "count", None),
    ("How many matches were played after Ajax?", "5", "count", None),
    ("Which opponent had the lowest attendance?", "Lyon", "argmin", ["Matches!B2", "Matches!F2"]),
])
def test_each_new_operation(matches_library: Path, question: str, value: str, operation: str,
                            cells: list[str] | None) -> None:
    short = ask_json(matches_library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == (value, operation), question
    if cells is not None:
        assert [c["address"] for c in short["cells"]] == cells
    assert all(c["number"] >= 1 for c in short["cells"])  # every cell used is cited


def test_a_question_the_table_does_not_answer_is_not_guessed(matches_library: Path) -> None:
    out = ask_json(matches_library, "Who was the referee of the final?")
    assert out["short_answer"] is None or out["short_answer"]["operation"] in ("", None)
