"""What navigation hands to the answers and the front ends: found passages and the navigation trace.

The CLI (``app/cli``) and the GUI (``app/gui``) render exactly these objects and the answers' own
(:mod:`shelfwise.core.answers.types`); ``to_dict`` gives the JSON form of either.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, is_dataclass

from shelfwise.core.json_types import JSONValue
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
    encoder: str = ""  # the sentence encoder's model id and where it ran ("..., in process", a server's URL)
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


def to_dict(obj: object) -> JSONValue:
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
    if is_dataclass(obj) and not isinstance(obj, type):
        values = vars(obj)  # the instance's fields (none of these dataclasses has slots)
        return {f.name: to_dict(values[f.name]) for f in fields(obj)}
    if isinstance(obj, list | tuple):
        return [to_dict(x) for x in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj


__all__ = ["Candidate", "Hit", "Level", "Location", "Outline", "OutlineEntry", "SearchResult", "Trace", "asdict",
           "to_dict"]
