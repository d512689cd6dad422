"""What a walk is asked: one typed request, built once at the door and handed down unchanged
(facade -> ``LibraryWalk`` -> :class:`~shelfwise.core.navigation.navigator.Navigator`).

The question in a request is already read: its inline filters are taken out and resolved into ``scope``
(:func:`~shelfwise.core.navigation.scope.prepare_question`, once) and its text is clipped to the model's budget
(:func:`~shelfwise.core.navigation.question.clip_question`, once, in :func:`clipped_request`). Nothing below
the door parses or clips it again. :func:`request_for` is that door for a text as typed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from shelfwise.core.models.backend import DecisionBackend
from shelfwise.core.navigation.question import clip_question
from shelfwise.core.navigation.scope import Prepared, ResolvedScope, Scope, prepare_question
from shelfwise.core.store.db import Store


@dataclass(frozen=True)
class SearchRequest:
    """``question``: the text the models read (filters out, clipped); ``scope``: the documents and passages the
    walk may look at (None: the whole collection); ``keep``: node ids forced open ("look here too"); ``prior``: node
    id -> a logit a conversation's earlier branches get (``Navigator.walk``); ``q_vec``: the question's vector
    when it is already embedded; ``notes``: what preparing it said (the question was clipped), for the trace.
    The walk's budgets are the navigator's settings (``Settings.budgets``), not part of a request."""

    question: str
    collection: str | None = None
    scope: ResolvedScope | None = None
    keep: tuple[int, ...] = ()
    prior: Mapping[int, float] | None = field(default=None, compare=False)
    q_vec: np.ndarray | None = field(default=None, compare=False, repr=False)
    notes: tuple[str, ...] = ()


def prepared_request(prepared: Prepared, collection: str | None, backend: DecisionBackend | None, *,
                     keep: Sequence[int] = (), prior: Mapping[int, float] | None = None,
                     q_vec: np.ndarray | None = None) -> SearchRequest:
    """The walk's request for a question already read (:func:`clipped_request` on its text and scope)."""
    return clipped_request(prepared.question, collection, backend, scope=prepared.resolved, keep=keep, prior=prior,
                           q_vec=q_vec)


def clipped_request(text: str, collection: str | None, backend: DecisionBackend | None, *,
                    scope: ResolvedScope | None = None, keep: Sequence[int] = (),
                    prior: Mapping[int, float] | None = None, q_vec: np.ndarray | None = None) -> SearchRequest:
    """The one place a question is clipped: ``text`` (read already, its filters out) cut to ``backend``'s budget,
    the note that says so in ``notes``."""
    asked = clip_question(text, backend)
    return SearchRequest(asked.text, collection, scope, tuple(keep), prior, q_vec,
                         (asked.note,) if asked.clipped else ())


def request_for(store: Store, backend: DecisionBackend | None, question: str | Prepared,
                collection: str | None = None, *, scope: Scope | None = None, keep: Sequence[int] = (),
                prior: Mapping[int, float] | None = None) -> SearchRequest:
    """``question`` as typed, read once: its filters (with ``scope``, the CLI's options) resolved in the
    collection (ScopeError for a malformed one) and its text clipped to ``backend``'s budget. A question read
    already (:class:`Prepared`) is only clipped."""
    prepared = question if isinstance(question, Prepared) else prepare_question(store, collection, question, scope)
    return prepared_request(prepared, collection, backend, keep=keep, prior=prior)


__all__ = ["SearchRequest", "clipped_request", "prepared_request", "request_for"]
