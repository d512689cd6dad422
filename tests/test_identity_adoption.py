"""A library written before the one identity rule (``core/models/identity.py``) keeps its vectors, calibration and
index state: its encoder's old name (``FILE:SHA16``) is renamed to the file's identity when the same file is next
used with it (``core/indexing/encoder.py``, ``adopt_identity``). Real SQLite, the real bundled MiniLM, the CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from shelfwise.app.cli.main import main
from shelfwise.core.models.identity import file_sha_id, model_identity
from shelfwise.core.store.db import Store
from shelfwise.core.store.model_ids import rename_model, stored_models


def _as_before_the_rule(db: Path, new: str, old: str) -> None:
    """What the release before wrote: every vector and meta entry under the encoder's ``FILE:SHA16`` name."""
    with sqlite3.connect(db) as conn:
        for table in ("embeddings", "vector_cache"):
            conn.execute(f"UPDATE {table} SET model = replace(model, ?, ?)", (new, old))
        conn.execute("DELETE FROM meta WHERE key LIKE 'identity_adopted:%'")
        for key, value in conn.execute("SELECT key, value FROM meta").fetchall():
            if new in key or new in (value or ""):
                conn.execute("DELETE FROM meta WHERE key = ?", (key,))
                conn.execute("INSERT INTO meta VALUES (?, ?)", (key.replace(new, old), (value or "").replace(new, old)))


def _names(db: Path) -> tuple[set[str], list[str]]:
    with sqlite3.connect(db) as conn:
        models = {r[0] for t in ("embeddings", "vector_cache") for r in conn.execute(f"SELECT model FROM {t}")}
        keys = [r[0] for r in conn.execute("SELECT key FROM meta")]
    return models, keys


@pytest.mark.model
def test_a_library_from_before_the_rule_is_renamed_and_searched_without_re_embedding(tmp_path: Path) -> None:
    from shelfwise.core.models.encoders.embedder import bundled_embedder_path

    minilm = bundled_embedder_path()
    new, old = model_identity(minilm), file_sha_id(minilm)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "leave.md").write_text("# Leave\n\nFull-time employees receive 27 days of paid annual leave.\n\n"
                                   "## Travel\n\nMeals are refunded up to 30 euros a day.\n")
    db = tmp_path / "lib.db"
    runner = CliRunner()
    r = runner.invoke(main, ["--db", str(db), "--embedder", "minilm", "ingest", str(docs)])
    assert r.exit_code == 0, r.output
    before_models, before_keys = _names(db)
    assert new in before_models and any(new in k for k in before_keys)
    _as_before_the_rule(db, new, old)
    assert new not in _names(db)[0] and f"{old}#sentences" in _names(db)[0]

    r = runner.invoke(main, ["--db", str(db), "ask", "How many days of annual leave?", "--no-answer", "--json"])
    assert r.exit_code == 0, r.output
    hits = json.loads(r.stdout)["passages"]
    assert hits and "27 days" in hits[0]["text"]
    models, keys = _names(db)
    assert models == before_models  # the same names as the library written after the rule: nothing re-embedded
    by_model = sorted(k for k in before_keys if new in k)  # calibration, index state: under the identity again
    assert by_model and sorted(k for k in keys if new in k) == by_model
    r = runner.invoke(main, ["--db", str(db), "index"])
    assert r.exit_code == 0 and "0 nodes embedded" in r.output, r.output


def test_renaming_keeps_rows_the_new_name_has_and_moves_tagged_names(tmp_path: Path) -> None:
    with Store(tmp_path / "lib.db") as store:
        store.set_meta("decision:1:old.gguf:0123456789abcdef|none", {"w": 1})
        store.set_meta("sentences:1", "sig:old.gguf:0123456789abcdef:3")
        store.cache_vectors("old.gguf:0123456789abcdef#sentences", [("a" * 64, np.ones(4, np.float32))])
        store.cache_vectors("old.gguf:0123456789abcdef", [("b" * 64, np.ones(4, np.float32)),
                                                           ("c" * 64, np.ones(4, np.float32))])
        store.cache_vectors("gguf:00000000000000aa", [("c" * 64, np.zeros(4, np.float32))])
        assert rename_model(store, "old.gguf:0123456789abcdef", "gguf:00000000000000aa") == 2
        assert stored_models(store) == {"gguf:00000000000000aa"}
        assert store.get_meta("decision:1:gguf:00000000000000aa|none") == {"w": 1}
        assert store.get_meta("sentences:1") == "sig:gguf:00000000000000aa:3"
        kept = store.cached_vectors("gguf:00000000000000aa", ["c" * 64])
        assert np.array_equal(kept["c" * 64], np.zeros(4, np.float32))  # the new name's row wins
        assert set(store.cached_vectors("gguf:00000000000000aa#sentences", ["a" * 64])) == {"a" * 64}
