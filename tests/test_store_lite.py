"""The store's sqlite-utils half (``core/store/lite.py``): writes inside the store's own transaction, the schema
left exactly as the migrations made it, the FTS5 rebuild, the table listing ``doctor`` prints."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shelfwise.core.store.db import FileMeta, Store
from shelfwise.core.store.lite import fts_tables, tables
from tests.test_store import handbook

META = FileMeta(size=10, mtime=1.0, sha256="a" * 64)


def _schema(store: Store) -> list[tuple[str, str]]:
    return [(str(n), str(s)) for n, s in store.conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name")]


def test_writes_leave_the_schema_as_the_migrations_made_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.db")
    before = _schema(store)
    cid = store.collection("c").id
    doc = store.write_document(cid, tmp_path / "a.md", META, handbook())
    store.write_document(cid, tmp_path / "a.md", META, handbook("allowance"))  # replaced: the same id
    assert store.documents(cid)[0].id == doc and store.documents(cid)[0].status == "ok"
    store.record_failure(cid, tmp_path / "b.pdf", META, "error", "broken", retry=True)
    store.cache_vectors("m", [("s1", np.array([1.0, 0, 0, 0], dtype=np.float32))])
    store.cache_vectors("m", [("s1", np.array([0, 1.0, 0, 0], dtype=np.float32))])  # replaced (a unit vector)
    assert store.cached_vectors("m", ["s1"])["s1"].tolist() == [0.0, 1.0, 0.0, 0.0]
    store.set_meta("k", {"a": 1})
    store.set_meta("k", [2])  # upserted
    assert store.get_meta("k") == [2]
    assert _schema(store) == before
    assert store.conn.execute("PRAGMA recursive_triggers").fetchone()[0] == 0  # sqlite-utils set no pragma
    failed = [d for d in store.documents(cid) if d.status == "error"]
    assert [(d.message, d.retry) for d in failed] == [("broken", True)]
    store.close()


def test_a_failed_write_rolls_back_with_the_store_transaction(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.db")
    cid = store.collection("c").id
    with pytest.raises(RuntimeError), store.transaction():
        store.set_meta("inside", 1)
        store.cache_vectors("m", [("s", np.ones(2, dtype=np.float32))])
        raise RuntimeError("stop")
    assert store.get_meta("inside") is None and store.cached_vectors("m", ["s"]) == {}
    assert store.documents(cid) == []
    store.close()


def test_fts_rebuild_and_the_table_listing(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.db")
    cid = store.collection("c").id
    store.write_document(cid, tmp_path / "a.md", META, handbook())
    hits = store.search_ids("reimbursement")
    assert hits
    store.rebuild_fts()
    assert store.search_ids("reimbursement") == hits
    assert "ok" in store.integrity_check()
    listed = {t.name: t.rows for t in tables(store.conn)}
    assert listed["documents"] == 1 and listed["collections"] == 1 and listed["nodes"] > 3
    assert "nodes_fts" not in listed and not any(n.startswith("nodes_fts_") for n in listed)
    assert fts_tables(store.conn) == ["nodes_fts"]
    store.close()


def _old_put_document(self: Store, collection_id: int, path: str, record: dict[str, object],
                      doc_id: int | None) -> int:
    """The document row as the store wrote it before sqlite-utils (an UPDATE / INSERT built from column names)."""
    from shelfwise.core.store.types import path_key

    if doc_id is not None:
        sets = ", ".join(f"{c} = ?" for c in record)
        self.conn.execute(f"UPDATE documents SET {sets} WHERE id = ?", (*record.values(), doc_id))
        return doc_id
    cur = self.conn.execute(
        f"INSERT INTO documents(collection_id, path, {', '.join(record)}) VALUES (?, ?{', ?' * len(record)})",
        (collection_id, path_key(path), *record.values()))
    return int(cur.lastrowid or 0)


def _old_insert_rows(conn, table, columns, rows, *, replace=False):  # type: ignore[no-untyped-def]
    verb = "INSERT OR REPLACE" if replace else "INSERT"
    conn.executemany(f"{verb} INTO {table}({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows)


def _old_set_meta(self: Store, key: str, value: object) -> None:
    import json

    with self.transaction():
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, json.dumps(value, ensure_ascii=False)))


def _everything(store: Store) -> dict[str, list[tuple[object, ...]]]:
    out = {}
    for table in ("collections", "documents", "nodes", "vector_cache", "meta"):
        cols = [r[1] for r in store.conn.execute(f"PRAGMA table_info({table})")
                if r[1] not in ("ingested_at", "created_at", "used")]
        out[table] = store.conn.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY 1, 2").fetchall()
    return out


def test_sqlite_utils_writes_the_same_rows_as_the_sql_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same documents, failures, cached vectors and meta written through sqlite-utils and through the SQL the
    store had before give the same rows (timestamps aside)."""
    from shelfwise.core.store import db as store_db

    def fill(store: Store) -> dict[str, list[tuple[object, ...]]]:
        cid = store.collection("c").id
        store.write_document(cid, tmp_path / "a.md", META, handbook())
        store.write_document(cid, tmp_path / "b.md", META, handbook("allowance"))
        store.write_document(cid, tmp_path / "a.md", META, handbook("mileage"))  # replaced in place
        store.record_failure(cid, tmp_path / "c.pdf", META, "needs_ocr", "scanned", retry=False)
        store.record_failure(cid, tmp_path / "c.pdf", META, "error", "still broken", retry=True)
        store.cache_vectors("m", [("s1", np.ones(3, dtype=np.float32)), ("s2", np.zeros(3, dtype=np.float32))])
        store.cache_vectors("m", [("s1", np.full(3, 5.0, dtype=np.float32))])
        store.set_meta("k", {"a": [1, "é"]})
        store.set_meta("k", "again")
        return _everything(store)

    with Store(tmp_path / "new.db") as new:
        now = fill(new)
    monkeypatch.setattr(Store, "_put_document", _old_put_document)
    monkeypatch.setattr(store_db, "insert_rows", _old_insert_rows)
    monkeypatch.setattr(Store, "set_meta", _old_set_meta)
    with Store(tmp_path / "old.db") as old:
        before = fill(old)
    assert now == before and now["documents"] and now["nodes"]


def test_doctor_rebuilds_a_word_index_out_of_step_with_the_passages(tmp_path: Path) -> None:
    # the word index says a passage holds "ghostly" that no passage holds (as a crash between the index and the
    # rows could leave it): FTS5's own check finds it, and doctor rebuilds the index from the passages
    from click.testing import CliRunner

    from shelfwise.app.cli.main import main
    from shelfwise.core.api.doctor import check_library
    from shelfwise.core.store import fts

    db = tmp_path / "lib.db"
    with Store(db) as store:
        store.write_document(store.collection("c").id, tmp_path / "a.md", META, handbook())
        ghost = int(store.conn.execute("SELECT max(id) FROM nodes").fetchone()[0])
        with store.transaction():  # an index entry whose row says otherwise
            store.conn.execute("INSERT INTO nodes_fts(rowid, title, heading_text, text) VALUES (?, '', '', ?)",
                               (ghost, fts.fts_index_text("ghostly")))
        assert store.search_ids("ghostly", limit=5)
    result = CliRunner().invoke(main, ["--db", str(db), "doctor"])
    assert result.exit_code == 0, result.output
    assert "out of step with the passages" in result.output and "checked again: ok" in result.output
    assert "The library is healthy." in result.output
    with Store(db) as store:
        assert not store.search_ids("ghostly", limit=5) and store.search_ids("alcohol", limit=5)
    again = check_library(db)  # healthy now: nothing to rebuild
    assert again.diagnosis.ok and again.words_rebuilt == ""
