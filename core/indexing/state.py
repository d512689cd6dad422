"""How far a collection's index is: pending work (:func:`index_state`), what a background indexer last reported
(:func:`index_status`, for ``shelfwise status`` and the window), and the lock that keeps a second indexer of the same
library from starting (:func:`exclusive_indexer`).

Writing a document marks its collection's index pending (``Store.index_pending``);
:func:`~shelfwise.core.indexing.finish.finish_index` clears the mark only when vectors, topics and calibration are
all done (see :mod:`shelfwise.core.ingestion.lock`).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from shelfwise.core.indexing.finish import complete_key, index_complete, indexer_alive, stored_progress
from shelfwise.core.store.db import Store
from shelfwise.core.store.snapshot import tree_version


@dataclass
class IndexState:
    collection_id: int
    token: int  # Store.index_pending: 0 = up to date
    without_vectors: int  # documents, sections and passages with no vector yet

    @property
    def unfinished(self) -> bool:
        return self.token != 0 or self.without_vectors > 0


def index_state(store: Store, collection_id: int, model: str | None = None) -> IndexState:
    """How far the collection's index is; ``model``: count the nodes without a vector from that embedder (a library
    embedded with another one is unfinished for it)."""
    token = store.index_pending(collection_id)
    if not token and _complete(store, collection_id, model):
        return IndexState(collection_id, 0, 0)  # nothing written since a complete run: no count of every node
    return IndexState(collection_id, token, store.nodes_without_vectors(collection_id, model))


def _complete(store: Store, collection_id: int, model: str | None) -> bool:
    """Whether a complete index run left the collection at its present tree version: with ``model``, or (None:
    any encoder's vectors count) with any encoder, whose vector every node then has. The window's start and
    ``status`` ask with None: at 10^6 passages the count they would make instead is a scan of every node."""
    if model is not None:
        return index_complete(store, collection_id, model)
    version = tree_version(store, collection_id)
    rows = store.conn.execute("SELECT value FROM meta WHERE key LIKE ?", (complete_key(collection_id, "%"),))
    return any(json.loads(value) == version for (value,) in rows)


def _index_lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".index.lock")


@contextlib.contextmanager
def exclusive_indexer(db: Path | None, wait: float = 0.0, on_wait: Callable[[], None] | None = None,
                      cancel: Callable[[], bool] | None = None) -> Iterator[bool]:
    """True if this process is the only indexer of the library (a second ``shelfwise index`` then just exits).
    ``wait``: seconds to wait for the other indexer to finish first (``on_wait`` is called once when it must;
    ``cancel`` ends the wait early, with False); one collection is indexed by one process (or thread: each holds
    its own open file) at a time, so two ingests never race each other's index."""
    if db is None:
        yield True
        return
    try:
        import fcntl
    except ImportError:
        yield True
        return
    try:
        fd = os.open(_index_lock_path(db), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield True
        return
    try:
        deadline = time.monotonic() + wait
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline or (cancel is not None and cancel()):
                    yield False
                    return
                if not told and on_wait is not None:
                    on_wait()
                    told = True
                time.sleep(0.2)
        yield True
    finally:
        os.close(fd)


@dataclass
class CollectionIndex:
    """How far one collection's index is (``shelfwise status``; ``--json`` prints these fields)."""

    collection: str
    unfinished: bool  # vectors, topics or calibration still to do
    pending: int  # documents, sections and passages without a vector yet (found by their words meanwhile)
    running: bool  # a live indexer process is working on it
    stage: str | None = None  # the indexer's last report: "starting" | "embedding" | "calibrating" | "done"
    done: int | None = None  # of that stage
    total: int | None = None
    eta_seconds: float | None = None  # of that stage, counted down since the report
    pid: int | None = None


def index_status(store: Store) -> list[CollectionIndex]:
    out = []
    for coll in store.collections():
        state = index_state(store, coll.id)
        p = stored_progress(store, coll.id)
        running = state.unfinished and indexer_alive(p)
        item = CollectionIndex(coll.name, state.unfinished, state.without_vectors, running)
        if p is not None and (running or not state.unfinished):
            eta = None if p.eta_seconds is None else max(0.0, p.eta_seconds - (time.time() - p.updated))
            item.stage, item.done, item.total, item.eta_seconds, item.pid = p.stage, p.done, p.total, eta, p.pid
        out.append(item)
    return out
