"""Embed while parsing: the documents an ingest has written get their vectors while the parse worker (a separate
process) parses the next files, so indexing a folder takes about max(parse, embed) on two cores, not the sum.

    >>> with EmbedAlongside(store.path, collection_id, embedder) as along:  # doctest: +SKIP
    ...     ingest(store, paths, "default", after_write=along.written)
    >>> finish_index(store, collection_id, embedder)  # the rest: vectors not made yet, topics, calibration

A thread with its own :class:`~shelfwise.core.store.db.Store` connection (SQLite WAL: one writer at a time, the
ingest's document writes and this thread's vector writes wait for each other briefly) runs
:func:`~shelfwise.core.indexing.vectors.embed_missing` whenever a document was written, and stops between embedder
batches when the ingest ends. While the parse worker runs, the embedder uses one thread fewer than the cores (two
spinning llama.cpp threads and a parser on two cores lose to one thread); the threads are restored afterwards.
Nothing here is required for correctness: whatever it did not embed, ``finish_index`` does, and a failure here is
logged and left to it.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from shelfwise.core.indexing.vectors import embed_missing
from shelfwise.core.models.backend import Embedder
from shelfwise.core.store.db import Store

log = logging.getLogger(__name__)


class EmbedAlongside:
    """Embeds a collection's new nodes in a background thread while an ingest runs (see the module doc)."""

    def __init__(self, db: Path | None, collection_id: int, embedder: Embedder, *,
                 threads_while_parsing: int | None = None,
                 idle_poll: float = 0.5) -> None:
        self.db = db
        self.collection_id = collection_id
        self.embedder = embedder
        self.threads_before: int | None = embedder.n_threads
        if threads_while_parsing is None and self.threads_before is not None:
            threads_while_parsing = max(1, self.threads_before - 1)
        self.threads_while_parsing = threads_while_parsing
        self.idle_poll = idle_poll
        self.embedded = 0  # nodes that got a vector here
        self.busy_seconds = 0.0  # time spent embedding (the rest the thread waited for documents)
        self.error: str | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.db is None or self._thread is not None:  # an in-memory store cannot be shared across connections
            return
        if self.threads_while_parsing is not None:
            self.embedder.set_threads(self.threads_while_parsing)
        self._thread = threading.Thread(target=self._loop, name="shelfwise-embed-alongside", daemon=True)
        self._thread.start()

    def written(self, document_id: int) -> None:
        """``after_write`` for :func:`~shelfwise.core.ingestion.runner.ingest`: a document is stored."""
        self._wake.set()

    def stop(self) -> int:
        """Stop between batches and wait for the thread; restore the embedder's threads. Returns nodes embedded."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self.threads_before is not None:
            self.embedder.set_threads(self.threads_before)
        return self.embedded

    def _loop(self) -> None:
        assert self.db is not None
        try:
            store = Store(self.db, check=False)
        except Exception as exc:  # the ingest goes on; finish_index embeds everything
            self.error = f"{exc.__class__.__name__}: {exc}"
            log.warning("embedding alongside the ingest is off: %s", self.error)
            return
        try:
            while not self._stop.is_set():
                if not self._wake.wait(self.idle_poll):
                    continue
                self._wake.clear()
                if self._stop.is_set():
                    break
                t0 = time.perf_counter()
                try:
                    self.embedded += embed_missing(store, self.collection_id, self.embedder,
                                                   cancel=self._stop.is_set)
                except Exception as exc:  # e.g. the library locked too long: leave it to finish_index
                    self.error = f"{exc.__class__.__name__}: {exc}"
                    log.warning("embedding alongside the ingest failed (indexing finishes it): %s", self.error)
                    return
                finally:
                    self.busy_seconds += time.perf_counter() - t0
        finally:
            store.close()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


__all__ = ["EmbedAlongside"]
