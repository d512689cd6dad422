"""One turn of a conversation: read the question against the turns before it, answer it (walk, extracted
sentence, checked generation, or DeepRAG's loop: all read the same query and prefer the same branches), and keep
the turn in the library database before returning it."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from shelfwise.core.answers.ask import answer_question
from shelfwise.core.answers.types import Answer, AnswerEvents
from shelfwise.core.conversation.model import Conversation, Reading, Turn, TurnCitation
from shelfwise.core.conversation.reading import SHIPPED, ReadingRule, read
from shelfwise.core.conversation.storage import ConversationStore
from shelfwise.core.json_types import JSONObject
from shelfwise.core.models.backend import CancelCheck
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.question import MAX_QUESTION_TOKENS, clip_question
from shelfwise.core.navigation.scope import Prepared, ScopeError, prepare_question
from shelfwise.core.navigation.snapshots import load_decision, snapshot_for
from shelfwise.core.navigation.trace import Candidate, Level, Trace, to_dict
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.store.db import Store
from shelfwise.core.store.snapshot import Snapshot

TRACE_CANDIDATES = 40  # per level, the kept ones and the best pruned ones up to this many are kept with a turn
QUOTE_CHARS = 300


@dataclass(frozen=True)
class TurnEvents(AnswerEvents):
    """A turn's events: ``on_reading(reading)`` first, once, how the question is read against the turns before it
    (follow-up or new topic, the text the walk reads), then the answer's own (:class:`AnswerEvents`)."""

    on_reading: Callable[[Reading], None] | None = None


class EmptyQuestion(ValueError):
    def __init__(self) -> None:
        super().__init__("the question is empty: type a question (nothing was asked or stored)")


@dataclass(frozen=True)
class TurnQuestion:
    """A turn's question read once, at the door (:func:`take_question`): ``asked`` as it is kept with the turn
    (clipped to what the model reads, ``notes`` saying so), ``text`` as the turn reads it (white space folded),
    its inline filters parsed and resolved in
    ``collection`` (``prepared``; None and ``error`` when a filter is malformed: the walk then says so, as it did
    when it read the question itself). The turn hands ``prepared`` to the walk when it reads the question as it
    is (a first question, one asked alone, a new topic) instead of parsing it again; a follow-up's query is
    another text, composed with the conversation, and is read as such."""

    asked: str
    text: str
    notes: tuple[str, ...]
    collection: str
    prepared: Prepared | None
    error: ScopeError | None = None

    @property
    def only_filters(self) -> bool:
        """Inline filters and nothing to ask (a malformed filter is left to the walk's own message)."""
        return self.prepared is not None and not any(ch.isalnum() for ch in self.prepared.text)


def take_question(library: LibraryWalk, question: str, collection: str) -> TurnQuestion:
    """Read ``question`` once for a turn in ``collection``: clipped (the model is loaded only for a question too
    long to fit otherwise), folded (EmptyQuestion when nothing is left) and parsed."""
    asked, notes = question, list[str]()
    if len(question) > MAX_QUESTION_TOKENS:  # clipped once here, so the note reaches the answer
        clipped = clip_question(question, library.backend)
        asked, notes = clipped.text, [clipped.note] if clipped.clipped else []
    text = _folded(asked)
    try:
        return TurnQuestion(asked, text, tuple(notes), collection, prepare_question(library.store, collection, text))
    except ScopeError as exc:
        return TurnQuestion(asked, text, tuple(notes), collection, None, exc)


def _folded(question: str) -> str:
    """White space folded (unless the question is huge); EmptyQuestion when nothing is left."""
    question = " ".join(question.split()) if len(question) < 4096 else question.strip()
    if not question:
        raise EmptyQuestion()
    return question


def _read(library: LibraryWalk, conversation: Conversation, question: str, *, alone: bool,
          rule: ReadingRule) -> tuple[Reading, np.ndarray | None]:
    snap = None
    if conversation.turns:
        coll = library.store.find_collection(conversation.collection)
        if coll is not None:
            snap = snapshot_for(library.store, coll.id, library.embedder.model_id)
    return read(question, conversation.turns, snap, library.embedder, rule, alone=alone,
                search=lexical_search(library.store, snap), decision=decision_for(library, snap, rule))


def decision_for(library: LibraryWalk, snap: Snapshot | None, rule: ReadingRule) -> DecisionModel | None:
    """The collection's decision model as the walk loads it, when the rule's topic-shift test reads it."""
    if snap is None or not rule.gate or (not rule.confidence and rule.coverage_gap is None):
        return None
    return load_decision(library.store, snap.collection_id, library.embedder, library.backend)


def lexical_search(store: Store, snap: Snapshot | None) -> Callable[[str], dict[int, float]] | None:
    """BM25 of a text over the snapshot's collection: passage node id -> score (for the topic-shift test)."""
    if snap is None:
        return None
    # the best 50 of the walk's 200: the store keeps the ranking, so the walk that follows does not rank it again
    return lambda text: dict(store.search_ids(text, limit=200, kinds=("passage",),
                                              collection_id=snap.collection_id)[:50])


def ask_turn(
    library: LibraryWalk, conversation: Conversation, question: str | TurnQuestion, *, alone: bool = False,
    rule: ReadingRule = SHIPPED, events: TurnEvents | None = None,
    cancel: CancelCheck | None = None, generate: bool | None = None, adaptive: bool | None = None,
    store: ConversationStore | None = None, keep: Sequence[int] = (),
) -> tuple[Turn, Answer]:
    """Ask ``question`` as the next turn of ``conversation`` and store the turn (``conversation.id`` must be
    set, see :meth:`ConversationStore.create`); the conversation's ``turns`` gets it too. ``keep`` forces
    branches open as in :meth:`Shelf.search`. A :class:`TurnQuestion` (read at the door) is not read again.
    ``events``: how the question was read, then the answer's events."""
    events = events or TurnEvents()
    taken = question if isinstance(question, TurnQuestion) else \
        take_question(library, question, conversation.collection)
    asked, notes = taken.asked, list(taken.notes)
    reading, q_vec = _read(library, conversation, taken.text, alone=alone, rule=rule)
    if events.on_reading is not None:
        events.on_reading(reading)
    as_read = reading.query == taken.text and taken.collection == conversation.collection
    answer = answer_question(
        library, taken.prepared if as_read and taken.prepared is not None else reading.query,
        collection=conversation.collection, events=events,
        adaptive=library.settings.adaptive if adaptive is None else adaptive, cancel=cancel,
        generate=generate, prior=reading.prior or None, q_vec=q_vec, keep=keep, split=as_read)
    answer.notes[:0] = [n for n in notes if n not in answer.notes]
    turn = turn_from(asked, reading, answer)  # the question as it was read (clipped, with the note), not 1 MB
    (store or ConversationStore(library.store)).add_turn(conversation, turn)
    return turn, answer


def turn_from(question: str, reading: Reading, answer: Answer) -> Turn:
    quotes: dict[int, list[str]] = {}
    for s in answer.sentences:
        quotes.setdefault(s.number, []).append(" ".join(s.text.split()))
    cites = []
    for c in answer.citations:
        h = c.hit
        quote = " ".join(quotes.get(c.number) or [" ".join(h.text.split())[:QUOTE_CHARS]])
        cites.append(TurnCitation(number=c.number, node_id=h.node_id, document_id=h.document_id, path=h.path,
                                  title=h.title, heading_path=list(h.heading_path), location=h.location,
                                  quote=quote))
    hits = answer.search.hits if answer.search is not None else []
    return Turn(position=-1, question=question, reading=reading, answer=answer.text, found=answer.found,
                citations=cites, generated=answer.generated,
                trace=trace_dict(answer.search.trace) if answer.search is not None else {},
                hit_nodes=[h.node_id for h in hits], hit_documents=[h.document_id for h in hits])


def trace_dict(trace: Trace) -> JSONObject:
    """The trace's JSON form, each level cut to its kept candidates and the best pruned ones
    (:data:`TRACE_CANDIDATES` in all), in the level's order: what the walk view shows again for a stored turn.
    Only the candidates kept with the turn are made into dicts: a turn on a large library judges hundreds of them,
    and converting them all was most of what storing a turn cost (docs/scale.md, "Session 22")."""
    cut = copy.copy(trace)
    cut.levels = []
    judged = []
    for level in trace.levels:
        cands = level.candidates
        kept = [c for c in cands if c.kept]
        pruned = [c for c in cands if not c.kept][: max(0, TRACE_CANDIDATES - len(kept))]
        chosen = {id(c) for c in kept + pruned}
        shown = copy.copy(level)
        shown.candidates = [c for c in cands if id(c) in chosen]
        cut.levels.append(shown)
        judged.append(len(cands))
    d = to_dict(cut)
    for level_dict, n in zip(d.get("levels", []), judged, strict=True):
        level_dict["judged_count"] = n
    return d


def trace_from_dict(d: JSONObject) -> Trace:
    """A stored turn's trace back as the :class:`Trace` the CLI and the walk view render."""
    levels = []
    for lv in d.get("levels", []):
        cands = [Candidate(node_id=int(c["node_id"]), kind=str(c.get("kind", "")), title=str(c.get("title", "")),
                           description=str(c.get("description", "")), score=float(c.get("score", 0.0)),
                           kept=bool(c.get("kept")), parent_id=c.get("parent_id"),
                           features={k: float(v) for k, v in (c.get("features") or {}).items()},
                           source=str(c.get("source", "tree"))) for c in lv.get("candidates", [])]
        levels.append(Level(depth=int(lv.get("depth", 0)), label=str(lv.get("label", "")), candidates=cands,
                            requests=int(lv.get("requests", 0)), tokens=int(lv.get("tokens", 0)),
                            seconds=float(lv.get("seconds", 0.0)), judged=int(lv.get("judged", 0))))
    return Trace(query=str(d.get("query", "")), levels=levels, readout=str(d.get("readout", "")),
                 seconds=float(d.get("seconds", 0.0)), calibration=str(d.get("calibration", "")),
                 notes=[str(n) for n in d.get("notes", [])], judge=str(d.get("judge", "")))

