"""The table questions added in session 22 (issue 49), asked through the CLI (``shelfwise ask --json`` in process,
click's CliRunner) over the small real matches workbook (tests/table_workbooks.py: results W L W D L W D W, goals
3 1 2 0 1 4 2 1, three matches in Belgrade), real SQLite, the real bundled encoder (MiniLM), generation off:
"the same X as A" (one row, a list, how many), the longest run of adjacent rows ("consecutive"), result words
(wins, losses) over a column of results, the rows a filter keeps listed ("which opponents ..."), the one row
"the only" keeps; a question of these kinds the rules cannot read keeps the walk's sentence, not another
operation's value."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.table_workbooks import ask_json

pytestmark = pytest.mark.model


@pytest.mark.parametrize(("question", "value", "kind", "operation"), [
    # Lyon played in "Belgrade, Serbia": the other two matches there
    ("Which opponent was played in the same city as Lyon?", "Ajax; Benfica", "list", "same_as"),
    ("Name an opponent that was played in the same city as Lyon.", "Ajax", "span", "same_as"),
    ("How many matches had the same result as Porto?", "1", "computed", "count"),  # Porto L: Benfica
    ("How many wins did the team have?", "4", "computed", "count"),  # W: Lyon, Ajax, Napoli, Rapid
    ("How many losses did the team have?", "2", "computed", "count"),
    ("Which opponents had an attendance of more than 30000?", "Celtic; Napoli; Sevilla", "list", "list"),
    ("What was the only match in Glasgow?", "Celtic", "span", "lookup"),  # the one row kept: its label
    # Ajax drew 15000: five matches drew more; only Celtic drew more than Napoli's 41000
    ("How many matches had a bigger attendance than Ajax?", "5", "computed", "count"),
    ("Which opponent had a larger attendance than Napoli?", "Celtic", "span", "lookup"),
    # goals above 1 in rows 1, 3, 6, 7: the longest run is Napoli and Sevilla
    ("How many consecutive matches did the team score more than 1 goal?", "2", "computed", "streak"),
])
def test_each_new_kind(matches_library: Path, question: str, value: str, kind: str, operation: str) -> None:
    short = ask_json(matches_library, question)["short_answer"]
    assert short is not None, question
    assert (short["text"], short["kind"], short["operation"]) == (value, kind, operation), question
    assert short["cells"] and all(c["number"] >= 1 for c in short["cells"])  # every cell used is cited


def test_a_streak_cites_the_rows_of_its_run(matches_library: Path) -> None:
    short = ask_json(matches_library, "How many consecutive matches did the team score more than 1 goal?")[
        "short_answer"]
    assert [c["address"] for c in short["cells"]] == ["Matches!B7", "Matches!B8"]  # Napoli, Sevilla


@pytest.mark.parametrize("question", [
    "Which opponent had the same notes as Lyon?",  # Lyon's notes are empty: nothing is "the same"
    "Which city hosted the most consecutive matches?",  # no city twice in a row: no streak to name
    "Which opponent had the same goals?",  # the same as whom: no row named
    "What was the only match in Belgrade?",  # three matches there: "the only" does not hold, no row is chosen
])
def test_an_unread_question_of_these_kinds_keeps_the_walks_sentence(matches_library: Path, question: str) -> None:
    out = ask_json(matches_library, question)
    assert out["short_answer"] is None or not out["short_answer"]["operation"], question
    assert out["answer"]  # the walk's sentence is shown
