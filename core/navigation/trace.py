"""What flows from the engine to the CLI and the GUI: found passages, the navigation trace, answers, citations.

The CLI (``core/cli.py``) and the GUI (``app/``) render exactly these objects; ``to_dict`` gives the JSON form.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from shelfwise.ingest.model import Location


@dataclass
class Candidate:
    """One node judged at one level of the walk."""

    node_id: int
    kind: str  # "cluster" | "document" | "section" | "passage"
    title: str
    description: str
    score: float  # the calibrated P(relevant) (or the readout in use), higher is better
    kept: bool
    parent_id: int | None = None
    features: dict[str, float] = field(default_factory=dict)  # each evidence part: lm, cosine, bm25, prior...
    source: str = "tree"  # "tree" | "dense" | "lexical" (hybrid candidates added at the last level)


@dataclass
class Level:
    """One level of the walk: what was judged, what was kept, and what it cost."""

    depth: int
    label: str  # "topics", "documents", "sections", "passages"
    candidates: list[Candidate]
    requests: int = 0
    tokens: int = 0
    seconds: float = 0.0
    judged: int = 0  # candidates the relevance judge read at this level

    @property
    def kept(self) -> list[Candidate]:
        return [c for c in self.candidates if c.kept]


@dataclass
class Hit:
    """A passage found, with where it is."""

    node_id: int
    document_id: int
    text: str
    score: float
    path: str  # file path
    title: str  # document title
    heading_path: list[str]
    location: Location

    def location_label(self) -> str:
        return self.location.label()


@dataclass
class Trace:
    """The whole walk of one query."""

    query: str
    levels: list[Level] = field(default_factory=list)
    readout: str = ""
    seconds: float = 0.0
    calibration: str = ""  # how the decision model's ranking was set, per level (prior or fitted on probes)
    notes: list[str] = field(default_factory=list)  # e.g. "the question was clipped to ..."
    judge: str = ""  # the relevance judge's model id when one read candidates ("" = none)
    scope: str = ""  # what the walk was limited to ("type:pptx in:~/Reports: 2 of 6 documents"), "" = everything

    @property
    def tokens(self) -> int:
        return sum(level.tokens for level in self.levels)

    @property
    def judged(self) -> int:
        return sum(level.judged for level in self.levels)

    @property
    def requests(self) -> int:
        return sum(level.requests for level in self.levels)


@dataclass
class SearchResult:
    """What navigation returns: ranked passages and the trace that led to them."""

    query: str
    hits: list[Hit]
    trace: Trace


@dataclass
class Citation:
    number: int  # the [n] used in the answer text
    hit: Hit


@dataclass
class Step:
    """One step of adaptive retrieval (DeepRAG): a sub-question, where its answer came from, and why."""

    question: str
    answer: str
    source: str  # "documents" | "model"
    p_retrieve: float
    hits: list[Hit] = field(default_factory=list)


@dataclass
class Extracted:
    """A sentence of a cited passage that answers the question (the extractive answer), and where it sits."""

    text: str  # the sentence as written in the passage
    number: int  # the citation number of its passage ([n] in the answer)
    start: int  # character offsets of the sentence in the passage's text
    end: int
    score: float  # the ranker's score (higher is better; judge logit or embedder cosine plus cues)


@dataclass
class OutlineEntry:
    """One heading (or document) of an outline shown beside a structural answer."""

    node_id: int
    title: str
    depth: int  # 0 = the document itself
    location: Location = field(default_factory=Location)
    highlighted: bool = False  # the part that answered


@dataclass
class Outline:
    """A document's headings in reading order (or, for a list of documents, the documents), with the part that
    answered highlighted: what the walk view shows for a structural answer."""

    title: str
    path: str
    entries: list[OutlineEntry] = field(default_factory=list)


@dataclass
class Answer:
    """``text`` is the answer shown first: the extracted sentence(s) with their [n] (or the model's text on the
    adaptive path). ``generated`` is the model's answer when it passed the grounding check; when it did not,
    ``generation_note`` says why and ``generated_raw`` keeps what the model wrote (never shown as the answer)."""

    question: str
    text: str
    citations: list[Citation]
    found: bool  # False: "not found in your documents"
    search: SearchResult | None = None
    steps: list[Step] = field(default_factory=list)
    tokens: int = 0
    seconds: float = 0.0
    sentences: list[Extracted] = field(default_factory=list)
    generated: str = ""
    generated_raw: str = ""
    generation_note: str = ""
    first_seconds: float = 0.0  # question -> first answer text (the extracted sentence), walk included
    notes: list[str] = field(default_factory=list)  # e.g. "the question was clipped to ..."
    kind: str = ""  # "" = answered from passages; else the structural kind (core/answers/structure_intent.py)
    outline: Outline | None = None  # for a structural answer: the outline it was read from


def to_dict(obj: Any) -> Any:
    """JSON-ready form of any of the dataclasses above (locations as dicts, properties included for levels)."""
    if isinstance(obj, Location):
        return obj.to_dict() | {"label": obj.label()}
    if isinstance(obj, Level):
        d = {k: to_dict(v) for k, v in obj.__dict__.items()}
        d["kept_count"] = len(obj.kept)
        return d
    if isinstance(obj, Trace):
        d = {k: to_dict(v) for k, v in obj.__dict__.items()}
        d["tokens"] = obj.tokens
        d["requests"] = obj.requests
        return d
    if hasattr(obj, "__dataclass_fields__"):
        return {k: to_dict(getattr(obj, k)) for k in obj.__dataclass_fields__}
    if isinstance(obj, list | tuple):
        return [to_dict(x) for x in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj


__all__ = ["Answer", "Candidate", "Citation", "Extracted", "Hit", "Level", "Outline", "OutlineEntry", "SearchResult",
           "Step", "Trace", "asdict", "to_dict"]
