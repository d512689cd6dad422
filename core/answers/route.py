"""Which path answers a question, decided before any walk: a scope that admits no document (said so, nothing
searched), a structural question read from the tree (:mod:`shelfwise.core.answers.structure`), or the walk within
the scope (:func:`shelfwise.core.answers.ask.answer_question` goes on with :class:`Route`'s text and scope).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from shelfwise.core.answers.structure import answer_structure, where_answer
from shelfwise.core.answers.structure_intent import Intent, recognise
from shelfwise.core.answers.types import Answer
from shelfwise.core.models.backend import CancelCheck
from shelfwise.core.navigation.doc_tree import find_document
from shelfwise.core.navigation.request import clipped_request
from shelfwise.core.navigation.scope import Prepared, ResolvedScope, Scope, prepare_question
from shelfwise.core.navigation.trace import SearchResult, Trace
from shelfwise.core.navigation.walk import LibraryWalk


@dataclass
class Route:
    """``answer`` when the question is answered already (no match, or from the tree); else the walk runs on the
    question as ``prepared`` (read once: :func:`~shelfwise.core.navigation.request.prepared_request`)."""

    text: str
    prepared: Prepared
    answer: Answer | None = None
    intent: Intent | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def resolved(self) -> ResolvedScope | None:
        return self.prepared.resolved


def no_match_answer(question: str, resolved: ResolvedScope) -> Answer:
    message = resolved.no_match_message()
    trace = Trace(query=question, scope=resolved.label(), notes=[message])
    return Answer(question, message, [], False, search=SearchResult(question, [], trace), notes=[message])


def route(library: LibraryWalk, question: str | Prepared, collection: str | None, *, scope: Scope | None = None,
          keep: tuple[int, ...] | list[int] = (), cancel: CancelCheck | None = None) -> Route:
    """Read the question once (ScopeError for a malformed filter; a question the door read already, a
    :class:`Prepared` with its scope, is taken as read) and answer what can be answered without the walk.
    ``keep`` (branches forced open) means the user is steering the walk: no structural answer then."""
    store = library.store
    prepared = question if isinstance(question, Prepared) else prepare_question(store, collection, question, scope)
    question = prepared.parsed.raw
    r = Route(prepared.question, prepared)
    if prepared.matches_nothing:
        assert prepared.resolved is not None
        r.answer = no_match_answer(question, prepared.resolved)
        return r
    if keep:
        return r
    intent = recognise(r.text)
    coll = store.find_collection(collection or "default")
    if intent is None or coll is None:
        return r
    r.intent = intent
    t0 = time.perf_counter()
    if intent.kind == "where":
        r.answer = _where(library, r, collection, coll.id, intent, cancel)
    else:
        r.answer = answer_structure(store, coll.id, r.text, intent, prepared.resolved)
    if r.answer is not None:
        r.answer.first_seconds = r.answer.seconds = time.perf_counter() - t0
    return r


def _where(library: LibraryWalk, r: Route, collection: str | None, collection_id: int, intent: Intent,
           cancel: CancelCheck | None) -> Answer | None:
    """The walk for the topic (within the named document when the question names one), answered with the best
    passages' section paths."""
    from shelfwise.core.answers.answer import passage_cosines, weak_evidence
    from shelfwise.core.answers.tuning import tuning_for

    store = library.store
    scope = r.resolved
    if intent.document:
        docs = [d for d in store.documents(collection_id) if d.status == "ok"
                and (scope is None or d.id in scope.document_ids)]
        doc = find_document(docs, intent.document)
        if doc is None:
            return None
        base = scope if scope is not None else ResolvedScope(Scope(), frozenset(d.id for d in docs), len(docs))
        scope = replace(base, document_ids=frozenset({doc.id}), scope=replace(base.scope, paths=(
            *base.scope.paths, doc.path.rsplit("/", 1)[-1])))
    topic = intent.topic or r.text  # part of the question, read already
    request = clipped_request(topic, collection, library.backend, scope=scope)
    result: SearchResult = library.search(request, cancel)
    hits = result.hits[: max(1, library.settings.answer_passages)]
    if not hits or weak_evidence(hits, passage_cosines(result, hits), tuning=tuning_for(library.embedder)):
        return None
    return where_answer(store, r.text, hits, result)
