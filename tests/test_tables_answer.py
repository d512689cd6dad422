"""Table questions computed from the stored tables (issue 49), without a model: the sample workbook's lookups,
counts, averages, sums, extremes, ranges and differences in English, German and French, each cell cited; a
question the table cannot answer gives None; a table too big to read whole is read column by column with the same
answers."""

from __future__ import annotations

import pytest

from shelfwise.core.answers import tables as table_answers
from shelfwise.core.answers.tables import answer_from_tables, load_tables
from shelfwise.core.answers.types import ShortAnswer
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.core.store.tables import tables_of_documents
from shelfwise.ingest import xlsx
from shelfwise.resources import path as resource_path

SAMPLE = resource_path("sample", "benefits-and-pay.xlsx")

CASES = [  # question, value, operation, first cell cited
    ("What is the maximum salary for band L5?", "102,000", "lookup", "Salary bands!F6"),
    ("Wie hoch ist das Maximum für Band L3?", "68,000", "lookup", "Salary bands!F4"),
    ("How many holidays does the Lisbon office have?", "8", "count", "Holidays 2026!C2"),  # the row's name first
    ("How many bands are there?", "7", "count", "Salary bands!A2"),
    ("What is the average midpoint?", "77,571.43", "average", "Salary bands!E2"),
    ("Quel est le salaire moyen (midpoint) ?", "77,571.43", "average", "Salary bands!E2"),
    ("Which band has the widest range?", "L7", "argmax", "Salary bands!A8"),
    ("Which band has the highest midpoint?", "L7", "argmax", "Salary bands!A8"),
    ("What is the total of the minimum salaries?", "462,000", "sum", "Salary bands!D2"),
    ("How many holidays are after 2026-06-01?", "6", "count", "Holidays 2026!C9"),
    ("Who provides health insurance?", "Meridian Health", "lookup", "Benefits!B3"),
    ("When is the annual salary review?", "1 April", "lookup", "Salary bands!B13"),
    ("What is the difference between the maximum and minimum for L2?", "14,000", "difference", "Salary bands!F3"),
]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = Store(tmp_path_factory.mktemp("t") / "lib.db")
    store.write_document(store.collection("default").id, SAMPLE, FileMeta(1, 1.0, "a" * 64), xlsx.parse(SAMPLE))
    return store


def _ask(store: Store, question: str) -> ShortAnswer | None:
    tables = tables_of_documents(store.conn, [d.id for d in store.documents()])
    return answer_from_tables(load_tables(store.conn, tables), question)


@pytest.mark.parametrize("big", [False, True], ids=["whole", "by-column"])
def test_the_sample_workbook_questions(sample: Store, big: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if big:
        monkeypatch.setattr(table_answers, "MAX_CELLS", 0)  # every table read column by column
    for question, value, op, first in CASES:
        short = _ask(sample, question)
        assert short is not None, question
        assert (short.text, short.operation, short.cells[0].address) == (value, op, first), question
        assert short.explanation


def test_what_a_table_cannot_answer_is_not_guessed(sample: Store) -> None:
    for question in ("What is the VPN policy for contractors?", "How do I reset my password?",
                     "What is the maximum salary for band L9?",
                     # the sample's text questions: a table's column "Day" is not what they count or ask for
                     "How many days of paid annual leave does a full-time employee get per year?",
                     "Within how many days of returning must an expense claim be submitted?",
                     "What time should a new starter arrive on the first day?"):
        assert _ask(sample, question) is None, question
