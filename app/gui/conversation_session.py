"""The window's conversation, without Qt: which stored conversation the next question continues, its turns as
shown in the thread, how the last question was read (what the search box says), and the look-ups the thread
needs (a stored turn's walk, a citation's passage, which may have left the library)."""

from __future__ import annotations

from dataclasses import dataclass

from shelfwise.core.api.asking import trace_from_dict
from shelfwise.core.conversation.model import Conversation, ConversationSummary, Reading, Turn, TurnCitation
from shelfwise.core.navigation.trace import Hit, Trace
from shelfwise.core.shelf import Shelf


@dataclass(frozen=True)
class ReadingNote:
    """What the search box says about the last question: shown only for a follow-up."""

    text: str
    question: str  # the question as typed, for "ask it alone instead"


class ConversationSession:
    def __init__(self, shelf: Shelf) -> None:
        self.shelf = shelf  # the window's own, on the UI thread: stored conversations and passages, no model
        self.current: Conversation | None = None
        self.last_turn: Turn | None = None

    # -- the current conversation -------------------------------------------------------------------------------
    @property
    def conversation_id(self) -> int:
        """The id a question's job continues (0: the worker starts a new conversation)."""
        return int(self.current.id or 0) if self.current is not None else 0

    def new(self) -> None:
        self.current = None
        self.last_turn = None

    def on_turn(self, conversation: Conversation, turn: Turn) -> None:
        """A turn the worker stored: the thread shows it (a conversation the worker started becomes current)."""
        if self.current is None or self.current.id != conversation.id:
            self.current = Conversation(conversation.id, conversation.collection, conversation.title,
                                        list(conversation.turns), conversation.created_at, conversation.updated_at)
        else:
            self.current.turns = [t for t in self.current.turns if t.id in {x.id for x in conversation.turns}]
            if all(t.id != turn.id for t in self.current.turns):
                self.current.turns.append(turn)
        self.last_turn = turn

    def turns(self) -> list[Turn]:
        return list(self.current.turns) if self.current is not None else []

    def note_for(self, reading: Reading) -> ReadingNote | None:
        if reading.mode != "followup":
            return None
        shown = " ".join(reading.query.split())
        if len(shown) > 140:
            shown = shown[:137] + "..."
        last = self.current.turns[-1].question if self.current and self.current.turns else ""
        what = f"Read as a follow-up of “{last}”" if last else "Read as a follow-up"
        if reading.query != reading.question:
            what += f": “{shown}”"
        return ReadingNote(what, reading.question)

    # -- stored conversations -----------------------------------------------------------------------------------
    def listing(self) -> list[ConversationSummary]:
        return self.shelf.conversations()

    def reopen(self, conversation_id: int) -> Conversation:
        self.current = self.shelf.conversation(conversation_id)
        self.last_turn = self.current.turns[-1] if self.current.turns else None
        return self.current

    def delete(self, conversation_id: int) -> None:
        self.shelf.delete_conversation(conversation_id)
        if self.current is not None and self.current.id == conversation_id:
            self.new()

    def export_markdown(self, conversation_id: int | None = None) -> str:
        cid = conversation_id if conversation_id is not None else self.conversation_id
        if not cid:
            raise ValueError("no conversation yet: ask a question first")
        return self.shelf.conversation_markdown(cid)

    # -- what the thread's links open ---------------------------------------------------------------------------
    def turn_at(self, position: int) -> Turn | None:
        return next((t for t in self.turns() if t.position == position), None)

    def trace_of(self, position: int) -> Trace | None:
        turn = self.turn_at(position)
        return trace_from_dict(turn.trace) if turn is not None and turn.trace else None

    def citation_hit(self, position: int, number: int) -> Hit | TurnCitation | None:
        """The cited passage as a :class:`Hit` for the preview; the :class:`TurnCitation` itself when its document
        (or passage) is no longer in the library; None for an unknown link."""
        turn = self.turn_at(position)
        cite = next((c for c in turn.citations if c.number == number), None) if turn is not None else None
        if cite is None:
            return None
        hit = self.shelf.passage_hit(cite.node_id, cite.document_id)
        if cite.missing or hit is None or hit.path != cite.path:
            cite.missing = True
            return cite
        return hit
