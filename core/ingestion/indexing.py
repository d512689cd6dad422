"""Unfinished indexing: find it, and know when an ingest is running elsewhere.

Writing a document marks its collection's index pending in the same transaction (``Store.index_pending``); the
mark is cleared only when embeddings, topic clusters and calibration are all done and nothing was written
meanwhile (:func:`shelfwise.core.navigation.finish.finish_index`). So a kill at any point during ingest or
indexing leaves the mark set, and the next ingest (even one that finds every file unchanged), the next question,
or the app's start finishes the work, with progress.

An ingest holds a shared lock on ``<library>.ingest.lock`` (``fcntl.flock``; several ingests may run at once) for
as long as it runs. A question asked meanwhile sees the lock (:func:`ingest_running`) and answers from what is
already indexed instead of waiting for, or fighting over, the writer; the front end says so.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from shelfwise.core.store.db import Store


@dataclass
class IndexState:
    collection_id: int
    token: int  # Store.index_pending: 0 = up to date
    without_vectors: int  # documents, sections and passages with no vector yet

    @property
    def unfinished(self) -> bool:
        return self.token != 0 or self.without_vectors > 0


def index_state(store: Store, collection_id: int) -> IndexState:
    return IndexState(collection_id, store.index_pending(collection_id), store.nodes_without_vectors(collection_id))


def _lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".ingest.lock")


@contextlib.contextmanager
def ingest_lock(db: Path | None) -> Iterator[None]:
    """Held (shared) for the length of an ingest, so questions can tell an ingest is running."""
    if db is None:
        yield
        return
    try:
        import fcntl
    except ImportError:  # Windows: no shared flock; questions then cannot tell
        yield
        return
    try:
        fd = os.open(_lock_path(db), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # a read-only folder: nothing can ingest there anyway
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # releases the lock


def ingest_running(db: Path | None) -> bool:
    """True while another process (or thread) ingests into the library at ``db``."""
    if db is None:
        return False
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fd = os.open(_lock_path(db), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False
