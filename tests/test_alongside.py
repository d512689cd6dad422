"""Embedding alongside an ingest: the documents written so far get vectors while the next files are parsed, the
embedder gives the parse worker a core meanwhile, and whatever is left is finished afterwards. Real SQLite and the
real ingest runner and Markdown parser; a hashed bag-of-words embedder (logic only: the real embedder's speed with
and without the overlap is in benchmarks/product/index.py)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np

from shelfwise.core.indexing.alongside import EmbedAlongside
from shelfwise.core.indexing.vectors import refresh_collection
from shelfwise.core.ingestion.runner import ingest
from shelfwise.core.store.db import Store
from shelfwise.ingest import registry
from shelfwise.ingest.model import Limits, ParsedDocument
from tests.fakes import HashEmbedder


class ThreadedEmbedder(HashEmbedder):
    window = 256

    def __init__(self) -> None:
        self.n_threads = 2
        self.thread_log: list[int] = []  # n_threads at each embed call
        self.callers: set[str] = set()

    def set_threads(self, n: int) -> None:
        self.n_threads = n

    def embed(self, texts):
        self.thread_log.append(self.n_threads)
        self.callers.add(threading.current_thread().name)
        return super().embed(texts)


def _folder(tmp_path: Path, n: int) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(n):
        body = "\n\n".join(f"Paragraph {j} of note {i} about topic{i} and item{j}." for j in range(6))
        (docs / f"note{i:02d}.md").write_text(f"# Note {i}\n\n## Part\n\n{body}\n", encoding="utf-8")
    return docs


def test_written_documents_get_vectors_while_the_next_files_parse(tmp_path: Path) -> None:
    docs = _folder(tmp_path, 6)
    store = Store(tmp_path / "lib.db")
    cid = store.collection("default").id
    emb = ThreadedEmbedder()
    watcher = Store(tmp_path / "lib.db", read_only=True)
    waited: list[float] = []

    def parse(path: Path, limits: Limits) -> ParsedDocument:
        # Before parsing the next file, wait until every node written so far has a vector: only an embedder
        # working during the ingest can make that happen (the ingest itself is blocked here).
        t0 = time.monotonic()
        while watcher.nodes_without_vectors(cid) > 0 and time.monotonic() - t0 < 20:
            time.sleep(0.02)
        waited.append(time.monotonic() - t0)
        assert watcher.nodes_without_vectors(cid) == 0, f"nothing embedded while parsing {path.name}"
        return registry.parse(path, limits)

    with EmbedAlongside(store.path, cid, emb) as along:
        report = ingest(store, [docs], "default", parse=parse, after_write=along.written)
    assert report.counts["added"] == 6 and not report.failed
    assert along.embedded > 0 and along.error is None
    assert emb.callers == {"shelfwise-embed-alongside"}  # all of it in the background thread
    assert set(emb.thread_log) == {1} and emb.n_threads == 2  # one core left to the parser; restored after
    rest = refresh_collection(store, cid, emb)  # the last document's vectors (written after the last parse)
    assert store.nodes_without_vectors(cid) == 0
    kinds = [n.kind for n in store.iter_nodes(collection_id=cid)]
    assert along.embedded + rest["embedded"] == sum(k in ("document", "section", "passage") for k in kinds)
    assert along.embedded >= kinds.count("passage") * 5 // 6  # all but the last file's, at least
    watcher.close()
    store.close()


def test_vectors_of_a_node_replaced_meanwhile_are_dropped_not_an_error(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.db")
    cid = store.collection("default").id
    ingest(store, [_folder(tmp_path, 1)], "default", isolate=False)
    [node] = [n for n in store.iter_nodes(collection_id=cid) if n.kind == "passage"][:1]
    gone = max(n.id for n in store.iter_nodes(collection_id=cid)) + 100
    store.set_embeddings("m", [(node.id, np.ones(4, np.float32)), (gone, np.ones(4, np.float32))])
    ids, _ = store.embeddings("m")
    assert ids.tolist() == [node.id]
    store.close()


def test_in_memory_store_does_nothing_alongside() -> None:
    emb = ThreadedEmbedder()
    with EmbedAlongside(None, 1, emb) as along:
        along.written(1)
    assert along.embedded == 0 and emb.thread_log == [] and emb.n_threads == 2
