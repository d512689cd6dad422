"""The absent-subject not-found rule (core/answers/coverage.py) while an index run is part of the way (issue 48): the
walk answers by words from the passages without a vector yet, and the rule must not say "Not found" for a question
whose passage has no vector yet. The rule reads the library's full-text index, which ``ingest`` fills as it writes
the documents, before any vector: a word of a passage not embedded yet is in the library. Pinned here with the
default encoder (EmbeddingGemma, whose answer values turn the rule on) on a real library whose index run stopped
after its first batch (built as tests/test_partial_index.py builds its own). It held before this test, which pins
it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from shelfwise.app.cli.main import main
from shelfwise.core.answers.coverage import absent_terms
from shelfwise.core.ingestion.lock import ingest_lock
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from tests.test_partial_index import QUESTION, _docs, ingest_and_index_one_batch

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory, embeddinggemma_model: Path) -> tuple[Path, list[str]]:
    """The library stopped after its index run's first batch: the bicycle shed's passage (written last) has no
    vector; its path, and the texts of the passages without one."""
    tmp = tmp_path_factory.mktemp("partial-answers")
    db = tmp / "lib.db"
    with Shelf(Settings(db_path=db, embedder_path="embeddinggemma")) as shelf:
        ingest_and_index_one_batch(shelf, _docs(tmp))
        unembedded = [str(r[0]) for r in shelf.store.conn.execute(
            "SELECT n.text FROM nodes n LEFT JOIN embeddings e ON e.node_id = n.id "
            "WHERE n.kind = 'passage' AND e.node_id IS NULL")]
        # what the rule reads: the question's words, held by the library's full-text index already
        coll = shelf.store.find_collection("default")
        assert coll is not None
        absent = absent_terms(shelf.store, QUESTION, coll.id)
        assert absent.keys == (), absent  # no key term absent: "bicycle", "shed", "building" are held
    assert any("bicycle shed" in t for t in unembedded), "the first batch embedded the bicycle shed's passage"
    return db, unembedded


def _ask(db: Path, question: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "SHELFWISE_EMBEDDER"}
    with ingest_lock(db):  # as while an index run goes on elsewhere: answered from what is indexed so far
        r = CliRunner(env=env).invoke(main, ["--db", str(db), "--embedder", "embeddinggemma", "ask", "--no-generate",
                                             "--json", question])
    assert r.exit_code == 0, r.output
    return json.loads(r.output[r.output.index("{"):])


def test_a_question_whose_passage_has_no_vector_yet_is_not_said_not_found(library: tuple[Path, list[str]]) -> None:
    db, _ = library
    out = _ask(db, QUESTION)
    assert out["found"], out["answer"]
    assert "bicycle shed" in out["citations"][0]["text"] or "06:30" in out["answer"], out["answer"]
    short = out["short_answer"]
    assert short is not None and "06:30" in short["text"], out["answer"]


def test_a_question_the_library_does_not_answer_is_still_not_found(library: tuple[Path, list[str]]) -> None:
    # the rule still works part of the way: what this question asks about is in no passage, embedded or not
    db, unembedded = library
    assert not any("dress" in t.lower() for t in unembedded)
    out = _ask(db, "When does the dress shop behind building C open?")
    assert not out["found"], out["answer"]
