"""Indexing without re-embedding: vectors keyed by text hash survive re-ingest; the cache migrates in and is
bounded; embedding stops between batches when cancelled. Real SQLite, a hashed bag-of-words embedder that counts
what it is asked to embed (logic only: the real embedder's speed is in benchmarks/product/index.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from shelfwise.core.indexing.vectors import embed_missing, refresh_collection
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.core.store.migrations import MIGRATIONS, migrate
from shelfwise.ingest.model import Location, ParsedDocument, ParsedNode
from tests.fakes import HashEmbedder


class CountingEmbedder(HashEmbedder):
    window = 128

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen.extend(texts)
        return super().embed(texts)


def _doc(texts: list[str], title: str = "Handbook") -> ParsedDocument:
    passages = [ParsedNode(kind="passage", title="", text=t, location=Location(page=1)) for t in texts]
    return ParsedDocument(title=title, format="md", pages=1,
                          children=[ParsedNode(kind="section", title="Rules", children=passages)])


def test_reingest_embeds_only_changed_text(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.db")
    cid = store.collection("default").id
    texts = [f"passage number {i} about zeppelins and rule {i}" for i in range(40)]
    store.write_document(cid, "/a.md", FileMeta(1, 1.0, "v1"), _doc(texts))
    emb = CountingEmbedder()
    first = refresh_collection(store, cid, emb)
    assert first["embedded"] == 42  # 40 passages, 1 section, 1 document have vectors...
    assert len(emb.seen) == 41  # ...the section's is its passages' mean (no embedder call)
    ids_before, vecs_before = store.embeddings(emb.model_id, kinds=["passage"])

    emb.seen.clear()
    changed = [*texts[:39], "a brand new last passage about balloons"]
    store.write_document(cid, "/a.md", FileMeta(1, 2.0, "v2"), _doc(changed))  # replaces every node
    assert store.nodes_without_vectors(cid) == 42
    again = refresh_collection(store, cid, emb)
    assert again["embedded"] == 42  # every new node has a vector again...
    assert emb.seen == [s for s in emb.seen if "balloons" in s] and len(emb.seen) == 1  # ...one was embedded
    assert store.nodes_without_vectors(cid) == 0
    ids_after, vecs_after = store.embeddings(emb.model_id, kinds=["passage"])
    assert not set(ids_before.tolist()) & set(ids_after.tolist())  # new nodes
    np.testing.assert_array_equal(vecs_before[:39], vecs_after[:39])  # same text, same vector
    store.close()


def test_cache_key_includes_the_window(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.db")
    cid = store.collection("default").id
    store.write_document(cid, "/a.md", FileMeta(1, 1.0, "v1"), _doc(["one text only"]))
    emb = CountingEmbedder()
    embed_missing(store, cid, emb)
    store.write_document(cid, "/a.md", FileMeta(1, 2.0, "v2"), _doc(["one text only"]))
    wider = CountingEmbedder()
    wider.window = 256  # the same text cut to another window is another vector
    embed_missing(store, cid, wider)
    assert len(wider.seen) == 2  # the passage and the document
    store.close()


def test_cancel_stops_between_batches_and_keeps_what_is_stored(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.db")
    cid = store.collection("default").id
    store.write_document(cid, "/a.md", FileMeta(1, 1.0, "v1"), _doc([f"text {i} here" for i in range(100)]))
    emb = CountingEmbedder()
    calls = []

    def cancel() -> bool:
        return len(calls) >= 2  # the first report (0 done) and one batch

    done = embed_missing(store, cid, emb, progress=lambda d, t: calls.append((d, t)), cancel=cancel)
    assert 0 < done < 102 and store.nodes_without_vectors(cid) == 102 - done
    assert embed_missing(store, cid, emb) == 102 - done  # the rest on the next run
    store.close()


def test_cache_is_bounded_least_recently_used_first(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.db")
    vec = np.ones(4, np.float32)
    store.cache_vectors("m", [("a", vec), ("b", vec)])
    store.cache_vectors("m", [("c", vec)])
    assert set(store.cached_vectors("m", ["a"])) == {"a"}  # a is now the most recently used
    assert store.prune_vector_cache("m", 2) == 1
    assert set(store.cached_vectors("m", ["a", "b", "c"])) == {"a", "c"}
    store.close()


def test_vector_cache_migrates_into_an_existing_library(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    conn = sqlite3.connect(str(db), isolation_level=None)
    names = [n for n, _ in MIGRATIONS]
    migrate(conn, db, MIGRATIONS[: names.index("0004_vector_cache")])
    conn.execute("INSERT INTO collections(id, name, created_at, root_node_id) VALUES (1, 'old', 'x', NULL)")
    conn.close()
    store = Store(db)
    assert "0004_vector_cache" in store.migrations_applied
    assert store.find_collection("old") is not None
    store.cache_vectors("m", [("a", np.zeros(3, np.float32))])
    assert store.cached_vectors("m", ["a", "z"])["a"].shape == (3,)
    store.close()


def test_finish_index_reports_eta_and_stores_progress_for_other_processes(tmp_path: Path) -> None:
    import io

    from shelfwise.app.cli.index import IndexLine
    from shelfwise.core.indexing.finish import finish_index, stored_progress
    from shelfwise.core.settings import Settings

    store = Store(tmp_path / "lib.db")
    cid = store.collection("default").id
    store.write_document(cid, "/a.md", FileMeta(1, 1.0, "v1"), _doc([f"text {i} about item {i}" for i in range(200)]))
    seen = []
    out = io.StringIO()
    line = IndexLine(out)

    def progress(p):
        seen.append(p)
        line(p)

    finish_index(store, cid, CountingEmbedder(), Settings(use_calibration=False), progress)
    emb = [p for p in seen if p.stage == "embedding"]
    assert emb[0].done == 0 and emb[-1].done == emb[-1].total == 202
    assert emb[0].eta_seconds is None and all(p.eta_seconds is not None for p in emb[1:-1])
    assert "ETA" in out.getvalue() and "embedding 202/202 (100%)" in out.getvalue()
    last = stored_progress(store, cid)
    assert last is not None and last.stage == "done" and last.pid > 0
    assert store.index_pending(cid) == 0
    store.close()


def test_section_vector_is_its_passages_mean_and_an_empty_section_is_embedded(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.db")
    cid = store.collection("default").id
    inner = ParsedNode(kind="section", title="Inner", children=[
        ParsedNode(kind="passage", title="", text="gamma delta words", location=Location(page=1))])
    outer = ParsedNode(kind="section", title="Outer", children=[
        ParsedNode(kind="passage", title="", text="alpha beta words", location=Location(page=1)), inner])
    empty = ParsedNode(kind="section", title="Appendix heading only", children=[])
    store.write_document(cid, "/a.md", FileMeta(1, 1.0, "v1"),
                         ParsedDocument(title="Doc", format="md", pages=1, children=[outer, empty]))
    emb = CountingEmbedder()
    refresh_collection(store, cid, emb)
    assert any("Appendix heading only" in t for t in emb.seen)  # nothing beneath it: its own text
    assert len(emb.seen) == 4  # two passages, the document, the empty section; not Outer or Inner
    ids, vecs = store.embeddings(emb.model_id, collection_id=cid)
    vec = dict(zip(ids.tolist(), vecs, strict=True))
    nodes = {n.title or n.text: n for n in store.iter_nodes(collection_id=cid)}
    p1, p2 = vec[nodes["alpha beta words"].id], vec[nodes["gamma delta words"].id]
    mean = (p1 + p2) / np.linalg.norm(p1 + p2)
    step = 1 / 127  # vectors are kept as int8 (each value within half a step of its scale)
    np.testing.assert_allclose(vec[nodes["Outer"].id], mean, atol=step)  # nested passages count
    np.testing.assert_allclose(vec[nodes["Inner"].id], p2, atol=step)
    assert store.nodes_without_vectors(cid) == 0
    store.close()
