"""What a parser returns: a document outline of sections and passages, with locations.

Every format parser (``ingest/pdf.py``, ``docx.py``, ``pptx.py``, ``xlsx.py``, ``text.py``) turns one file into a
:class:`ParsedDocument`. The store (``core/store/db.py``) writes it as tree nodes. No Qt, no SQLite here.
"""

from __future__ import annotations

import datetime as dt
import re
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


CellKind = Literal["number", "money", "percent", "date", "time", "text"]


@dataclass
class ParsedTable:
    """A table found as a table (``ingest/tables.py`` types its cells): its column names, its data rows as shown,
    each cell's value as a number where it is one (money and percent without their signs, a date as its day
    number, a time in seconds; ``None`` for text), each column's kind and each row's kind ("data", or "total" for
    a total or subtotal row). The section node that holds it has the rows' passages as its children;
    ``row_passage[i]`` is the index among those children of the passage holding data row ``i`` (-1: none, the
    row was past the document's passage cap; the table keeps every row). For a sheet,
    ``sheet``, ``first_col`` (0-based) and ``sheet_rows`` (each data row's 1-based row number) give cell
    addresses such as ``Salary bands!F6``."""

    header: list[str]
    rows: list[list[str]]
    numbers: list[list[float | None]]
    kinds: list[CellKind]
    row_kinds: list[str]
    row_passage: list[int] = field(default_factory=list)
    sheet: str = ""
    first_col: int = 0
    sheet_rows: list[int] = field(default_factory=list)
    header_row: int = 0  # a sheet's (last) header row number, 0 elsewhere


@dataclass
class ParsedNode:
    """A section (has children) or a passage (has text) of a parsed document. A section holding a table found as a
    table has it in ``table`` (its passages are the table's rows, with their column names)."""

    kind: NodeKind
    title: str
    text: str = ""
    location: Location = field(default_factory=Location)
    children: list[ParsedNode] = field(default_factory=list)
    table: ParsedTable | None = None

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

    def tables(self) -> list[ParsedTable]:
        return [n.table for n in self.nodes() if n.table is not None]


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
    what measured them, are in docs/reliability.md, "Limits"; ``benchmarks/product/reliability.py`` re-measures the
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
    ocr_dpi: int = 300  # render resolution for OCR (chosen by benchmarks/product/ocr.py: see ingest/ocr.py DEFAULT_DPI)


DEFAULT_LIMITS = Limits()  # the default for every parser's ``limits`` argument


# A table cell's value read from its text (every parser that finds a table, and the table answers' bounds in a
# question, read cells the same way): ``ingest/tables.py`` has the rest of reading a table.
_CURRENCY = r"(?:[€$£¥₹]|EUR|USD|GBP|CHF|JPY|CAD|AUD|SEK|NOK|DKK|PLN|CZK)"
_NUM = r"[-+−]?\(?\d[\d,.'\u202f\u00a0 ]*\d?\)?"
_MONEY = re.compile(rf"^(?:{_CURRENCY}\s?({_NUM})|({_NUM})\s?{_CURRENCY})$", re.IGNORECASE)
_PERCENT = re.compile(rf"^({_NUM})\s?%$")
_PLAIN = re.compile(rf"^({_NUM})$")
_LEADING = re.compile(r"^[-+−]?\d[\d,]*(?:\.\d+)?")
_TIME = re.compile(r"^(\d{1,2}):(\d\d)(?::(\d\d))?(?:\s?([ap])\.?m\.?)?$", re.IGNORECASE)
_ISO = re.compile(r"^(\d{4})-(\d\d)-(\d\d)(?:[ T][\d:]+)?$")
_DMY = re.compile(r"^(\d{1,2})[./](\d{1,2})[./](\d{4})$")
_MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
     "december"])}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_WORD_DATE = re.compile(r"^(?:(\d{1,2})\s+([a-z]+)\.?,?\s+(\d{4})|([a-z]+)\.?\s+(\d{1,2}),?\s+(\d{4}))$", re.IGNORECASE)
def _number(text: str) -> float | None:
    """"1,234.5" / "1.234,5" / "(12)" / "−3" as a float, else None."""
    t = text.replace("\u202f", "").replace("\u00a0", "").replace(" ", "").replace("'", "").replace("−", "-")
    negative = t.startswith("(") and t.endswith(")")
    t = t.strip("()")
    if not t:
        return None
    if "," in t and "." in t:  # the later one is the decimal mark
        t = t.replace(",", "") if t.rfind(".") > t.rfind(",") else t.replace(".", "").replace(",", ".")
    elif "," in t:  # 1,234 (thousands) or 3,5 (decimal)
        head, _, tail = t.rpartition(",")
        t = t.replace(",", "") if len(tail) == 3 and head.lstrip("+-") else t.replace(",", ".")
    elif t.count(".") > 1:
        t = t.replace(".", "")
    try:
        value = float(t)
    except ValueError:
        return None
    return -value if negative else value


def _date(text: str) -> dt.date | None:
    try:
        if m := _ISO.match(text):
            return dt.date(int(m[1]), int(m[2]), int(m[3]))
        if m := _DMY.match(text):
            return dt.date(int(m[3]), int(m[2]), int(m[1]))
        if m := _WORD_DATE.match(text):
            if m[1]:
                month = _MONTHS.get(m[2].lower())
                return dt.date(int(m[3]), month, int(m[1])) if month else None
            month = _MONTHS.get(m[4].lower())
            return dt.date(int(m[6]), month, int(m[5])) if month else None
    except ValueError:
        return None
    return None


# a Markdown pipe table (a user's Markdown file, and every table as stored: a header row, its rule, the rows)
PIPE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_PIPE_SPLIT = re.compile(r"(?<!\\)\|")


def pipe_cells(line: str) -> list[str]:
    """The cells of a Markdown pipe-table row (an escaped ``\\|`` stays inside its cell)."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [" ".join(c.replace("\\|", "|").split()) for c in _PIPE_SPLIT.split(inner)]


def read_cell(text: str) -> tuple[CellKind, float | None]:
    """A cell's kind and its value as a number (see the module docstring); text that starts with a number (``12
    km``, ``3rd``) keeps that number with the kind "text", so a column of them still sorts."""
    t = " ".join(text.split())
    if not t:
        return "text", None
    if m := _MONEY.match(t):
        value = _number(m[1] or m[2])
        if value is not None:
            return "money", value
    if m := _PERCENT.match(t):
        value = _number(m[1])
        if value is not None:
            return "percent", value
    if _PLAIN.match(t):
        value = _number(t)
        if value is not None:
            return "number", value
    if m := _TIME.match(t):
        hours = int(m[1]) % 12 + (12 if (m[4] or "").lower() == "p" else 0) if m[4] else int(m[1])
        if hours < 24 and int(m[2]) < 60:
            return "time", float(hours * 3600 + int(m[2]) * 60 + int(m[3] or 0))
    day = _date(t)
    if day is not None:
        return "date", float(day.toordinal())
    if m := _LEADING.match(t):
        value = _number(m[0])
        return "text", value
    return "text", None


