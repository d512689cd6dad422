"""A library's documents, sections and passages as plain rows, for ``shelfwise export`` (JSON or CSV).

The rows are read through sqlite-utils' ``Database.query`` on the store's own connection (dicts keyed by column,
in reading order: ``ORDER BY id`` is depth-first order, see ``tree_rows``). JSON is one object with the three
lists; CSV is one file per list (``documents.csv``, ``sections.csv``, ``passages.csv``) in a folder.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import sqlite_utils

TABLES = ("documents", "sections", "passages")
FORMATS = ("json", "csv")
#: One exported row: column -> a JSON value.
Row = dict[str, object]

_DOCUMENTS = """SELECT d.id, c.name AS collection, d.path, d.title, d.format, d.status, d.message, d.pages,
    d.sections, d.passages, d.ocr_pages, d.size, d.sha256, d.ingested_at, d.languages
    FROM documents d JOIN collections c ON c.id = d.collection_id {where} ORDER BY d.id"""
_NODES = """SELECT n.id, n.document_id, n.parent_id, n.ordinal, n.depth, n.title, n.heading_text AS heading,
    n.page, {extra} FROM nodes n JOIN collections c ON c.id = n.collection_id
    WHERE n.kind = '{kind}' {where} ORDER BY n.id"""


@dataclass(frozen=True)
class LibraryExport:
    """What ``shelfwise export`` writes: the rows of each of :data:`TABLES` (JSON-shaped dicts)."""

    documents: list[Row]
    sections: list[Row]
    passages: list[Row]

    def _tables(self) -> Iterator[tuple[str, list[Row]]]:
        yield "documents", self.documents
        yield "sections", self.sections
        yield "passages", self.passages

    def write_json(self, out: IO[str]) -> None:
        """One JSON object ``{"documents": [...], "sections": [...], "passages": [...]}``."""
        json.dump(dict(self._tables()), out, ensure_ascii=False, indent=2)
        out.write("\n")

    def write_csv(self, folder: Path) -> list[Path]:
        """``documents.csv``, ``sections.csv`` and ``passages.csv`` in ``folder`` (made if missing); returns them."""
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for name, rows in self._tables():
            path = folder / f"{name}.csv"
            with path.open("w", encoding="utf-8", newline="") as fh:
                writer = csv.DictWriter(fh, fieldnames=_columns(name), extrasaction="ignore")
                writer.writeheader()
                writer.writerows(rows)
            written.append(path)
        return written


def _columns(table: str) -> list[str]:
    base = ["id", "document_id", "parent_id", "ordinal", "depth", "title", "heading", "page"]
    if table == "documents":
        return ["id", "collection", "path", "title", "format", "status", "message", "pages", "sections", "passages",
                "ocr_pages", "size", "sha256", "ingested_at", "languages"]
    if table == "sections":
        return [*base, "description"]
    return [*base, "text", "location"]


def export_rows(conn: sqlite3.Connection, collection_id: int | None = None) -> LibraryExport:
    """The documents, sections and passages of the library (of one collection when ``collection_id`` is given)."""
    db = sqlite_utils.Database(conn)
    params: dict[str, int] = {} if collection_id is None else {"cid": collection_id}
    doc_where = "" if collection_id is None else "WHERE d.collection_id = :cid"
    node_where = "" if collection_id is None else "AND n.collection_id = :cid"
    return LibraryExport(
        documents=list(db.query(_DOCUMENTS.format(where=doc_where), params)),
        sections=list(db.query(_NODES.format(extra="n.description", kind="section", where=node_where), params)),
        passages=list(db.query(_NODES.format(extra="n.text, n.location", kind="passage", where=node_where),
                               params)),
    )
