"""A library's store, settings and models with the walk over them: what the answer path and the conversation
are handed (:class:`~shelfwise.core.shelf.Shelf` builds one and delegates its own ``search`` to it), so a
question's path goes facade -> answers -> walk -> navigator and never back up into the facade."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from shelfwise.core.models.backend import CancelCheck, DecisionBackend, Embedder, RelevanceJudge
from shelfwise.core.models.loaded import Models
from shelfwise.core.navigation.scope import ResolvedScope, Scope
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
    ) -> SearchResult:
        """Walk the tree level by level; ``keep`` forces branches (node ids) to be expanded ("look here too").
        The question's inline filters and ``scope`` limit the walk (``core/navigation/scope.py``; ScopeError for a
        malformed one); a scope that admits no document returns no passage and says so in the trace's notes.
        ``prior`` gives branches a conversation was in a head start (see ``Navigator.search``)."""
        from shelfwise.core.navigation.navigator import Navigator
        from shelfwise.core.navigation.scope import prepare_question

        if not isinstance(scope, ResolvedScope):
            prepared = prepare_question(self.store, collection, question, scope)
            question, scope = prepared.text or question, prepared.resolved
        if scope is not None and scope.empty:
            message = scope.no_match_message()
            return SearchResult(question, [], Trace(query=question, scope=scope.label(), notes=[message]))
        nav = Navigator(self.store, self.backend, self.embedder, self.settings, judge=self.judge)
        return nav.search(question, collection=collection, keep=keep, cancel=cancel, scope=scope, prior=prior,
                          q_vec=q_vec)
