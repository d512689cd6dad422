"""Finish a collection's index (embeddings, topic clusters, calibration) and clear its pending mark.

The mark is set by every document write, in the write's transaction (``Store.index_pending``); it is cleared here
only when the whole index is done and nothing was written meanwhile, so a kill at any point leaves it set and the
next ingest, question or app start finishes the work (see :mod:`shelfwise.core.ingestion.indexing`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from shelfwise.core.navigation.calibrate import ensure_calibrated
from shelfwise.core.navigation.index import refresh_collection
from shelfwise.core.settings import Settings
from shelfwise.core.store.db import Store


@dataclass
class IndexProgress:
    stage: str  # "embedding" | "topics" | "calibrating" | "done"
    done: int
    total: int


def finish_index(
    store: Store, collection_id: int, embedder: Any, settings: Settings | None = None,
    progress: Callable[[IndexProgress], None] | None = None,
) -> dict[str, int]:
    """Embed what has no vector, rebuild topic clusters if needed, recalibrate; then clear the pending mark
    (unless a document was written meanwhile). Returns ``{"embedded": n, "clusters": n}``."""
    settings = settings or Settings()
    token = store.index_pending(collection_id)

    def embedded(done: int, total: int) -> None:
        if progress is not None:
            progress(IndexProgress("embedding", done, total))

    result = refresh_collection(store, collection_id, embedder, settings.budgets, embedded)
    if progress is not None:
        progress(IndexProgress("calibrating", 0, 1))
    if settings.use_calibration:
        ensure_calibrated(store, collection_id, embedder, None, settings)
    if token:
        store.index_done(collection_id, token)
    if progress is not None:
        progress(IndexProgress("done", 1, 1))
    return result
