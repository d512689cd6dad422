"""What every part of the facade holds: one library's store, its settings, its models (loaded on first use) and
the walk over them (``core/navigation/walk.py``), which the answer path is handed instead of the facade."""

from __future__ import annotations

from shelfwise.core.indexing.encoder import record_encoder
from shelfwise.core.models.backend import Embedder
from shelfwise.core.models.loaded import HoldsModels, Models
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.settings import Settings
from shelfwise.core.store.db import Store

__all__ = ["OpenLibrary"]


class OpenLibrary(HoldsModels):
    """The state the parts share; :class:`~shelfwise.core.shelf.Shelf` sets it when it opens a library. Its
    ``backend``, ``embedder`` and ``judge`` are read from ``models`` (:class:`HoldsModels`)."""

    store: Store
    settings: Settings
    models: Models
    walk: LibraryWalk
    _owns_store: bool  # a store the caller opened (the CLI's) is the caller's to close
    _own_encoder: bool  # False: the encoder was handed in (a test double), never recorded as the library's

    def embedder_or_none(self) -> Embedder | None:
        """The embedder, or None when it cannot be loaded now (indexing then says why when it needs it)."""
        try:
            return self.embedder
        except Exception:
            return None

    def _record(self) -> None:
        """The library is built with the settings' encoder from now on (one handed in, a test double, is not)."""
        if self._own_encoder and self.settings.embedder_path is not None:
            record_encoder(self.store, self.settings.embedder_path)
