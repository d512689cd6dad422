"""A library's documents, sections and passages as plain rows, for ``shelfwise export`` (JSON or CSV).

The rows are read through sqlite-utils' ``Database.query`` on the store's own connection (dicts keyed by column,
in reading order: ``ORDER BY id`` is depth-first order, see ``tree_rows``). JSON is one object with the three
lists, exactly as ``json.dump`` writes it; CSV is one file per list (``documents.csv``, ``sections.csv``,
``passages.csv``) in a folder, each cell made inert for a spreadsheet (:func:`~shelfwise.core.store.inert.csv_cell`).
Files are written whole or not at all (:func:`~shelfwise.core.store.inert.write_atomically`).
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from shelfwise.core.store.inert import csv_cell, write_atomically
from shelfwise.core.store.types import path_from_key

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

    def as_dict(self) -> dict[str, list[Row]]:
        return dict(self._tables())

    def write_json(self, out: IO[str]) -> None:
        """One JSON object ``{"documents": [...], "sections": [...], "passages": [...]}``."""
        json.dump(self.as_dict(), out, ensure_ascii=False, indent=2)
        out.write("\n")

    def write_json_file(self, path: Path) -> Path:
        """The JSON written to ``path`` whole (a temporary file renamed into place), or OSError, the old file kept."""
        return write_atomically(path, self.write_json)

    def write_csv(self, folder: Path) -> list[Path]:
        """``documents.csv``, ``sections.csv`` and ``passages.csv`` in ``folder`` (made if missing); returns them.
        Each file is written whole or not at all; a cell a spreadsheet would run as a formula begins with ``'``."""
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for name, rows in self._tables():
            columns = _columns(name)

            def write(fh: IO[str], rows: list[Row] = rows, columns: list[str] = columns) -> None:
                writer = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore")
                writer.writeheader()
                writer.writerows({k: csv_cell(row.get(k)) for k in columns} for row in rows)

            written.append(write_atomically(folder / f"{name}.csv", write))
        return written


def _columns(table: str) -> list[str]:
    base = ["id", "document_id", "parent_id", "ordinal", "depth", "title", "heading", "page"]
    if table == "documents":
        return ["id", "collection", "path", "title", "format", "status", "message", "pages", "sections", "passages",
                "ocr_pages", "size", "sha256", "ingested_at", "languages"]
    if table == "sections":
        return [*base, "description"]
    return [*base, "text", "location"]


def exported_path(key: str) -> str:
    """A stored path as an export writes it: a byte of a file name that is not UTF-8 as ``\\xe9`` (how the command
    line shows it), never the store's internal form (a NUL and two hex digits: ``path_key``), which no program reading
    the JSON or the CSV could open."""
    path = path_from_key(key)
    return os.fsencode(path).decode("utf-8", "backslashreplace") if path != key else path


def export_rows(conn: sqlite3.Connection, collection_id: int | None = None) -> LibraryExport:
    """The documents, sections and passages of the library (of one collection when ``collection_id`` is given)."""
    import sqlite_utils  # only when exporting (see store/lite.py)

    db = sqlite_utils.Database(conn)
    params: dict[str, int] = {} if collection_id is None else {"cid": collection_id}
    doc_where = "" if collection_id is None else "WHERE d.collection_id = :cid"
    node_where = "" if collection_id is None else "AND n.collection_id = :cid"
    documents = list(db.query(_DOCUMENTS.format(where=doc_where), params))
    for row in documents:
        row["path"] = exported_path(str(row["path"]))
    return LibraryExport(
        documents=documents,
        sections=list(db.query(_NODES.format(extra="n.description", kind="section", where=node_where), params)),
        passages=list(db.query(_NODES.format(extra="n.text, n.location", kind="passage", where=node_where),
                               params)),
    )
