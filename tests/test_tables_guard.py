"""The wrong-table guard of the table path (issue 49): a library of two real workbooks (a season's fixtures, a
company's offices), real SQLite; the walk's first passage a row of the fixtures sheet, the question about the
offices. The loose matching (a part of a cell) must answer from the table that has the question's words, not from
the walk's first table: "How many offices are in Vienna?" once counted the match in "Vienna, Austria"."""

from __future__ import annotations

import pytest

from shelfwise.core.answers.tables import table_answer
from shelfwise.core.navigation.lookup import LibraryLookup
from shelfwise.core.navigation.trace import Hit
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.ingest import xlsx
from tests.table_workbooks import write_matches, write_offices


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Store:
    root = tmp_path_factory.mktemp("two-workbooks")
    store = Store(root / "lib.db")
    coll = store.collection("default").id
    for i, path in enumerate([write_matches(root / "matches.xlsx"), write_offices(root / "offices.xlsx")]):
        store.write_document(coll, path, FileMeta(1, 1.0, str(i) * 64), xlsx.parse(path))
    return store


def _row_hit(store: Store, sheet: str, row: int) -> Hit:
    """The passage holding a table row, as the walk would return it."""
    node = store.conn.execute("SELECT r.node_id FROM table_rows r JOIN doc_tables t ON t.id = r.table_id "
                              "WHERE t.sheet = ? AND r.row = ?", (sheet, row)).fetchone()
    hit = LibraryLookup(store).hit_for_node(int(node[0]), 0.9)
    assert hit is not None
    return hit


def test_a_loose_match_answers_from_the_table_the_question_is_about(library: Store) -> None:
    # the walk's first passage is a fixtures row (the Vienna match), the offices' rows after it
    hits = [_row_hit(library, "Matches", 7), _row_hit(library, "Offices", 0)]
    short = table_answer(library, "How many offices are in Vienna?", hits, None)
    assert short is not None
    assert (short.text, short.operation) == ("2", "count")
    assert [c.address for c in short.cells] == ["Offices!A2", "Offices!A3"]


def test_the_walks_table_still_answers_what_it_has(library: Store) -> None:
    # the question is about the fixtures: the loose match on them stands
    hits = [_row_hit(library, "Matches", 0), _row_hit(library, "Offices", 0)]
    short = table_answer(library, "How many matches were played in Belgrade?", hits, None)
    assert short is not None
    assert (short.text, short.operation) == ("3", "count")
    assert short.cells[0].address.startswith("Matches!")


@pytest.mark.model
def test_a_tables_column_names_are_embedded_once_for_every_process(library: Store) -> None:
    # the encoder's column names kept in the library's vector cache: a second encoder (a new process: nothing kept
    # in memory) embeds only the question's words, not the table's names again (the real bundled MiniLM)
    from shelfwise.core.answers.table_intent import read_intent
    from shelfwise.core.answers.table_match import HeaderEncoder
    from shelfwise.core.models.encoders.embedder import Embedder

    embedder = Embedder("minilm", n_threads=1)
    embedded: list[str] = []

    class Counting:
        model_id, window = embedder.model_id, embedder.window

        def embed(self, texts: list[str]) -> list[object]:
            embedded.extend(texts)
            return embedder.embed(texts)  # type: ignore[no-any-return]

    names = ["Office", "Staff", "Opened"]
    intent = read_intent("How many people work in each office?")
    for run in range(2):
        embedded.clear()
        encoder = HeaderEncoder(Counting(), 0.5, 0.05)  # type: ignore[arg-type]
        encoder.store = library
        encoder.scores(intent, names, [1.0, 0.0, 0.0])
        said = {"office", "staff", "opened"} & set(embedded)
        assert said == ({"office", "staff", "opened"} if run == 0 else set()), embedded
        assert "people" in embedded  # the question's own words are embedded each time
