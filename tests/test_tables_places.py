"""A bound on a place, where a smaller number is better (issue 49): "above 4th" keeps places 1 to 3, "below 8th
place" places 9 and lower, "not lower than #5" places 1 to 5, "ranked higher than 10" (a place word before the
number) places 1 to 9; read against the table's column of places ("Finish", with cells such as "4th"), not as a
number above or below. Asked through the CLI (``shelfwise ask --json``, click's runner) over a small real workbook
(MiniLM, real SQLite), generation off."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.table_workbooks import ask_json, workbook_library

pytestmark = pytest.mark.model

SEASONS = [  # season, league, finish, points
    ("2015/16", "Second Division", "3rd", 71), ("2016/17", "Second Division", "1st", 84),
    ("2017/18", "First Division", "12th", 45), ("2018/19", "First Division", "9th", 52),
    ("2019/20", "First Division", "5th", 58), ("2020/21", "First Division", "4th", 61),
    ("2021/22", "First Division", "2nd", 70), ("2022/23", "First Division", "8th", 50),
]


def _write(path: Path) -> Path:
    import openpyxl

    path.parent.mkdir(parents=True, exist_ok=True)
    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.append(["Season", "League", "Finish", "Points"])
    for row in SEASONS:
        ws.append(list(row))
    wb.save(str(path))
    return path


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return workbook_library(tmp_path_factory.mktemp("places"), _write, "seasons.xlsx")


@pytest.mark.parametrize(("question", "count"), [
    ("How many seasons did they finish above 4th?", "3"),  # 3rd, 1st, 2nd (not the 12th, 9th, 5th, 8th)
    ("How many seasons did they finish below 8th place?", "2"),  # 12th, 9th
    ("How many seasons was their finish not lower than #5?", "5"),  # 3rd, 1st, 5th, 4th, 2nd
    ("How many seasons did they finish better than 9th place?", "6"),
])
def test_a_place_bound_keeps_the_better_or_worse_places(library: Path, question: str, count: str) -> None:
    short = ask_json(library, question)["short_answer"]
    assert short is not None and short["text"] == count, (question, short)
    assert short["operation"] == "count" and short["cells"]


def test_a_number_without_a_place_word_is_still_a_number() -> None:
    from shelfwise.core.answers.table_intent import read_intent

    comps = read_intent("How many seasons had over 60 points?").comparisons
    assert [(c.kind, c.low) for c in comps] == [("number", 60.0)]
    comps = read_intent("How many racers finished under 6:00.00?").comparisons
    assert all(c.kind != "place" for c in comps)
