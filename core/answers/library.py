"""What the answer path needs from the library it answers from: the seam between the answers and the facade.

:class:`~shelfwise.core.navigation.walk.LibraryWalk` is the implementation the facade hands over (so the answer path
never calls back up into the facade); test doubles implement the parts they need. The store
itself crosses the seam as the real :class:`~shelfwise.core.store.db.Store` (allowed to the answers explicitly in
``tests/test_architecture.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from shelfwise.core.models.backend import CancelCheck, DecisionBackend, Embedder, RelevanceJudge
from shelfwise.core.navigation.request import SearchRequest
from shelfwise.core.navigation.trace import SearchResult
from shelfwise.core.settings import Settings

if TYPE_CHECKING:
    from shelfwise.core.store.db import Store


class Library(Protocol):
    """A library of documents with its models: the walk (``search``), the models it was asked with, its
    settings and its store."""

    settings: Settings
    store: Store

    @property
    def backend(self) -> DecisionBackend: ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def judge(self) -> RelevanceJudge | None: ...

    def search(self, request: SearchRequest, cancel: CancelCheck | None = None) -> SearchResult:
        """The walk for ``request`` (built once at the door: ``core/navigation/request.py``)."""
        ...
