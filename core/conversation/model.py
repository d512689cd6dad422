"""What a conversation is: turns of (question, how it was read, the walk's trace, answer, citations). Plain
dataclasses; :mod:`shelfwise.core.conversation.storage` keeps them in the library database."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from shelfwise.core.json_types import JSONObject
from shelfwise.ingest.model import Location


@dataclass
class Reading:
    """How a question was read against the conversation before it.

    ``mode`` is ``first`` (no history), ``alone`` (asked alone on purpose), ``followup`` (read with the history)
    or ``shift`` (history present, but the question moved to another topic: read alone). ``query`` is the text the
    embedder, BM25, the judge and the extractive answer read; ``prior`` the branches (node ids) the walk prefers,
    with the logit each gets; ``why`` the evidence that decided it, said in words."""

    mode: str
    query: str
    question: str
    prior: dict[int, float] = field(default_factory=dict)
    why: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    vector: np.ndarray | None = None  # the embedder's vector of ``query`` itself, where the reading embedded it (a
    # first, alone or shifted question): the next turn's mix reads it instead of embedding ``query`` again
    vector_model: str = ""  # the embedder that made ``vector`` (a vector of another embedder is not used)

    def to_dict(self) -> JSONObject:
        return {"mode": self.mode, "query": self.query, "question": self.question,
                "prior": {str(k): v for k, v in self.prior.items()}, "why": self.why, "scores": self.scores}

    @classmethod
    def from_dict(cls, d: JSONObject) -> Reading:
        return cls(mode=str(d.get("mode", "first")), query=str(d.get("query", "")),
                   question=str(d.get("question", "")),
                   prior={int(k): float(v) for k, v in (d.get("prior") or {}).items()},
                   why=str(d.get("why", "")), scores={k: float(v) for k, v in (d.get("scores") or {}).items()})


@dataclass
class TurnCitation:
    """One source of a turn's answer, kept with what is needed to show it after the document changed or went:
    file, title, section path, page/slide/sheet, and the quoted sentence."""

    number: int
    node_id: int
    document_id: int
    path: str
    title: str
    heading_path: list[str]
    location: Location
    quote: str  # the sentence of the passage that answered (the passage's start when none was extracted)
    missing: bool = False  # set on reading: the cited document is no longer in the library

    def to_dict(self) -> JSONObject:
        return {"number": self.number, "node_id": self.node_id, "document_id": self.document_id, "path": self.path,
                "title": self.title, "heading_path": list(self.heading_path), "location": self.location.to_dict(),
                "quote": self.quote}

    @classmethod
    def from_dict(cls, d: JSONObject) -> TurnCitation:
        return cls(number=int(d.get("number", 0)), node_id=int(d.get("node_id", 0)),
                   document_id=int(d.get("document_id", 0)), path=str(d.get("path", "")),
                   title=str(d.get("title", "")), heading_path=[str(h) for h in d.get("heading_path") or []],
                   location=Location.from_dict(d.get("location")), quote=str(d.get("quote", "")))

    def where(self) -> str:
        """"handbook.pdf, p. 5, 3 Leave > 3.2 Requesting leave" (file name, location, sections)."""
        name = self.path.replace("\\", "/").rsplit("/", 1)[-1] or self.title
        parts = [name]
        label = self.location.label()
        if label:
            parts.append(label)
        if self.heading_path:
            parts.append(" > ".join(self.heading_path))
        return ", ".join(parts)


@dataclass
class Turn:
    """One question of a conversation and everything that answered it. ``trace`` is the walk's trace in its JSON
    form (:func:`shelfwise.core.navigation.trace.to_dict`), kept so the window can show that turn's walk again."""

    position: int
    question: str
    reading: Reading
    answer: str
    found: bool
    citations: list[TurnCitation] = field(default_factory=list)
    generated: str = ""
    trace: JSONObject = field(default_factory=dict)
    hit_nodes: list[int] = field(default_factory=list)  # the walk's top passages (node ids), best first
    hit_documents: list[int] = field(default_factory=list)  # their documents, in the same order
    created_at: str = ""
    id: int | None = None

    @property
    def shown(self) -> str:
        """The answer a person saw: the model's checked answer when there is one, else the extracted one."""
        return self.generated or self.answer


@dataclass
class Conversation:
    id: int | None
    collection: str
    title: str = ""
    turns: list[Turn] = field(default_factory=list)
    created_at: str = ""
    updated_at: str = ""


@dataclass
class ConversationSummary:
    """One row of the list of conversations."""

    id: int
    collection: str
    title: str
    turns: int
    updated_at: str
