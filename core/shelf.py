"""The one object the CLI and the GUI hold: a library of documents with its models, and every job on it.

``Shelf`` opens a :class:`Store` and composes the facade's parts (``core/api/``): :class:`Reads` (reading the
library as the front ends show it), :class:`Asking` (questions, the walk, conversations) and :class:`Indexing`
(ingest, the index, calibration, the sentence encoder). The decision model and the embedder load on first need.
Use one ``Shelf`` per thread (the GUI creates it inside its worker thread). No Qt here. What needs no open
library (``shelfwise doctor``, ``models``) is a plain function of ``core/api/``.
"""

from __future__ import annotations

from dataclasses import replace

from shelfwise.core.answers.types import Answer
from shelfwise.core.api.asking import Asking
from shelfwise.core.api.indexing import Indexing, QuestionEvents
from shelfwise.core.api.reads import Reads
from shelfwise.core.indexing.encoder import adopt_identity, encoder_for
from shelfwise.core.models.backend import DecisionBackend, Embedder, RelevanceJudge
from shelfwise.core.models.loaded import Models
from shelfwise.core.navigation.scope import Scope
from shelfwise.core.navigation.trace import SearchResult
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.paths import default_db
from shelfwise.core.settings import Settings
from shelfwise.core.store.db import Store

__all__ = ["Shelf"]


class Shelf(Reads, Asking, Indexing):
    def __init__(
        self,
        settings: Settings | None = None,
        *,
        backend: DecisionBackend | None = None,
        embedder: Embedder | None = None,
        judge: RelevanceJudge | None = None,
        store: Store | None = None,
    ) -> None:
        settings = settings or Settings()
        self._owns_store = store is None  # a store the caller opened (the CLI's) is the caller's to close
        self.store = store if store is not None else Store(settings.db_path or default_db())
        # the library's own encoder unless the settings switch it (a new library: the default)
        self.settings = replace(settings, embedder_path=encoder_for(self.store, settings.embedder_path))
        self._own_encoder = embedder is None
        self.models = Models(self.settings, backend=backend, embedder=embedder, judge=judge,
                             on_embedder=lambda encoder: adopt_identity(self.store, encoder))
        self.walk = LibraryWalk(self.store, self.models)  # what the answer path is handed (never the facade)

    def ask_typed(self, question: str, collection: str = "default", *, scope: Scope | None = None,
                  events: QuestionEvents | None = None) -> Answer:
        """``shelfwise ask`` in one call: ``question`` as typed read once at the door (:meth:`read_at_the_door`:
        EmptyCollection, ScopeError or OnlyFilters before any indexing or model load), the index made ready
        (:meth:`before_question`, said through ``events.on_before`` and ``events.on_index``), then answered
        (:meth:`ask`, its events through ``events``)."""
        events = events or QuestionEvents()
        prepared = self.read_at_the_door(question, collection, scope)
        self.before_question(collection, said=events.on_before, progress=events.on_index)
        return self.ask(prepared, collection, events=events)

    def search_typed(self, question: str, collection: str = "default", *, scope: Scope | None = None,
                     events: QuestionEvents | None = None) -> SearchResult:
        """The walk alone for ``question`` as typed (``shelfwise ask --no-answer``): read and the index made ready as
        in :meth:`ask_typed`, then walked (:meth:`search`), the walk reported through ``events.on_search``."""
        events = events or QuestionEvents()
        prepared = self.read_at_the_door(question, collection, scope)
        self.before_question(collection, said=events.on_before, progress=events.on_index)
        result = self.search(prepared, collection)
        events.searched(result)
        return result

    def close(self, free_models: bool = True) -> None:
        """Close the library (when this shelf opened it) and free the models loaded here. ``free_models=False``:
        a process about to end leaves them loaded (the caller keeps this object alive until then)."""
        if free_models:
            self.models.close()
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> Shelf:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
