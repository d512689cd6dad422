"""The table questions added in session 21 (issue 49), asked through the CLI (``shelfwise ask --json`` in process,
click's CliRunner) over a small real workbook (tests/table_workbooks.py), real SQLite, the real bundled encoder
(MiniLM), generation off: "how many ..." of one named row is that row's value, not a count of 1; first / last in
the table's order when no date is named; a month as a filter over a date column; a name the table does not have
keeps the walk's sentence (no table answer); a yes/no question is not answered by a row's value."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from shelfwise.app.cli.main import main
from tests.table_workbooks import ask_json

pytestmark = pytest.mark.model


@pytest.mark.parametrize(("question", "value", "operation", "cells"), [
    ("How many people attended the match against Porto?", "30000", "lookup", ["Matches!F3", "Matches!B3"]),
    ("Which opponent was played last?", "Rapid", "last", ["Matches!B9"]),
    ("How many matches were played in April?", "3", "count", None),
])
def test_each_new_operation(matches_library: Path, question: str, value: str, operation: str,
                            cells: list[str] | None) -> None:
    short = ask_json(matches_library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["operation"]) == (value, operation), question
    if cells is not None:
        assert [c["address"] for c in short["cells"]] == cells
    assert all(c["number"] >= 1 for c in short["cells"])  # every cell used is cited


@pytest.mark.parametrize("question", [
    "How many matches were played in Belgrade against Zorya?",  # Zorya is in no row: not the 3 Belgrade matches
    "Did the team score more goals against Napoli than usual?",  # yes/no: not a row's value
])
def test_what_the_table_cannot_say_keeps_the_walks_sentence(matches_library: Path, question: str) -> None:
    out = ask_json(matches_library, question)
    assert out["short_answer"] is None or not out["short_answer"]["operation"], question
    assert out["answer"]  # the walk's sentence is shown


def test_where_the_walk_finds_nothing_only_a_sure_table_value_is_shown(matches_library: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # the walk's verdict made "not found" (its evidence judged weak): a value matched loosely (a part of a cell:
    # "belgrade" in "Belgrade, Serbia") is not shown, "Not found" stands with the related passages; a value the
    # question's own words name (the row "Lyon", the column "attendance") is shown, and "Not found" is not said
    from shelfwise.core.answers import from_passages

    monkeypatch.setattr(from_passages, "weak_evidence", lambda *a, **k: True)
    out = ask_json(matches_library, "How many matches were played in belgrade?")
    assert (out["found"], out["short_answer"]) == (False, None)
    assert out["answer"] == "Not found in your documents."
    assert out["related"]
    result = CliRunner().invoke(main, ["--db", str(matches_library), "ask",
                                       "How many matches were played in belgrade?", "--no-generate"])
    assert "Answer: Not found in your documents." in result.output
    sure = CliRunner().invoke(main, ["--db", str(matches_library), "ask", "What was the attendance against Lyon?",
                                     "--no-generate"])
    assert "12000" in sure.output and "Not found" not in sure.output
    monkeypatch.undo()
    assert ask_json(matches_library, "How many matches were played in belgrade?")["short_answer"]["text"] == "3"
