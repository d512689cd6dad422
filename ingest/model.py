"""What a parser returns: a document outline of sections and passages, with locations.

Every format parser (``ingest/pdf.py``, ``docx.py``, ``pptx.py``, ``xlsx.py``, ``text.py``) turns one file into a
:class:`ParsedDocument`. The store (``core/store.py``) writes it as tree nodes. No Qt, no SQLite here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

NodeKind = Literal["section", "passage"]


@dataclass(frozen=True)
class Location:
    """Where a node lives in its file, so the app can jump there.

    Pages and slides are 1-based. ``page_end`` is set for sections that span pages. ``sheet`` and ``cells``
    (an A1 range such as ``"A1:D12"``) are for spreadsheets; ``line`` for plain text and Markdown.
    """

    page: int | None = None
    page_end: int | None = None
    slide: int | None = None
    sheet: str | None = None
    cells: str | None = None
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Location:
        if not data:
            return cls()
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})

    def label(self) -> str:
        """Human-readable location: ``p. 3``, ``pp. 3-5``, ``slide 4``, ``Sheet1!A1:D9``, ``line 12``."""
        if self.sheet is not None:
            return f"{self.sheet}!{self.cells}" if self.cells else self.sheet
        if self.slide is not None:
            return f"slide {self.slide}"
        if self.page is not None:
            if self.page_end is not None and self.page_end != self.page:
                return f"pp. {self.page}-{self.page_end}"
            return f"p. {self.page}"
        if self.line is not None:
            return f"line {self.line}"
        return ""


@dataclass
class ParsedNode:
    """A section (has children) or a passage (has text) of a parsed document."""

    kind: NodeKind
    title: str
    text: str = ""
    location: Location = field(default_factory=Location)
    children: list[ParsedNode] = field(default_factory=list)

    def walk(self) -> list[ParsedNode]:
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out


@dataclass
class ParsedDocument:
    """One file, parsed. ``children`` are the top-level sections (and any passages before the first heading)."""

    title: str
    format: str  # "pdf", "docx", "pptx", "xlsx", "md", "txt"
    children: list[ParsedNode] = field(default_factory=list)
    pages: int = 0  # pages, slides or sheets
    warnings: list[str] = field(default_factory=list)

    def nodes(self) -> list[ParsedNode]:
        out: list[ParsedNode] = []
        for child in self.children:
            out.extend(child.walk())
        return out

    def count(self, kind: NodeKind) -> int:
        return sum(1 for n in self.nodes() if n.kind == kind)


class IngestError(Exception):
    """A file that cannot be ingested. ``status`` is stored with the document; the message is shown to the user."""

    status = "error"


class PasswordProtected(IngestError):
    pass


class CorruptFile(IngestError):
    pass


class UnsupportedFormat(IngestError):
    pass


class NeedsOCR(IngestError):
    status = "needs_ocr"


class EmptyDocument(IngestError):
    pass


class TooLarge(IngestError):
    pass


@dataclass(frozen=True)
class Limits:
    """Bounds that keep memory bounded on huge or hostile input."""

    max_file_bytes: int = 512 * 1024 * 1024
    max_zip_uncompressed_bytes: int = 1024 * 1024 * 1024  # zip-bomb guard for Office files
    max_zip_ratio: float = 200.0  # uncompressed / compressed per member
    max_pages: int = 5000
    max_sheet_cells: int = 2_000_000
    passage_tokens: int = 200


DEFAULT_LIMITS = Limits()  # the default for every parser's ``limits`` argument
