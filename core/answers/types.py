"""What an answer is: the shown text, its citations, the extracted sentences, the adaptive path's steps, and the
generated answer with its grounding verdict. The CLI and the GUI render these; ``navigation.trace.to_dict`` gives
their JSON form.
"""

from __future__ import annotations

from collections.abc import Callable
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
    decided: bool = True  # False: one of several questions typed at once, each searched with no decision made

    @property
    def source_label(self) -> str:
        """Where the answer came from, in the words the command line and the window show."""
        return ("searched the documents" if self.source == "documents"
                else "the model's own knowledge, not checked against your documents")

    @property
    def label(self) -> str:
        """:attr:`source_label` with the decision's P(retrieve) where one was made (the step's line shows it)."""
        return f"{self.source_label}, P(retrieve) {self.p_retrieve:.2f}" if self.decided else self.source_label


@dataclass
class Extracted:
    """A sentence of a cited passage that answers the question (the extractive answer), and where it sits."""

    text: str  # the sentence as written in the passage
    number: int  # the citation number of its passage ([n] in the answer)
    start: int  # character offsets of the sentence in the passage's text
    end: int
    score: float  # the ranker's score (higher is better; judge logit or embedder cosine plus cues)
    header: str = ""  # for a table row: its table's header row, with which it is shown (extractive.read_row)
    # what the scorer read of it alone (the encoder's cosine with the question; the judge's probability when one is
    # switched on), and that minus the best such read of another candidate sentence (None: not read / none other)
    cosine: float | None = None
    lead: float | None = None
    # for an item of a list: the sentence that introduces the list ("The following costs are never reimbursed:"),
    # shown before it, since the item alone does not say what it is an item of
    intro: str = ""

    @property
    def shown(self) -> str:
        """The sentence as the answer shows it: a table row read with its column names, a list item after its
        list's lead-in, else as written."""
        text = read_row(self.header, self.text) if self.header else self.text
        return f"{self.intro}\n{text}" if self.intro else text


@dataclass
class CellRef:
    """One table cell an answer used: where it is (the citation ``sheet!F6`` or ``table 2, row 3``) and its value."""

    table_id: int  # the stored table (its id in the library)
    row: int  # 0-based data row of the table (header rows not counted)
    column: int  # 0-based column
    address: str  # as cited: an XLSX cell ("Salary bands!F6"), else "table 2 r3 c4" style
    value: str  # the cell as shown in the source
    number: int = 0  # the citation number [n] of the passage (row) it is in; 0 if not cited as a passage


@dataclass
class ShortAnswer:
    """The value asked for, shown first (large in the window, first in the CLI, ``short_answer`` in JSON): a span
    of a cited passage, or a value computed from a table; never words of the model's.

    ``kind`` says what the question asked for: "number", "money", "percent", "date", "time", "duration", "name",
    "place", "list", "yes_no", "span" (a phrase of another kind), or "computed" (a table's count/sum/average/...).
    A span's ``number``/``start``/``end`` locate it in the cited passage's text (``Citation.number``); a computed
    value names its ``operation`` and the ``cells`` it used, and ``explanation`` says it in words
    ("8 holidays: 4 for Lisbon, 4 for all offices"). For yes/no, ``text`` is "Yes" or "No" and ``sentence`` is the
    deciding sentence it is read from (shown as "No: <sentence>")."""

    text: str
    kind: str
    number: int = 0  # citation number [n] of the passage the span is in (0: computed over several / none)
    start: int = -1  # character offsets of the span in that passage's text (-1: not a single span)
    end: int = -1
    score: float = 0.0  # the ranker's confidence (higher is better; comparable within one answer only)
    sentence: str = ""  # the sentence the value is read from (yes/no: the deciding sentence)
    confidence: float | None = None  # for a span: the chance it is right as short_confidence reads it (None: not read)
    operation: str = ""  # for a table value: "lookup", "count", "sum", "average", "min", "max", "argmax", ...
    explanation: str = ""  # the operation in words, with the rows it used
    cells: list[CellRef] = field(default_factory=list)  # for a table value: every cell it used

    def shown(self) -> str:
        """The line shown first: "No: <sentence>" for a yes/no answer, else the value."""
        if self.kind == "yes_no" and self.sentence:
            return f"{self.text}: {self.sentence}"
        return self.text


@dataclass
class Answer:
    """``text`` is the answer shown first, on every path: the extracted sentence(s) of the cited passages with
    their [n], or "Not found in your documents." (``found=False``). ``generated`` is the model's answer when it
    passed the grounding check; when it did not (:attr:`withdrawn`), ``generation_note`` says why and
    ``generated_raw`` keeps what the model wrote (never shown as the answer). How they are reported while the
    answer is made: :class:`AnswerEvents`."""

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
    generation_checks: list[str] = field(default_factory=list)  # what the shown model text passed, in words
    first_seconds: float = 0.0  # question -> first answer text (the extracted sentence), walk included
    notes: list[str] = field(default_factory=list)  # e.g. "the question was clipped to ..."
    kind: str = ""  # "" = answered from passages; else the structural kind (core/answers/structure_intent.py)
    outline: Outline | None = None  # for a structural answer: the outline it was read from
    short: ShortAnswer | None = None  # the value asked for, shown before ``text`` (None: no value was found)

    def shown_first(self) -> str:
        """What is shown first (``ask --json``'s ``answer``, the CLI's "Answer:" lines, the window's top): the short
        answer with its citation, then the sentence(s) it is read from; a yes/no answer as "No: <sentence> [n]";
        :attr:`text` alone when no value was found."""
        short = self.short
        if short is None or not self.found:
            return self.text
        if short.kind == "yes_no":
            return f"{short.text}: {self.text}"
        if self.text.startswith(short.text):  # a table's value the text already opens with
            return self.text
        cite = f" [{short.number}]" if short.number else ""
        return f"{short.text}{cite}\n{self.text}"

    @property
    def by_steps(self) -> bool:
        """Answered part by part: several questions typed at once, or an adaptive run's sub-questions; each step's
        answer is a line of :attr:`text` (the window and the command line list them as the answer)."""
        return len(self.steps) > 1

    @property
    def withdrawn(self) -> bool:
        """The model wrote an answer (it may have been streamed) that is not kept: a front end takes it back."""
        return bool(self.generated_raw) and not self.generated


@dataclass(frozen=True)
class AnswerEvents:
    """What an answer reports while it is made, to whoever shows it (the CLI's printer, the window's worker): one
    object handed down the whole answer path instead of one callback per event. Each event is optional (None: no
    one listens); they come in this order:

    1. ``on_search(result)``: the walk, as soon as it is done (with adaptive retrieval, each sub-question's walk
       the first time it is made); a structural answer reports the tree it was read from, when it has one.
    2. ``on_extract(answer)``: once, as soon as the sentence(s) are chosen: ``answer.text`` with its ``[n]`` and
       ``answer.citations`` (or "Not found in your documents.", ``found=False``).
    3. ``on_token(piece)``: the generated answer's pieces as the model writes them, its ``[i]`` already turned into
       the passages' own ``[n]`` (``core/answers/from_passages.py``'s ``CitationStream``); nothing else goes
       through it.
    4. ``on_generated(answer)``: once, when the generation is over: ``answer.generated`` is the checked text that
       replaces what was streamed (it can differ: repetition cut, a copied source line tidied, an uncited sentence
       dropped), or it is empty and the streamed text is **withdrawn** (``answer.withdrawn``), ``generation_note``
       saying why.

    No generation (switched off, nothing found): neither ``on_token`` nor ``on_generated`` is called. A
    conversation's turn adds how its question was read (``TurnEvents``, ``core/conversation/turn.py``)."""

    on_search: Callable[[SearchResult], None] | None = None
    on_extract: Callable[[Answer], None] | None = None
    on_token: Callable[[str], None] | None = None
    on_generated: Callable[[Answer], None] | None = None

    def searched(self, result: SearchResult) -> None:
        if self.on_search is not None:
            self.on_search(result)

    def extracted(self, answer: Answer) -> None:
        if self.on_extract is not None:
            self.on_extract(answer)

    def generated(self, answer: Answer) -> None:
        if self.on_generated is not None:
            self.on_generated(answer)


QUIET = AnswerEvents()  # no one listens: the default of every call that takes events
