"""Store: migrations, document write/replace/failure, FTS sync, hostile search, embeddings, meta, transactions."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from shelfwise.core.store.db import KEPT_SUFFIX, FileMeta, Store, StoreError
from shelfwise.core.store.migrations import MIGRATIONS, applied, migrate
from shelfwise.core.store.textutil import describe, fts_query, lead_sentence
from shelfwise.ingest.model import Location, ParsedDocument, ParsedNode

META = FileMeta(size=100, mtime=1.0, sha256="a" * 64)


def passage(text: str, page: int | None = None, title: str = "") -> ParsedNode:
    return ParsedNode("passage", title, text, Location(page=page))


def section(title: str, *children: ParsedNode, page: int | None = None) -> ParsedNode:
    return ParsedNode("section", title, location=Location(page=page), children=list(children))


def handbook(word: str = "reimbursement") -> ParsedDocument:
    return ParsedDocument(
        title="Travel Handbook",
        format="pdf",
        pages=3,
        warnings=["page 2 has no text"],
        children=[
            section(
                "Claims",
                section(
                    "Meals",
                    passage(f"Meal {word} is capped at 40 euros per day. Receipts are required.", 1),
                    passage("Alcohol is never refunded.", 2),
                    page=1,
                ),
                passage("Submit claims within 30 days of travel.", 2),
                page=1,
            ),
            section("Booking", passage("Book trains through the portal; flights need approval.", 3), page=3),
        ],
    )


@pytest.fixture
def store() -> Store:
    s = Store(":memory:")
    yield s
    s.close()


# ----------------------------------------------------------------------------- migrations
def test_migrations_from_empty(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    s = Store(db)
    assert s.migrations_applied == [name for name, _ in MIGRATIONS]
    assert s.backup_path is None  # nothing to back up in a new database
    assert s.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert s.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    tables = {r[0] for r in s.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"collections", "documents", "nodes", "nodes_fts", "embeddings", "meta", "migrations"} <= tables
    s.close()
    again = Store(db)
    assert again.migrations_applied == [] and again.backup_path is None
    again.close()
    assert list(tmp_path.glob("*.bak")) == []


def test_migration_from_previous_version_backs_up_and_indexes_old_rows(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    conn = sqlite3.connect(str(db), isolation_level=None)
    migrate(conn, db, MIGRATIONS[:1])  # the database as the previous version left it
    conn.execute("INSERT INTO collections(id, name, created_at, root_node_id) VALUES (1, 'old', 'x', 1)")
    conn.execute("INSERT INTO nodes(id, collection_id, kind, title) VALUES (1, 1, 'collection', 'old')")
    conn.execute("INSERT INTO documents(id, collection_id, path, status, ingested_at) "
                 "VALUES (1, 1, '/a.pdf', 'ok', 'x')")
    conn.execute(
        "INSERT INTO nodes(id, collection_id, document_id, parent_id, kind, text) "
        "VALUES (2, 1, 1, 1, 'passage', 'zeppelins fly slowly')"
    )
    conn.close()

    s = Store(db)
    assert s.migrations_applied == [name for name, _ in MIGRATIONS[1:]]
    assert s.backup_path is not None and s.backup_path.exists()
    old = sqlite3.connect(str(s.backup_path))
    assert applied(old) == [MIGRATIONS[0][0]]  # the backup is the previous version, data included
    assert old.execute("SELECT text FROM nodes WHERE id = 2").fetchone()[0] == "zeppelins fly slowly"
    old.close()
    hits = s.search("zeppelin")  # rows written before the FTS table existed are indexed by the migration
    assert [n.id for n, _ in hits] == [2]
    assert s.integrity_check() == "ok"
    s.close()


def test_migration_0011_keeps_float32_vectors_as_int8_and_they_rank_the_same(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    before = Store(db)
    conn = before.conn
    conn.execute("DELETE FROM migrations WHERE name = '0011_int8_vectors'")  # the version before: float32 blobs
    conn.execute("INSERT INTO collections(id, name, created_at, root_node_id) VALUES (1, 'old', 'x', 1)")
    conn.execute("INSERT INTO nodes(id, collection_id, kind, title) VALUES (1, 1, 'collection', 'old')")
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((30, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    for i, v in enumerate(vecs, start=2):
        conn.execute("INSERT INTO nodes(id, collection_id, parent_id, kind, text) VALUES (?, 1, 1, 'passage', 'p')",
                     (i,))
        conn.execute("INSERT INTO embeddings(node_id, model, dim, vector) VALUES (?, 'm', 16, ?)", (i, v.tobytes()))
    conn.execute("INSERT INTO vector_cache(model, sha, dim, vector, used) VALUES ('m', 'abc', 16, ?, 1.0)",
                 (vecs[0].tobytes(),))
    before.close()
    s = Store(db)
    assert s.migrations_applied == ["0011_int8_vectors"] and s.backup_path is not None
    sizes = {r[0] for r in s.conn.execute("SELECT length(vector) FROM embeddings UNION "
                                          "SELECT length(vector) FROM vector_cache")}
    assert sizes == {16}
    ids, got = s.embeddings("m")
    assert ids.tolist() == list(range(2, 32)) and np.abs(got - vecs).max() < 1 / 127
    query = vecs[7] + 0.1 * vecs[9]
    assert np.argsort(-(got @ query))[:3].tolist() == np.argsort(-(vecs @ query))[:3].tolist()
    assert np.abs(s.cached_vectors("m", ["abc"])["abc"] - vecs[0]).max() < 1 / 127
    s.close()


def test_unusable_files_raise_a_clear_store_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match=r"Cannot open the library .*junk\.db: file is not a database"):
        Store(junk)
    newer = tmp_path / "newer.db"
    Store(newer).close()
    conn = sqlite3.connect(str(newer))
    conn.execute("INSERT INTO migrations(name, applied_at) VALUES ('9999_future', 'x')")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer version of Shelfwise"):
        Store(newer)


def test_failed_migration_rolls_back(tmp_path: Path) -> None:
    conn = sqlite3.connect(str(tmp_path / "x.db"), isolation_level=None)

    def broken(c: sqlite3.Connection) -> None:
        c.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        migrate(conn, tmp_path / "x.db", [("0001_broken", broken)])
    assert applied(conn) == []
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").fetchone()[0] == 0


# ----------------------------------------------------------------------------- writing documents
def test_collection_get_or_create(store: Store) -> None:
    c = store.collection("Handbooks")
    assert store.collection("Handbooks").id == c.id
    root = store.node(c.root_node_id)
    assert root is not None and root.kind == "collection" and root.depth == 0 and root.title == "Handbooks"
    assert [x.name for x in store.collections()] == ["Handbooks"]
    with pytest.raises(ValueError):
        store.collection("  ")


def test_write_document_builds_the_tree(store: Store) -> None:
    c = store.collection("default")
    doc_id = store.write_document(c.id, "/docs/travel.pdf", META, handbook())
    doc = store.document(doc_id)
    assert doc is not None
    assert (doc.status, doc.title, doc.pages, doc.sections, doc.passages) == ("ok", "Travel Handbook", 3, 3, 4)
    assert doc.warnings == ["page 2 has no text"] and doc.sha256 == META.sha256
    assert store.document_by_path(c.id, "/docs/travel.pdf") == doc

    [doc_node] = store.children(c.root_node_id)
    assert (doc_node.kind, doc_node.depth, doc_node.document_id) == ("document", 1, doc_id)
    assert doc_node.description.startswith("Travel Handbook: Meal reimbursement is capped")
    claims, booking = store.children(doc_node.id)
    assert (claims.title, claims.ordinal, claims.depth, booking.ordinal) == ("Claims", 0, 2, 1)
    meals, submit = store.children(claims.id)
    assert submit.kind == "passage" and submit.heading_path == ["Claims"]
    first = store.children(meals.id)[0]
    assert first.heading_path == ["Claims", "Meals"] and first.depth == 4
    assert first.location == Location(page=1)
    assert first.description == "Meal reimbursement is capped at 40 euros per day."
    assert meals.description == "Meals: Meal reimbursement is capped at 40 euros per day."
    assert [a.kind for a in store.ancestors(first.id)] == ["collection", "document", "section", "section"]
    texts = [p.text for p in store.passages(document_id=doc_id)]
    assert texts[0].startswith("Meal") and texts[-1].startswith("Book trains")  # reading order
    assert len(store.passages(collection_id=c.id)) == 4


def test_replace_document_swaps_tree_and_fts(store: Store) -> None:
    c = store.collection("default")
    first = store.write_document(c.id, "/docs/travel.pdf", META, handbook("reimbursement"))
    assert store.search("reimbursement")
    second = store.write_document(c.id, "/docs/travel.pdf", FileMeta(120, 2.0, "b" * 64), handbook("zebrafish"))
    assert second == first  # the document keeps its id
    assert store.search("reimbursement") == []
    assert [n.text.split()[1] for n, _ in store.search("zebrafish")] == ["zebrafish"]
    assert len(list(store.iter_nodes(collection_id=c.id))) == 1 + 1 + 3 + 4  # root, document, sections, passages
    assert store.document(first).sha256 == "b" * 64
    assert store.integrity_check() == "ok"


def test_replace_keeps_cluster_parent(store: Store) -> None:
    c = store.collection("default")
    store.write_document(c.id, "/a.pdf", META, handbook())
    cur = store.conn.execute(
        "INSERT INTO nodes(collection_id, parent_id, kind, depth, title) VALUES (?, ?, 'cluster', 1, 'Travel')",
        (c.id, c.root_node_id),
    )
    cluster = cur.lastrowid
    store.conn.execute("UPDATE nodes SET parent_id = ?, depth = 2 WHERE kind = 'document'", (cluster,))
    store.write_document(c.id, "/a.pdf", META, handbook("zebrafish"))
    [doc_node] = store.children(cluster)
    assert doc_node.kind == "document" and doc_node.depth == 2
    assert store.children(doc_node.id)[0].depth == 3


def test_record_failure_without_previous_version(store: Store) -> None:
    c = store.collection("default")
    doc_id = store.record_failure(c.id, "/scan.pdf", META, "needs_ocr", "no text layer: needs OCR")
    doc = store.document(doc_id)
    assert (doc.status, doc.message, doc.format, doc.passages) == ("needs_ocr", "no text layer: needs OCR", "pdf", 0)
    assert list(store.iter_nodes(kinds=["document", "section", "passage"])) == []
    with pytest.raises(ValueError):
        store.record_failure(c.id, "/scan.pdf", META, "ok", "nope")
    # A later successful parse replaces the error row.
    assert store.write_document(c.id, "/scan.pdf", META, handbook()) == doc_id
    assert (store.document(doc_id).status, store.document(doc_id).message) == ("ok", "")


def test_record_failure_keeps_previous_ok_version(store: Store) -> None:
    c = store.collection("default")
    doc_id = store.write_document(c.id, "/a.pdf", META, handbook())
    nodes_before = len(list(store.iter_nodes()))
    newer = FileMeta(999, 5.0, "c" * 64)
    assert store.record_failure(c.id, "/a.pdf", newer, "error", "corrupt file") == doc_id
    doc = store.document(doc_id)
    assert doc.status == "ok" and doc.message == "corrupt file" + KEPT_SUFFIX
    assert doc.size == META.size  # old metadata kept, so the next run retries the changed file
    assert len(list(store.iter_nodes())) == nodes_before and store.search("reimbursement")
    store.mark_unchanged(doc_id, META)
    assert store.document(doc_id).message == ""


def test_remove_document_cleans_nodes_fts_and_embeddings(store: Store) -> None:
    c = store.collection("default")
    keep = store.write_document(c.id, "/keep.pdf", META, handbook("keepsake"))
    gone = store.write_document(c.id, "/gone.pdf", META, handbook("goner"))
    ids = [p.id for p in store.passages(document_id=gone)]
    store.set_embeddings("m", [(i, np.ones(4)) for i in ids])
    store.remove_document(gone)
    assert store.document(gone) is None and store.passages(document_id=gone) == []
    assert store.search("goner") == [] and store.search("keepsake")
    assert store.embeddings("m")[0].size == 0
    # Through the FTS index alone (no join with nodes), so stale entries would show.
    assert store.conn.execute("SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH 'goner'").fetchone()[0] == 0
    assert store.conn.execute("SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH 'keepsake'").fetchone()[0] == 1
    assert store.document(keep) is not None and store.integrity_check() == "ok"


def test_transaction_rolls_back_everything(store: Store) -> None:
    c = store.collection("default")
    with pytest.raises(RuntimeError), store.transaction():
        store.write_document(c.id, "/a.pdf", META, handbook())
        raise RuntimeError("abort")
    assert store.documents() == [] and store.search("reimbursement") == []
    with store.transaction():  # a nested failure rolls back only its savepoint
        store.write_document(c.id, "/a.pdf", META, handbook())
        with pytest.raises(RuntimeError), store.transaction():
            store.set_meta("k", 1)
            raise RuntimeError("inner")
    assert len(store.documents()) == 1 and store.get_meta("k") is None


# ----------------------------------------------------------------------------- search
def test_search_ranks_filters_and_stems(store: Store) -> None:
    c = store.collection("default")
    other = store.collection("other")
    store.write_document(c.id, "/a.pdf", META, handbook())
    store.write_document(other.id, "/b.pdf", META, ParsedDocument("B", "txt", [passage("claims claims claims")]))
    hits = store.search("claim", limit=10)  # porter: claim ~ claims; heading path "Claims" also indexed
    assert hits and all(s1 >= s2 for (_, s1), (_, s2) in itertools.pairwise(hits))
    assert hits[0][0].text == "claims claims claims"
    assert all(n.collection_id == c.id for n, _ in store.search("claim", collection_id=c.id))
    sections = store.search("meals", kinds=("section",))
    assert [n.title for n, _ in sections] == ["Meals"]
    assert len(store.search("claim", limit=1)) == 1
    hit = store.search_hits("alcohol refunded")[0]
    assert "[Alcohol]" in hit.snippet and hit.score > 0


def test_search_ids_rows_and_snippets_agree_on_order_and_scores(store: Store) -> None:
    c = store.collection("default")
    store.write_document(c.id, "/a.pdf", META, handbook())
    store.write_document(c.id, "/b.pdf", META, ParsedDocument("B", "txt", [passage("claims claims claims")]))
    for query in ("claims", "meal receipts alcohol", "submit claims within 30 days"):
        ids = store.search_ids(query, limit=3)
        rows = store.search(query, limit=3)
        hits = store.search_hits(query, limit=3)
        assert ids and ids == [(n.id, sc) for n, sc in rows] == [(h.node.id, h.score) for h in hits]
        assert all(s1 >= s2 for (_, s1), (_, s2) in itertools.pairwise(ids))
        assert all("[" in h.snippet for h in hits)  # each returned row has its own snippet
    assert store.search_ids("claims", document_ids=[]) == [] and store.search_ids("", limit=5) == []


@pytest.mark.parametrize(
    "query",
    ['"AND (', "AND", "NOT", "a OR", "*", "title:meal", "NEAR(meal receipts)", "", "   ", '"""', "(((", ")",
     "'; DROP TABLE nodes; --", "\x00", "meal*", "^meal", "-meal", "+", 'meal" OR "x', "x" * 5000,
     " ".join(["meal"] * 500), "über-straße", "日本語", "_", "{title text}: meal"],
)
def test_hostile_search_strings_never_raise(store: Store, query: str) -> None:
    c = store.collection("default")
    store.write_document(c.id, "/a.pdf", META, handbook())
    result = store.search(query)
    assert isinstance(result, list)
    if "meal" in query.lower():
        assert result, query
    assert store.conn.execute("SELECT count(*) FROM nodes").fetchone()[0] > 0


def test_fts_query_and_descriptions() -> None:
    assert fts_query('"AND (') == '"AND"'
    assert fts_query("meal OR meal, Meal") == '"meal" OR "OR"'
    assert fts_query("()*:^") is None
    assert lead_sentence("Fig. 3 shows the flow. Next sentence.") == "Fig. 3 shows the flow."
    assert lead_sentence("word " * 100).endswith("\u2026") and len(lead_sentence("word " * 100)) <= 201
    assert describe("Intro", "Intro to the whole guide. More.") == "Intro to the whole guide."
    assert describe("", "") == "" and describe("Title", "") == "Title"


# ----------------------------------------------------------------------------- embeddings, meta, stats
def test_embeddings_roundtrip_missing_and_cascade(store: Store) -> None:
    c = store.collection("default")
    doc_id = store.write_document(c.id, "/a.pdf", META, handbook())
    passages = store.passages(document_id=doc_id)
    rng = np.random.default_rng(0)
    vecs = {p.id: (v / np.linalg.norm(v)).astype(np.float32) for p in passages
            for v in [rng.standard_normal(8)]}  # unit vectors, as every stored vector is
    store.set_embeddings("minilm", list(vecs.items()))
    ids, matrix = store.embeddings("minilm")
    assert ids.dtype == np.int64 and matrix.dtype == np.float32 and matrix.shape == (4, 8)
    for i, row in zip(ids, matrix, strict=True):  # kept as int8: each value within a step of the original
        v = vecs[int(i)]
        np.testing.assert_allclose(row, v, rtol=0, atol=float(np.abs(v).max()) / 127)
        assert abs(float(np.linalg.norm(row)) - 1) < 1e-5
    blob_bytes = store.conn.execute("SELECT length(vector) FROM embeddings LIMIT 1").fetchone()[0]
    assert blob_bytes == 8  # a byte a dimension (float32 took 32)
    assert store.embeddings("minilm", kinds=["section"])[0].size == 0
    assert store.embeddings("other")[1].shape == (0, 0)
    missing = store.nodes_missing_embedding("minilm")
    assert {n.kind for n in missing} == {"document", "section"} and len(missing) == 4
    store.set_embeddings("minilm", [(passages[0].id, np.zeros(8))])  # replace one
    assert store.embeddings("minilm")[1][0].sum() == 0
    store.set_embeddings("minilm", [(missing[0].id, np.zeros(3))])
    with pytest.raises(ValueError, match="mixed dimensions"):
        store.embeddings("minilm")
    store.write_document(c.id, "/a.pdf", META, handbook())  # replacing the document drops its vectors
    assert store.embeddings("minilm")[0].size == 0
    assert store.stats().embeddings_by_model == {}


def test_meta_and_stats(store: Store) -> None:
    assert store.get_meta("calibration", {"a": 1}) == {"a": 1}
    store.set_meta("calibration", {"weights": [0.5, 1.5], "name": "ü"})
    store.set_meta("calibration", {"weights": [1.0]})
    assert store.get_meta("calibration") == {"weights": [1.0]}
    c = store.collection("default")
    store.write_document(c.id, "/a.pdf", META, handbook())
    store.record_failure(c.id, "/b.pdf", META, "error", "corrupt")
    st = store.stats()
    assert (st.collections, st.documents) == (1, 2)
    assert st.documents_by_status == {"ok": 1, "error": 1}
    assert st.nodes_by_kind == {"collection": 1, "document": 1, "section": 3, "passage": 4}
    assert store.get_meta("tree_version") >= 1


def test_two_first_ingests_into_one_new_library_at_once_both_land(tmp_path: Path) -> None:
    # switching a new library to WAL needs it alone (SQLite does not wait for that), and both create the 'default'
    # collection; measured before the fix: 6 of 30 such pairs lost one ingest ("database is locked" or "UNIQUE
    # constraint failed: collections.name")
    import subprocess
    import sys

    shelfwise = str(Path(sys.executable).with_name("shelfwise"))
    folders = []
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / f"{name}.md").write_text(f"# {name.upper()}\n\nThe {name} notes are here.\n", encoding="utf-8")
        folders.append(folder)
    for i in range(15):
        db = tmp_path / f"new{i}.db"
        procs = [subprocess.Popen([shelfwise, "--db", str(db), "ingest", str(f), "--no-index"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for f in folders]
        outs = [p.communicate(timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], outs
        with Store(db) as store:
            assert len(store.documents()) == 2 and len(store.collections()) == 1


def test_a_full_disk_inside_a_transaction_is_reported_as_a_full_disk(tmp_path: Path) -> None:
    """Issue 38: SQLite rolls a transaction back by itself on a full disk; the store's own ROLLBACK then failed and
    "cannot rollback - no transaction is active" replaced the real error. (The database is capped with
    max_page_count, which fails the same way a full disk does.)"""
    store = Store(tmp_path / "lib.db")
    store.conn.execute("PRAGMA max_page_count = 60")
    with pytest.raises(sqlite3.OperationalError, match="full"), store.transaction() as conn:
        for i in range(2000):
            conn.execute("INSERT INTO meta(key, value) VALUES (?, ?)", (str(i), "x" * 3000))
    assert not store.conn.in_transaction
    store.conn.execute("PRAGMA max_page_count = 1000000")
    with store.transaction() as conn:  # the library is usable again once there is room
        conn.execute("INSERT INTO meta(key, value) VALUES ('after', '1')")
    store.close()


def test_a_location_is_written_with_every_field() -> None:
    """``location_json`` names Location's fields one by one (a hot path): a field added to Location and not there
    would be lost on the way into the library."""
    from dataclasses import fields

    from shelfwise.core.store.types import location_json

    full = Location(page=1, page_end=2, slide=3, sheet="S", cells="A1:B2", line=4, boxes=((1, 0.0, 0.0, 1.0, 1.0),))
    assert all(getattr(full, f.name) is not None for f in fields(Location))
    assert Location.from_dict(json.loads(location_json(full))) == full
