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
    store.cache_vectors("m", [("s1", np.ones(4, dtype=np.float32))])
    store.cache_vectors("m", [("s1", np.full(4, 2.0, dtype=np.float32))])  # replaced
    assert store.cached_vectors("m", ["s1"])["s1"].tolist() == [2.0] * 4
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
