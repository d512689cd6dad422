"""What the answer path needs from the library it answers from: the seam between the answers and the facade.

:class:`~shelfwise.core.navigation.walk.LibraryWalk` is the implementation the facade hands over (so the answer path
never calls back up into the facade); test doubles implement the parts they need. The store
itself crosses the seam as the real :class:`~shelfwise.core.store.db.Store` (allowed to the answers explicitly in
``tests/test_architecture.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from shelfwise.core.models.backend import CancelCheck, DecisionBackend, Embedder, RelevanceJudge
from shelfwise.core.navigation.trace import SearchResult
from shelfwise.core.settings import Settings

if TYPE_CHECKING:
    from shelfwise.core.navigation.scope import ResolvedScope, Scope
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

    def search(
        self,
        question: str,
        collection: str | None = None,
        *,
        keep: Sequence[int] = (),
        cancel: CancelCheck | None = None,
        scope: Scope | ResolvedScope | None = None,
        prior: Mapping[int, float] | None = None,
        q_vec: np.ndarray | None = None,
    ) -> SearchResult: ...
