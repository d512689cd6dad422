"""Conversations in the library database (tables of migration ``0005_conversations``).

Each turn is written in one transaction of its own as soon as it is answered, so a process killed between turns
(kill -9 included: SQLite's WAL commit is durable) leaves every finished turn on disk. Reading a conversation
marks each citation whose document is no longer in the library (``TurnCitation.missing``).
"""

from __future__ import annotations

import json

import numpy as np

from shelfwise.core.conversation.model import Conversation, ConversationSummary, Reading, Turn, TurnCitation
from shelfwise.core.json_types import JSONValue
from shelfwise.core.store.db import Store
from shelfwise.core.store.types import now

TITLE_CHARS = 80
#: SQLite's largest integer: an id past it cannot be a row's (a query with it raises OverflowError)
MAX_ID = 2**63 - 1


class NoSuchConversation(LookupError):
    """A conversation id that is not in this library."""

    def __init__(self, conversation_id: int) -> None:
        super().__init__(f"there is no conversation {conversation_id} in this library "
                         f"(`shelfwise chat --list` shows the ones there are)")
        self.conversation_id = conversation_id


def _stored_id(conversation_id: int) -> None:
    """NoSuchConversation for an id no row can have (0, negative, or past SQLite's integer range)."""
    if not 1 <= conversation_id <= MAX_ID:
        raise NoSuchConversation(conversation_id)


def title_for(question: str) -> str:
    text = " ".join(question.split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 3].rstrip() + "..."


class ConversationStore:
    """The conversations of one library, through its :class:`Store` (same connection, same thread rules)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def create(self, collection: str, title: str = "") -> Conversation:
        stamp = now()
        with self.store.transaction() as conn:
            cur = conn.execute("INSERT INTO conversations(collection, title, created_at, updated_at) "
                               "VALUES (?, ?, ?, ?)", (collection, title_for(title), stamp, stamp))
            cid = int(cur.lastrowid or 0)
        return Conversation(id=cid, collection=collection, title=title_for(title), created_at=stamp,
                            updated_at=stamp)

    def add_turn(self, conversation: Conversation, turn: Turn) -> Turn:
        """Append ``turn`` (its position is set here) and store it at once; the conversation gets the first
        question as its title."""
        if conversation.id is None:
            raise ValueError("store the conversation first (ConversationStore.create)")
        stamp = now()
        v = turn.reading.vector
        vec = np.asarray(v, np.float32).tobytes() if v is not None and turn.reading.vector_model else None
        with self.store.transaction() as conn:
            last = conn.execute("SELECT COALESCE(MAX(position), -1) FROM conversation_turns WHERE "
                                "conversation_id = ?", (conversation.id,)).fetchone()[0]
            turn.position = int(last) + 1
            turn.created_at = stamp
            cur = conn.execute(
                "INSERT INTO conversation_turns(conversation_id, position, question, reading, answer, generated, "
                "found, citations, hits, trace, created_at, query_vector, vector_model) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (conversation.id, turn.position, turn.question, json.dumps(turn.reading.to_dict()), turn.answer,
                 turn.generated, int(turn.found), json.dumps([c.to_dict() for c in turn.citations]),
                 json.dumps({"nodes": turn.hit_nodes, "documents": turn.hit_documents}),
                 json.dumps(turn.trace, ensure_ascii=False), stamp, vec, turn.reading.vector_model if vec else ""))
            turn.id = int(cur.lastrowid or 0)
            if not conversation.title:
                conversation.title = title_for(turn.question)
            conn.execute("UPDATE conversations SET updated_at = ?, title = ? WHERE id = ?",
                         (stamp, conversation.title, conversation.id))
        conversation.updated_at = stamp
        conversation.turns.append(turn)
        return turn

    def get(self, conversation_id: int) -> Conversation:
        _stored_id(conversation_id)
        row = self.store.conn.execute("SELECT id, collection, title, created_at, updated_at FROM conversations "
                                      "WHERE id = ?", (conversation_id,)).fetchone()
        if row is None:
            raise NoSuchConversation(conversation_id)
        conv = Conversation(id=int(row[0]), collection=row[1], title=row[2], created_at=row[3], updated_at=row[4])
        rows = self.store.conn.execute(
            "SELECT id, position, question, reading, answer, generated, found, citations, hits, trace, created_at, "
            "query_vector, vector_model FROM conversation_turns WHERE conversation_id = ? ORDER BY position",
            (conversation_id,)).fetchall()
        present = self._present_documents()
        for r in rows:
            hits = _loads(r[8], {})
            turn = Turn(position=int(r[1]), question=r[2], reading=Reading.from_dict(_loads(r[3], {})),
                        answer=r[4], generated=r[5], found=bool(r[6]),
                        citations=[TurnCitation.from_dict(c) for c in _loads(r[7], [])],
                        hit_nodes=[int(n) for n in hits.get("nodes", [])],
                        hit_documents=[int(n) for n in hits.get("documents", [])],
                        trace=_loads(r[9], {}), created_at=r[10], id=int(r[0]))
            if r[11]:
                turn.reading.vector = np.frombuffer(r[11], np.float32).copy()
                turn.reading.vector_model = r[12]
            for c in turn.citations:
                c.missing = (c.document_id, c.path) not in present
            conv.turns.append(turn)
        return conv

    def list(self, collection: str | None = None) -> list[ConversationSummary]:
        sql = ("SELECT c.id, c.collection, c.title, c.updated_at, "
               "(SELECT count(*) FROM conversation_turns t WHERE t.conversation_id = c.id) FROM conversations c")
        params: tuple[str, ...] = ()
        if collection is not None:
            sql += " WHERE c.collection = ?"
            params = (collection,)
        sql += " ORDER BY c.updated_at DESC, c.id DESC"
        return [ConversationSummary(id=int(r[0]), collection=r[1], title=r[2], updated_at=r[3], turns=int(r[4]))
                for r in self.store.conn.execute(sql, params)]

    def delete(self, conversation_id: int) -> None:
        _stored_id(conversation_id)
        with self.store.transaction() as conn:
            cur = conn.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
            if cur.rowcount == 0:
                raise NoSuchConversation(conversation_id)

    def delete_turn(self, conversation: Conversation, turn_id: int) -> None:
        """Remove one stored turn (the window's "ask it alone instead" replaces the follow-up it asked)."""
        with self.store.transaction() as conn:
            conn.execute("DELETE FROM conversation_turns WHERE id = ? AND conversation_id = ?",
                         (turn_id, conversation.id))
        conversation.turns = [t for t in conversation.turns if t.id != turn_id]

    def _present_documents(self) -> set[tuple[int, str]]:
        return {(int(r[0]), r[1]) for r in self.store.conn.execute("SELECT id, path FROM documents WHERE "
                                                                     "status = 'ok'")}


def _loads(text: str, default: JSONValue) -> JSONValue:
    try:
        return json.loads(text) if text else default
    except ValueError:  # a damaged row reads as empty rather than stopping the whole conversation
        return default
