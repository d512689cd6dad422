"""Rows and small helpers of the store (see ``core/store.py``): what the store hands to other layers."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from shelfwise.ingest.model import Location, ParsedNode

STATUSES = ("ok", "error", "needs_ocr")
KEPT_SUFFIX = " (previous version kept)"
NODE_COLS = "id, collection_id, document_id, parent_id, kind, ordinal, depth, title, description, text, location, " \
    "heading_path"
DOC_COLS = "id, collection_id, path, size, mtime, sha256, format, status, message, title, pages, sections, " \
    "passages, ingested_at, warnings"


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
    return s.replace("\x00", "") if "\x00" in s else s


def node_from_row(r: Sequence[Any]) -> NodeRow:
    return NodeRow(
        r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
        Location.from_dict(json.loads(r[10])), json.loads(r[11]),
    )


def doc_from_row(r: Sequence[Any]) -> DocumentRow:
    return DocumentRow(
        id=r[0], collection_id=r[1], path=r[2], size=r[3], mtime=r[4], sha256=r[5], format=r[6], status=r[7],
        message=r[8], title=r[9], pages=r[10], sections=r[11], passages=r[12], ingested_at=r[13],
        warnings=json.loads(r[14]),
    )


LOC_FIELDS = tuple(Location.__dataclass_fields__)


def location_json(loc: Location) -> str:
    """``json.dumps(loc.to_dict())`` without dataclasses.asdict's deep copy (hot path: once per node)."""
    d = {k: v for k in LOC_FIELDS if (v := getattr(loc, k)) is not None}
    return json.dumps(d, ensure_ascii=False) if d else "{}"


def first_text(node: ParsedNode) -> str:
    if node.text.strip():
        return node.text
    for child in node.children:
        text = first_text(child)
        if text:
            return text
    return ""
