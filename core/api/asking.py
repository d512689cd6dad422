"""Asking: a question read once at the door (``prepare``, ``take_question``), the walk (``search``), the answer
(``ask``) and the turns of a stored conversation (``ask_in_conversation`` and the conversations' reads). The
answer path is handed the library's walk (``OpenLibrary.walk``), never the facade."""

from __future__ import annotations

from collections.abc import Sequence

from shelfwise.core.answers.export import answer_to_markdown, level_summary, source_label, trace_to_markdown
from shelfwise.core.answers.types import QUIET, Answer, AnswerEvents
from shelfwise.core.api.opened import OpenLibrary
from shelfwise.core.conversation.export import REMOVED, conversation_markdown
from shelfwise.core.conversation.model import Conversation, ConversationSummary, Turn
from shelfwise.core.conversation.storage import ConversationStore, NoSuchConversation
from shelfwise.core.conversation.turn import EmptyQuestion, TurnEvents, TurnQuestion, trace_from_dict
from shelfwise.core.models.backend import CancelCheck, Cancelled
from shelfwise.core.navigation.request import request_for
from shelfwise.core.navigation.scope import (
    FORMATS,
    Prepared,
    Scope,
    ScopeError,
    in_filter,
    make_scope,
    prepare_question,
)
from shelfwise.core.navigation.trace import SearchResult
from shelfwise.core.store.inert import write_text_atomically

# This part's calls, the questions and scopes they take, their errors, and how answers, walks and conversations
# are written out (and to a file, whole or not at all).
__all__ = [
    "FORMATS",
    "REMOVED",
    "AnswerEvents",
    "Asking",
    "Cancelled",
    "EmptyCollection",
    "EmptyQuestion",
    "NoSuchConversation",
    "OnlyFilters",
    "Prepared",
    "Scope",
    "ScopeError",
    "TurnEvents",
    "TurnQuestion",
    "answer_to_markdown",
    "in_filter",
    "level_summary",
    "make_scope",
    "source_label",
    "trace_from_dict",
    "trace_to_markdown",
    "write_text_atomically",
]


class EmptyCollection(LookupError):
    """The collection a question was asked in has no documents (or does not exist): nothing to walk."""

    def __init__(self, collection: str) -> None:
        super().__init__(f"collection {collection!r} has no documents")
        self.collection = collection


class OnlyFilters(ValueError):
    """The question as typed is only filters (``in:handbook.pdf``): it asks nothing besides where to look."""

    def __init__(self, question: str) -> None:
        super().__init__(f"the question is only filters: {question.strip()!r}")
        self.question = question


class Asking(OpenLibrary):
    """The question calls of :class:`~shelfwise.core.shelf.Shelf`."""

    def prepare(self, question: str, collection: str | None = None, scope: Scope | None = None) -> Prepared:
        """Read ``question`` once, at the door: its inline filters with ``scope`` (the CLI's options) resolved in
        the collection (ScopeError for a malformed one). :meth:`ask` and :meth:`search` take the result as read;
        ``Prepared.text`` is what it asks besides its filters."""
        return prepare_question(self.store, collection, question, scope)

    def read_at_the_door(self, question: str, collection: str, scope: Scope | None = None) -> Prepared:
        """``question`` as typed, read once before anything else is done for it: EmptyCollection when
        ``collection`` has no document, ScopeError for a malformed filter (:meth:`prepare`), OnlyFilters when it
        asks nothing besides its filters."""
        coll = self.store.find_collection(collection)
        if coll is None or not self.store.documents(coll.id):
            raise EmptyCollection(collection)
        prepared = self.prepare(question, collection, scope)
        if not any(ch.isalnum() for ch in prepared.text):
            raise OnlyFilters(question)
        return prepared

    def search(self, question: str | Prepared, collection: str | None = None, *, keep: Sequence[int] = (),
               cancel: CancelCheck | None = None, scope: Scope | None = None) -> SearchResult:
        """Walk the tree level by level for ``question`` as typed: read once (its inline filters with ``scope``,
        the CLI's options; ScopeError for a malformed one), clipped once (``core/navigation/request.py``);
        ``keep`` forces branches (node ids) open ("look here too"). A scope that admits no document returns no
        passage and says so in the trace's notes."""
        request = request_for(self.store, self.backend, question, collection, scope=scope, keep=keep)
        return self.walk.search(request, cancel)

    def ask(
        self,
        question: str | Prepared,
        collection: str | None = None,
        *,
        events: AnswerEvents = QUIET,
        keep: Sequence[int] = (),
        cancel: CancelCheck | None = None,
        scope: Scope | None = None,
    ) -> Answer:
        """Find passages, give the sentence(s) that answer, then stream the model's answer and say whether it is
        kept, each reported through ``events`` (:class:`AnswerEvents`): ``core/answers/ask.py``. A question from
        :meth:`prepare` is not read again (its scope is the one it was prepared with)."""
        from shelfwise.core.answers.ask import answer_question

        return answer_question(self.walk, question, collection=collection, events=events,
                               adaptive=self.settings.adaptive, keep=keep, cancel=cancel, scope=scope)

    def take_question(self, question: str, collection: str = "default") -> TurnQuestion:
        """Read a conversation's next question once, at the door, in ``collection`` (EmptyQuestion when nothing
        is asked): the front ends say "only filters" (``TurnQuestion.only_filters``) or a malformed filter
        (``TurnQuestion.error``) before a conversation is made for it, and hand it to :meth:`ask_in_conversation`,
        which does not read it again."""
        from shelfwise.core.conversation.turn import take_question

        return take_question(self.walk, question, collection)

    def ask_in_conversation(
        self,
        conversation_id: int,
        question: str | TurnQuestion,
        collection: str = "default",
        *,
        alone: bool = False,
        replaces_turn: int | None = None,
        keep: Sequence[int] = (),
        cancel: CancelCheck | None = None,
        events: TurnEvents | None = None,
    ) -> tuple[Conversation, Turn, Answer]:
        """The next turn of stored conversation ``conversation_id`` (0 starts one in ``collection``): read with its
        history unless ``alone``, answered and stored; ``replaces_turn`` removes that stored turn first (the
        window's "ask it alone instead"). A question from :meth:`take_question` is not read again; a text is read
        (EmptyQuestion) before a new conversation is made for it. ``events``: how the question was read
        (``on_reading``), then the answer's events. See ``core/conversation/turn.py``."""
        from shelfwise.core.conversation.storage import ConversationStore
        from shelfwise.core.conversation.turn import ask_turn, take_question

        convs = ConversationStore(self.store)
        if isinstance(question, str) and not conversation_id:  # a new conversation: in ``collection``
            question = take_question(self.walk, question, collection or "default")
        conv = convs.get(conversation_id) if conversation_id else convs.create(collection or "default")
        if replaces_turn is not None:
            convs.delete_turn(conv, replaces_turn)
        turn, answer = ask_turn(self.walk, conv, question, alone=alone, store=convs, cancel=cancel, keep=keep,
                                events=events)
        return conv, turn, answer

    def conversations(self) -> list[ConversationSummary]:
        return ConversationStore(self.store).list()

    def conversation(self, conversation_id: int) -> Conversation:
        """The stored conversation (NoSuchConversation when there is none with that id)."""
        return ConversationStore(self.store).get(conversation_id)

    def new_conversation(self, collection: str = "default") -> Conversation:
        return ConversationStore(self.store).create(collection)

    def delete_conversation(self, conversation_id: int) -> None:
        ConversationStore(self.store).delete(conversation_id)

    def conversation_markdown(self, conversation_id: int) -> str:
        return conversation_markdown(self.conversation(conversation_id))
