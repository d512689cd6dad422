"""Rows and small helpers of the store (see ``core/store/db.py``): what the store hands to other layers."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from shelfwise.ingest.model import Location, ParsedNode

STATUSES = ("ok", "error", "needs_ocr")
KEPT_SUFFIX = " (previous version kept)"
NODE_COLS = "id, collection_id, document_id, parent_id, kind, ordinal, depth, title, description, text, location, " \
    "heading_path"
DOC_COLS = "id, collection_id, path, size, mtime, sha256, format, status, message, title, pages, sections, " \
    "passages, ingested_at, warnings, ocr_pages, retry, languages"

SQLValue: TypeAlias = str | int | float | bytes | None  # what one SQLite cell holds, or one statement parameter
SQLRow: TypeAlias = tuple[SQLValue, ...]  # one row of any table, column by column
SQLParams: TypeAlias = Sequence[SQLValue]  # a statement's parameters
# A node's row as NODE_COLS reads it (location and heading_path are JSON text)
NodeTuple: TypeAlias = tuple[int, int, int | None, int | None, str, int, int, str, str, str, str, str]
# A document's row as DOC_COLS reads it (warnings is JSON text, retry 0/1, languages comma-separated)
DocTuple: TypeAlias = tuple[int, int, str, int, float, str, str, str, str, str, int, int, int, str, str, int, int,
                            str | None]


class StoreError(RuntimeError):
    """The library database cannot be opened: not a database, damaged, locked, unreadable, or too new."""


@dataclass(frozen=True)
class FileMeta:
    """What identifies one version of a file on disk."""

    size: int
    mtime: float
    sha256: str


@dataclass
class CollectionRow:
    id: int
    name: str
    created_at: str
    root_node_id: int


@dataclass
class DocumentRow:
    id: int
    collection_id: int
    path: str
    size: int
    mtime: float
    sha256: str
    format: str
    status: str  # 'ok' | 'error' | 'needs_ocr'
    message: str
    title: str
    pages: int
    sections: int
    passages: int
    ingested_at: str
    warnings: list[str] = field(default_factory=list)
    ocr_pages: int = 0  # pages whose text was read by OCR
    retry: bool = False  # a failure that may pass (disk full, worker killed, ...): the next ingest tries again
    # ISO 639-1 codes of its languages, main first ([] none found, e.g. no text; None: not detected yet)
    languages: list[str] | None = None

    def retry_label(self) -> str:
        """For a failed document: whether the next ingest tries it again (see IngestError.passing)."""
        if self.status == "ok":
            return ""
        return ("may pass: tried again by the next ingest" if self.retry
                else "about the file: not tried again until it changes (or: ingest --force)")

    def ocr_label(self) -> str:
        """``"OCR 3/12 pages"`` for a document read (partly) by OCR, else ``""``."""
        return f"OCR {self.ocr_pages}/{self.pages} pages" if self.ocr_pages else ""


@dataclass
class NodeRow:
    id: int
    collection_id: int
    document_id: int | None
    parent_id: int | None
    kind: str  # 'collection' | 'cluster' | 'document' | 'section' | 'passage'
    ordinal: int
    depth: int
    title: str
    description: str
    text: str
    location: Location
    heading_path: list[str]


@dataclass
class SearchHit:
    node: NodeRow
    score: float  # -bm25: higher is better
    snippet: str  # matched terms wrapped in [ ]


@dataclass
class StoreStats:
    collections: int
    documents: int
    documents_by_status: dict[str, int]
    nodes_by_kind: dict[str, int]
    embeddings_by_model: dict[str, int]
    db_bytes: int


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S")


def clean_text(s: str) -> str:
    """Text as stored: NULs dropped; lone surrogates (undecodable bytes of a file name, kept by Python's
    surrogateescape) become U+FFFD, since SQLite text must be valid UTF-8."""
    if "\x00" in s:
        s = s.replace("\x00", "")
    if _has_surrogates(s):
        s = s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        if _has_surrogates(s):
            s = s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return s


def _has_surrogates(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


# A file name that is not valid UTF-8 reaches Python with its undecodable bytes as lone surrogates U+DC80-U+DCFF
# (surrogateescape). SQLite text cannot hold those, so each is stored as NUL + two hex digits: lossless (no real
# path contains NUL) and the same string for every other path.
_ESC = "\x00"


def path_key(path: object) -> str:
    """The stored form of a file path (see above); :func:`path_from_key` reverses it."""
    s = str(path)
    if not _has_surrogates(s):
        return s
    out = []
    for ch in s:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"{_ESC}{code - 0xDC00:02x}")
        elif 0xD800 <= code <= 0xDFFF:  # other lone surrogates (Windows names): keep the code point
            out.append(f"{_ESC}u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def path_from_key(key: str) -> str:
    if _ESC not in key:
        return key
    out = []
    i = 0
    while i < len(key):
        if key[i] == _ESC:
            if key[i + 1] == "u":
                out.append(chr(int(key[i + 2:i + 6], 16)))
                i += 6
            else:
                out.append(chr(0xDC00 + int(key[i + 1:i + 3], 16)))
                i += 3
        else:
            out.append(key[i])
            i += 1
    return "".join(out)


def node_from_row(r: NodeTuple) -> NodeRow:
    return NodeRow(
        r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
        Location.from_dict(json.loads(r[10])), json.loads(r[11]),
    )


def doc_from_row(r: DocTuple) -> DocumentRow:
    return DocumentRow(
        id=r[0], collection_id=r[1], path=path_from_key(r[2]), size=r[3], mtime=r[4], sha256=r[5], format=r[6],
        status=r[7], message=r[8], title=r[9], pages=r[10], sections=r[11], passages=r[12], ingested_at=r[13],
        warnings=json.loads(r[14]), ocr_pages=r[15], retry=bool(r[16]),
        languages=r[17].split(",") if r[17] else ([] if r[17] == "" else None),
    )


def location_json(loc: Location) -> str:
    """``json.dumps(loc.to_dict())`` without dataclasses.asdict's deep copy (hot path: once per node)."""
    pairs = (("page", loc.page), ("page_end", loc.page_end), ("slide", loc.slide), ("sheet", loc.sheet),
             ("cells", loc.cells), ("line", loc.line), ("boxes", loc.boxes))  # every field of Location (a test)
    d = {k: v for k, v in pairs if v is not None}
    return json.dumps(d, ensure_ascii=False) if d else "{}"


def first_text(node: ParsedNode) -> str:
    if node.text.strip():
        return node.text
    for child in node.children:
        text = first_text(child)
        if text:
            return text
    return ""
