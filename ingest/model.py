"""What a parser returns: a document outline of sections and passages, with locations.

Every format parser (``ingest/pdf.py``, ``docx.py``, ``pptx.py``, ``xlsx.py``, ``text.py``) turns one file into a
:class:`ParsedDocument`. The store (``core/store/db.py``) writes it as tree nodes. No Qt, no SQLite here.
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
    # OCR'd text: the boxes of its lines as (page, x0, y0, x1, y1) in PDF points, for the preview's highlight
    boxes: tuple[tuple[int, float, float, float, float], ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Location:
        if not data:
            return cls()
        values = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        if values.get("boxes") is not None:  # JSON gives lists
            values["boxes"] = tuple(tuple(b) for b in values["boxes"])
        return cls(**values)

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
    ocr_pages: int = 0  # pages whose text was read by OCR

    def nodes(self) -> list[ParsedNode]:
        out: list[ParsedNode] = []
        for child in self.children:
            out.extend(child.walk())
        return out

    def count(self, kind: NodeKind) -> int:
        return sum(1 for n in self.nodes() if n.kind == kind)


class IngestError(Exception):
    """A file that cannot be ingested. ``status`` is stored with the document; the message is shown to the user.

    ``passing``: the failure may pass without the file changing (it could not be read now, the worker was killed, a
    time cap on a loaded machine), so the next plain ingest tries the file again; a failure about the file itself
    (encrypted, corrupt, unsupported) is not retried until the file changes."""

    status = "error"
    passing = False


class ReadFailed(IngestError):
    """The file could not be read now (an I/O error, permissions, a file that changed while it was read)."""

    passing = True


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


MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Every bound on parsing huge or hostile input, in one place (the parse worker and all parsers read these).

    Each bound is a multiple of the largest value seen on the real files of ``../shared/corpus`` (the figures, and
    what measured them, are in docs/reliability.md, "Limits"; ``benchmarks/reliability.py`` re-measures the
    hostile side):

    * Office zips: a member may unpack to at most ``max_zip_member_bytes`` (its XML is parsed whole, at about 16
      bytes of memory per byte, which must fit the memory cap), the whole package to ``max_zip_uncompressed_bytes``
      (media parts are never parsed into memory), and a member over 1 MiB may expand at most ``max_zip_ratio``.
      Declared sizes are not trusted: every member is streamed through a counting reader first
      (:func:`shelfwise.ingest.sniff.check_zip_members`).
    * Passages: a document keeps at most ``max_passages``; parsing stops there (``OutlineBuilder(max_passages)``;
      text is read lazily) with a warning, so a huge one-line file never builds them all.
    * The parse worker is killed above ``max_worker_rss_bytes`` resident (the issue's bound for one ingest; a
      watchdog thread in the parent, on every platform) and its address space is capped at
      ``max_worker_address_space_bytes`` (``RLIMIT_AS`` on POSIX: an allocation past it fails inside the parser,
      which reports "not enough memory"; set for OCR, whose models need more address space than parsing). A file
      gets at most ``max_parse_seconds`` (the parent kills the worker).
    * A worker is reused from file to file, and the heap a big file grew stays resident, so a worker left above
      ``worker_recycle_rss_bytes`` after a file is replaced: each file starts from a fresh worker, not the last
      file's high-water mark. The time cap counts from the last progress report: OCR reports every page, and is
      bounded itself by ``ocr_page_seconds`` per page and ``max_ocr_pages`` per file.
    """

    max_file_bytes: int = 512 * MiB
    max_zip_uncompressed_bytes: int = 128 * MiB  # zip-bomb guard for Office files: the whole package
    max_zip_member_bytes: int = 40 * MiB  # one member (the XML a parser loads whole)
    max_zip_ratio: float = 100.0  # uncompressed / compressed, for members over 1 MiB
    max_pages: int = 5000
    max_sheet_cells: int = 2_000_000
    max_passages: int = 20_000  # per document; the rest is dropped with a warning
    passage_tokens: int = 200
    max_worker_rss_bytes: int = 1024 * MiB  # the parent's watchdog kills a parse worker above this
    worker_recycle_rss_bytes: int = 400 * MiB  # a worker left above this after a file is replaced by a fresh one
    max_worker_address_space_bytes: int = 2560 * MiB  # RLIMIT_AS of the parse worker (POSIX), room for OCR
    max_parse_seconds: float = 300.0  # one file, measured from the request to the reply
    min_printable_ratio: float = 0.95  # decoded text below this share of printable characters is binary
    max_nonascii_ratio_cp1252: float = 0.3  # a Windows-1252 guess with more non-ASCII than this is not text
    max_ocr_pages: int = 100  # pages read by OCR per file
    ocr_page_seconds: float = 180.0  # a page whose OCR takes longer is skipped (with a warning)
    ocr_dpi: int = 300  # render resolution for OCR (chosen by benchmarks/ocr.py: see ingest/ocr.py DEFAULT_DPI)


DEFAULT_LIMITS = Limits()  # the default for every parser's ``limits`` argument
