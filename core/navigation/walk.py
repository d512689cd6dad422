"""The one way a library is searched: a store, its settings and its models with the walk over them. The facade
builds one (``OpenLibrary.walk``) and hands it, never itself, to the answer path and the conversation, so a
question's path goes facade -> answers -> walk -> navigator and never back up into the facade. Evaluation and
test doubles subclass :class:`LibraryWalk` and fill in only :meth:`LibraryWalk.walk` (as Dangerzone's isolation
providers fill in their own steps of one ``convert``)."""

from __future__ import annotations

from dataclasses import replace

from shelfwise.core.models.backend import CancelCheck
from shelfwise.core.models.loaded import HoldsModels, Models
from shelfwise.core.navigation.request import SearchRequest
from shelfwise.core.navigation.trace import SearchResult, Trace
from shelfwise.core.settings import Settings
from shelfwise.core.store.db import Store


class LibraryWalk(HoldsModels):
    """A library the answer path asks: ``search`` (written once, here), the models it was asked with, its settings
    and its store (``backend``, ``embedder`` and ``judge``: :class:`HoldsModels`). ``collection``: the collection a
    request that names none searches (else "default")."""

    def __init__(self, store: Store, models: Models, *, collection: str | None = None) -> None:
        self.store = store
        self.models = models
        self.settings: Settings = models.settings
        self.collection = collection

    def search(self, request: SearchRequest, cancel: CancelCheck | None = None) -> SearchResult:
        """Walk the tree level by level for ``request`` (``core/navigation/request.py``: read and clipped at the
        door); a scope that admits no document returns no passage and says so in the trace's notes."""
        if self.collection is not None and not request.collection:
            request = replace(request, collection=self.collection)
        scope = request.scope
        if scope is not None and scope.empty:
            message = scope.no_match_message()
            return SearchResult(request.question, [], Trace(query=request.question, scope=scope.label(),
                                                            notes=[message]))
        return self.walk(request, cancel)

    def walk(self, request: SearchRequest, cancel: CancelCheck | None) -> SearchResult:
        """The walk itself for a request whose scope admits something: the navigator's (a double fills in its
        own)."""
        from shelfwise.core.navigation.navigator import Navigator

        nav = Navigator(self.store, self.backend, self.embedder, self.settings, judge=self.judge)
        return nav.navigate(request, cancel)
