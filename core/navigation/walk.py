"""A library's store, settings and models with the walk over them: what the answer path and the conversation
are handed (:class:`~shelfwise.core.shelf.Shelf` builds one and delegates its own ``search`` to it), so a
question's path goes facade -> answers -> walk -> navigator and never back up into the facade."""

from __future__ import annotations

from shelfwise.core.models.backend import CancelCheck, DecisionBackend, Embedder, RelevanceJudge
from shelfwise.core.models.loaded import Models
from shelfwise.core.navigation.request import SearchRequest
from shelfwise.core.navigation.trace import SearchResult, Trace
from shelfwise.core.settings import Settings
from shelfwise.core.store.db import Store


class LibraryWalk:
    """Implements the answers' ``Library`` protocol (``core/answers/library.py``) without the facade."""

    def __init__(self, store: Store, models: Models) -> None:
        self.store = store
        self.models = models
        self.settings: Settings = models.settings

    @property
    def backend(self) -> DecisionBackend:
        return self.models.backend

    @property
    def embedder(self) -> Embedder:
        return self.models.embedder

    @property
    def judge(self) -> RelevanceJudge | None:
        return self.models.judge

    def search(self, request: SearchRequest, cancel: CancelCheck | None = None) -> SearchResult:
        """Walk the tree level by level for ``request`` (``core/navigation/request.py``: read and clipped at the
        door); a scope that admits no document returns no passage and says so in the trace's notes."""
        from shelfwise.core.navigation.navigator import Navigator

        scope = request.scope
        if scope is not None and scope.empty:
            message = scope.no_match_message()
            return SearchResult(request.question, [], Trace(query=request.question, scope=scope.label(),
                                                            notes=[message]))
        nav = Navigator(self.store, self.backend, self.embedder, self.settings, judge=self.judge)
        return nav.search(request, cancel)
