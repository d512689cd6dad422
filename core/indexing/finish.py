"""Finish a collection's index (embeddings, topic clusters, calibration) and clear its pending mark.

The mark is set by every document write, in the write's transaction (``Store.index_pending``); it is cleared here
only when the whole index is done and nothing was written meanwhile, so a kill at any point leaves it set and the
next ingest, question or app start finishes the work (see :mod:`shelfwise.core.ingestion.lock`).

Progress goes to the caller's callback (with an ETA from the rate so far) and, every couple of seconds, to the
store's meta (:func:`stored_progress`), so another process (``shelfwise status``, a question asked meanwhile) can
say how far a background indexer is.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from shelfwise.core.indexing.sentences import embed_sentences
from shelfwise.core.indexing.vectors import refresh_collection
from shelfwise.core.models.backend import Embedder
from shelfwise.core.navigation.calibrate import ensure_calibrated
from shelfwise.core.navigation.snapshots import snapshot_for
from shelfwise.core.settings import Settings
from shelfwise.core.store.db import Store
from shelfwise.core.store.snapshot import tree_version

log = logging.getLogger(__name__)
STORE_EVERY = 2.0  # seconds between progress rows written to the meta table


@dataclass
class IndexProgress:
    stage: str  # "starting" | "embedding" | "sentences" (for the extractive answer) | "calibrating" | "done"
    done: int
    total: int
    eta_seconds: float | None = None  # of this stage, from its rate so far (None until it can be told)
    elapsed: float = 0.0  # seconds since this indexing run started
    pid: int = 0  # the process doing the work
    updated: float = 0.0  # time.time() of this report

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0


def progress_key(collection_id: int) -> str:
    return f"index_progress:{collection_id}"


def stored_progress(store: Store, collection_id: int) -> IndexProgress | None:
    """The last progress an indexer of this collection wrote (any process), or None."""
    text = store.get_meta(progress_key(collection_id))
    if not text:
        return None
    try:
        return IndexProgress(**json.loads(text))
    except (TypeError, ValueError):
        return None


def mark_started(store: Store, collection_id: int, pid: int, total: int) -> None:
    """Record that process ``pid`` was started to index the collection (before it has reported anything), so a
    question asked in its first seconds answers from what exists instead of indexing too."""
    p = IndexProgress("starting", 0, total, None, 0.0, pid, time.time())
    store.set_meta(progress_key(collection_id), json.dumps(asdict(p)))


def indexer_alive(p: IndexProgress | None) -> bool:
    """Whether the process that wrote ``p`` is another live process still indexing (not done)."""
    if p is None or p.stage == "done" or p.pid <= 0 or p.pid == os.getpid():
        return False
    if time.time() - p.updated > 1800:  # no report for half an hour: treat as gone (its pid may be reused)
        return False
    try:
        os.kill(p.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Reporter:
    """Adds elapsed time and ETA to each report, forwards it, and stores it every ``STORE_EVERY`` seconds."""

    def __init__(self, store: Store, collection_id: int, callback: Callable[[IndexProgress], None] | None) -> None:
        self.store, self.cid, self.callback = store, collection_id, callback
        self.t0 = time.monotonic()
        self.stored_at = 0.0
        self.rate_from: dict[str, tuple[float, int]] = {}  # stage -> (time, done) of its first report

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        eta = None
        start = self.rate_from.setdefault(stage, (now, done))  # embedding: the first report counts cached vectors
        t, d = start
        if done > d and now > t:
            eta = (total - done) * (now - t) / (done - d)
        p = IndexProgress(stage, done, total, eta, now - self.t0, os.getpid(), time.time())
        if self.callback is not None:
            self.callback(p)
        if not self.store.read_only and (now - self.stored_at >= STORE_EVERY or done >= total
                                         or start[0] == now):
            self.stored_at = now
            self.store.set_meta(progress_key(self.cid), json.dumps(asdict(p)))


def complete_key(collection_id: int, model: str) -> str:
    return f"index_complete:{collection_id}:{model}"


def index_complete(store: Store, collection_id: int, model: str) -> bool:
    """Whether the last complete index run of the collection with ``model`` left it at its present tree version:
    every write of a document, removal, re-clustering or new vector changes the version
    (``core/store/snapshot.py``, ``tree_version``), so nothing has been added since that needs a vector."""
    return store.get_meta(complete_key(collection_id, model)) == tree_version(store, collection_id)


def finish_index(
    store: Store, collection_id: int, embedder: Embedder, settings: Settings | None = None,
    progress: Callable[[IndexProgress], None] | None = None, cancel: Callable[[], bool] | None = None,
) -> dict[str, int]:
    """Embed what has no vector, rebuild topic clusters if needed, embed the extractive answer's sentences
    (:func:`~shelfwise.core.indexing.sentences.embed_sentences`), recalibrate; then
    clear the pending mark (unless a document was written meanwhile). ``cancel()`` stops between embedding batches
    (the mark stays; the next run goes on). Returns ``{"embedded": n, "clusters": n}``."""
    settings = settings or Settings()
    token = store.index_pending(collection_id)
    if not token and index_complete(store, collection_id, embedder.model_id):
        # nothing written since the last complete run: no scan of every node for missing vectors (a question
        # on a library of 10^6 passages paid two such scans, ~1 s each: docs/scale.md, "Growth")
        if settings.use_calibration:
            ensure_calibrated(store, collection_id, embedder, None, settings)
        return {"embedded": 0, "clusters": 0}
    log.debug("stage: embedding")  # stage markers (``shelfwise -v``): the reliability runs aim kills by them
    report = _Reporter(store, collection_id, progress)
    result = refresh_collection(store, collection_id, embedder, settings.budgets,
                                lambda done, total: report("embedding", done, total), cancel)
    if cancel is not None and cancel():
        return result
    embed_sentences(store, collection_id, embedder, lambda done, total: report("sentences", done, total), cancel)
    if cancel is not None and cancel():
        return result
    log.debug("stage: calibration")
    report("calibrating", 0, 1)
    if settings.use_calibration:
        ensure_calibrated(store, collection_id, embedder, None, settings,
                          progress=lambda done, total: report("calibrating", done, total))
    snapshot_for(store, collection_id, embedder.model_id)  # written beside the library now, not at the next question
    if token:
        store.index_done(collection_id, token)
    if not store.index_pending(collection_id) and not store.nodes_without_vectors(collection_id, embedder.model_id):
        store.set_meta(complete_key(collection_id, embedder.model_id), tree_version(store, collection_id))
    report("done", 1, 1)
    log.debug("stage: done")
    return result
