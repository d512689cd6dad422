"""What an answer is: the shown text, its citations, the extracted sentences, the adaptive path's steps, and the
generated answer with its grounding verdict. The CLI and the GUI render these; ``navigation.trace.to_dict`` gives
their JSON form.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from shelfwise.core.answers.table_rows import read_row
from shelfwise.core.navigation.trace import Hit, Outline, SearchResult


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
    header: str = ""  # for a table row: its table's header row, with which it is shown (extractive.read_row)

    @property
    def shown(self) -> str:
        """The sentence as the answer shows it: a table row read with its column names, else as written."""
        return read_row(self.header, self.text) if self.header else self.text


@dataclass
class Answer:
    """``text`` is the answer shown first, on every path: the extracted sentence(s) of the cited passages with
    their [n], or "Not found in your documents." (``found=False``). ``generated`` is the model's answer when it
    passed the grounding check; when it did not (:attr:`withdrawn`), ``generation_note`` says why and
    ``generated_raw`` keeps what the model wrote (never shown as the answer). How they are reported while the
    answer is made: ``core/answers/from_passages.py``."""

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

    @property
    def withdrawn(self) -> bool:
        """The model wrote an answer (it may have been streamed) that is not kept: a front end takes it back."""
        return bool(self.generated_raw) and not self.generated
