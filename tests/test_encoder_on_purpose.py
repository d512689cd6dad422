"""A library's encoder changes only on purpose (issue 50): a question asked once with another ``--embedder`` (here
one that cannot be reached) changes nothing stored; ``index`` with a new encoder does switch it. Through the CLI,
real SQLite, the real bundled MiniLM encoder."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from shelfwise.app.cli.main import main
from shelfwise.core.indexing.encoder import META_KEY
from shelfwise.core.store.db import Store


def _stdout(result) -> str:  # type: ignore[no-untyped-def]
    return getattr(result, "stdout", result.output)


def _recorded(db: Path) -> str | None:
    store = Store(db)
    try:
        value = store.get_meta(META_KEY)
        return None if value is None else str(value)
    finally:
        store.close()


def test_a_failing_embedder_for_one_question_changes_nothing_stored(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "leave.md").write_text("# Leave\n\nEmployees get 27 days of paid annual leave each year.\n")
    (docs / "travel.md").write_text("# Travel\n\nTrain tickets are booked through the travel desk.\n")
    db = tmp_path / "lib.db"
    runner = CliRunner()
    built = runner.invoke(main, ["--db", str(db), "--embedder", "minilm", "ingest", str(docs)])
    assert built.exit_code == 0, built.output
    assert _recorded(db) == "minilm"

    failed = runner.invoke(main, ["--db", str(db), "--embedder", "http://127.0.0.1:9", "ask",
                                  "How many days of annual leave?", "--no-generate"])
    assert "Traceback" not in failed.output
    assert _recorded(db) == "minilm"  # the unreachable URL was stored here before the fix

    status = json.loads(_stdout(runner.invoke(main, ["--db", str(db), "status", "--json"])))
    assert status["embedder"] == "minilm"
    plain = runner.invoke(main, ["--db", str(db), "ask", "How many days of annual leave?", "--no-generate",
                                 "--json"])
    assert plain.exit_code == 0, plain.output
    assert "27 days" in json.dumps(json.loads(_stdout(plain))["passages"])


def test_index_with_a_new_encoder_switches_on_purpose(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Cats\n\nCats sleep sixteen hours a day.\n")
    db = tmp_path / "lib.db"
    runner = CliRunner()
    assert runner.invoke(main, ["--db", str(db), "--embedder", "minilm", "ingest", "--no-index",
                                str(docs)]).exit_code == 0
    store = Store(db)
    try:
        store.set_meta(META_KEY, "embeddinggemma")  # as if built with the other encoder
    finally:
        store.close()
    switched = runner.invoke(main, ["--db", str(db), "--embedder", "minilm", "index"])
    assert switched.exit_code == 0, switched.output
    assert _recorded(db) == "minilm"
