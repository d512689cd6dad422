"""Answering a question: the entry point :meth:`shelfwise.core.shelf.Shelf.ask` (and ``ask_in_conversation``) calls.

Route the question (:mod:`shelfwise.core.answers.route`: a scope that matches nothing, a structural question read
from the tree), else search the tree and report the walk, then answer from the passages found
(:mod:`shelfwise.core.answers.from_passages`): the extracted sentence(s) with their citation, then, unless
``generate`` is off, the model's answer streamed and checked (``answer.generated`` kept, or empty and
``answer.generation_note`` saying why it was withdrawn), each reported through one
:class:`~shelfwise.core.answers.types.AnswerEvents`. With ``adaptive=True`` DeepRAG's loop of sub-questions
(:mod:`shelfwise.core.answers.adaptive`) chooses the passages, through the same extraction, events and grounding
check.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from shelfwise.core.answers.adaptive import answer_adaptive, asked_together
from shelfwise.core.answers.answer import prompt_family, write_answer
from shelfwise.core.answers.from_passages import CitationStream, answer_from_search, ground
from shelfwise.core.answers.route import route
from shelfwise.core.answers.table_shown import encoder_or_none, with_table_value
from shelfwise.core.answers.tables import table_answer
from shelfwise.core.answers.types import QUIET, Answer, AnswerEvents
from shelfwise.core.models.backend import CancelCheck
from shelfwise.core.navigation.request import prepared_request
from shelfwise.core.navigation.scope import Prepared, Scope
from shelfwise.core.navigation.trace import SearchResult
from shelfwise.core.navigation.walk import LibraryWalk


def answer_from_tree(library: LibraryWalk, answer: Answer, *, events: AnswerEvents, generate: bool | None,
                     cancel: CancelCheck | None) -> Answer:
    """A structural answer (or a scope that matches nothing) reported like any other; a summary gets the model's
    own wording, streamed, kept only when grounded in the sections it cites (:func:`ground`)."""
    t0 = time.perf_counter() - answer.seconds
    if answer.search is not None:
        events.searched(answer.search)
    events.extracted(answer)
    if generate is None:
        generate = library.settings.answer_generate
    if answer.found and generate and answer.kind == "summary" and answer.citations:
        hits = [c.hit for c in answer.citations]
        stream = CitationStream(range(1, len(hits) + 1), events.on_token) if events.on_token is not None else None
        written = write_answer(library.backend, answer.question, hits, on_token=stream,
                               family=prompt_family(library.backend), cancel=cancel, result=None,
                               check_evidence=False)
        if stream is not None:
            stream.flush()
        ground(answer, written, hits)
        answer.tokens += written.cost.tokens
        events.generated(answer)
    answer.seconds = time.perf_counter() - t0
    return answer


def stale_sources(library: LibraryWalk, answer: Answer) -> list[str]:
    """Notes on the answer's sources whose files are gone or changed since they were read (a deleted file, a file
    truncated to 0 bytes whose previous version the library kept)."""
    from shelfwise.core.store.on_disk import on_disk, source_note

    store = library.store
    notes = []
    for c in answer.citations:
        doc = store.document(c.hit.document_id)
        if doc is None or not doc.path:
            continue
        state = on_disk(doc.path, doc.size, doc.mtime)
        if state:
            notes.append(source_note(c.number, doc.path, state))
    return notes


def answer_question(
    library: LibraryWalk, question: str | Prepared, *, collection: str | None = None, events: AnswerEvents = QUIET,
    adaptive: bool = False, keep: Sequence[int] = (), cancel: CancelCheck | None = None, generate: bool | None = None,
    scope: Scope | None = None, prior: Mapping[int, float] | None = None, q_vec: np.ndarray | None = None,
    split: bool = True,
) -> Answer:
    """Search (or run adaptive retrieval), report the walk, the extractive answer, then the checked generation
    (through ``events``, :class:`~shelfwise.core.answers.types.AnswerEvents`). An over-long question is clipped to
    what the model's context holds; ``Answer.notes`` and the trace say so. ``scope`` and the question's inline
    filters limit where it looks; a structural question is answered from the tree
    (:mod:`shelfwise.core.answers.route`); a malformed filter raises ScopeError; a :class:`Prepared` question (read
    at the door, its scope resolved) is not read again. ``prior`` (branches the walk prefers) and ``q_vec`` (the
    question's vector, when already embedded) come from a conversation (:mod:`shelfwise.core.conversation.turn`).
    Several questions typed at once are each answered (``asked_together``) unless ``split`` is off (a query a
    conversation composed from the turn before and this one is one question)."""
    routed = route(library, question, collection, scope=scope, keep=tuple(keep), cancel=cancel)
    if generate is None:
        generate = library.settings.answer_generate
    if routed.answer is not None:
        return answer_from_tree(library, routed.answer, events=events, generate=generate, cancel=cancel)
    request = prepared_request(routed.prepared, collection, library.backend, keep=keep, prior=prior or None,
                               q_vec=q_vec)
    notes: list[str] = [*routed.notes, *request.notes]  # said in the answer and at the head of the trace
    request = replace(request, notes=())
    question = request.question
    # DeepRAG's loop decides per sub-question; several questions typed at once are each searched (no decision)
    parts = asked_together(question) if split and not adaptive else []
    if parts or adaptive:
        return answer_adaptive(library, question, collection=collection, events=events, keep=keep, cancel=cancel,
                               prior=prior, generate=generate, notes=notes, parts=parts, scope=routed.resolved)
    t0 = time.perf_counter()
    result: SearchResult = library.search(request, cancel)
    result.trace.notes[:0] = notes
    events.searched(result)

    # a table question is computed from the stored tables (no model text): its value wins over a span
    # (column names matched by the walk's encoder too when the words name none)
    short = table_answer(library.store, question, result.hits, routed.resolved, encoder_or_none(library))

    def noted(answer: Answer) -> None:  # the notes (and a table's value) reach the answer before anyone sees it
        answer.notes[:0] = notes
        with_table_value(library, question, answer, short)
        events.extracted(answer)

    answer = answer_from_search(library, question, result, t0, events=replace(events, on_extract=noted),
                                generate=generate and short is None, cancel=cancel)
    answer.notes += [n for n in stale_sources(library, answer) if n not in answer.notes]
    answer.seconds = time.perf_counter() - t0
    return answer
