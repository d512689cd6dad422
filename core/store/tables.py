"""Tables found as tables, in SQLite (migration ``0010_tables``; the schema and why: docs/tables.md).

:func:`write_tables` stores a parsed document's tables inside the transaction that writes its tree; deleting a
document's tables (:func:`delete_tables`) takes their rows and cells with them (foreign keys, ``ON DELETE
CASCADE``). Reading: :class:`StoredTable` (a table's columns and where it sits) and :class:`TableData` (its cells,
read whole for a small table); the table answers compute over columns with SQL.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from shelfwise.ingest.model import ParsedTable, read_cell

__all__ = ["read_cell"]  # the cell reading of ingest, for the table answers (core/answers may not import ingest)

COLUMN_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def column_letter(index0: int) -> str:
    """0 -> "A", 25 -> "Z", 26 -> "AA"."""
    n, out = index0 + 1, ""
    while n:
        n, rem = divmod(n - 1, 26)
        out = COLUMN_LETTERS[rem] + out
    return out


@dataclass(frozen=True)
class StoredTable:
    """One stored table: its document and section node, title, sheet (for a spreadsheet), columns (name, kind)."""

    id: int
    document_id: int
    node_id: int
    ordinal: int  # 1-based among its document's tables
    title: str
    sheet: str
    first_col: int
    header_row: int
    columns: tuple[tuple[str, str], ...]
    n_rows: int

    @property
    def names(self) -> list[str]:
        return [name for name, _kind in self.columns]

    @property
    def kinds(self) -> list[str]:
        return [kind for _name, kind in self.columns]

    def address(self, row: int, col: int, sheet_row: int) -> str:
        """How a cell is cited: ``Salary bands!F6`` in a sheet, else ``table 2, row 3, Maximum``."""
        if self.sheet:
            return f"{self.sheet}!{column_letter(self.first_col + col)}{sheet_row}"
        name = self.columns[col][0] if col < len(self.columns) else column_letter(col)
        return f"table {self.ordinal}, row {row + 1}, {name}"


@dataclass
class TableData:
    """A table's cells as read from the store: ``text[r][c]`` as shown ("" when empty), ``number[r][c]`` (None when
    not a number), each row's kind, passage node and sheet row."""

    table: StoredTable
    text: list[list[str]] = field(default_factory=list)
    number: list[list[float | None]] = field(default_factory=list)
    row_kinds: list[str] = field(default_factory=list)
    row_nodes: list[int | None] = field(default_factory=list)
    sheet_rows: list[int] = field(default_factory=list)


def write_tables(conn: sqlite3.Connection, document_id: int,
                 found: Sequence[tuple[int, ParsedTable, Sequence[int]]]) -> None:
    """Store each (section node id, table, its passage node ids) of a document (inside the caller's transaction).
    A table without data rows is not stored."""
    ordinal = 0
    for node_id, table, passages in found:
        if not table.rows:
            continue
        ordinal += 1
        columns = json.dumps([[h, k] for h, k in zip(table.header, table.kinds, strict=False)], ensure_ascii=False)
        cur = conn.execute(
            "INSERT INTO doc_tables(document_id, node_id, ordinal, title, sheet, first_col, header_row, columns, "
            "n_rows) VALUES (?, ?, ?, (SELECT title FROM nodes WHERE id = ?), ?, ?, ?, ?, ?)",
            (document_id, node_id, ordinal, node_id, table.sheet, table.first_col, table.header_row, columns,
             len(table.rows)),
        )
        table_id = int(cur.lastrowid or 0)
        sheet_rows = table.sheet_rows or [0] * len(table.rows)
        row_passage = table.row_passage or [0] * len(table.rows)
        conn.executemany(
            "INSERT INTO table_rows(table_id, row, kind, node_id, sheet_row) VALUES (?, ?, ?, ?, ?)",
            ((table_id, r, table.row_kinds[r] if r < len(table.row_kinds) else "data",
              passages[row_passage[r]] if row_passage[r] < len(passages) else None, sheet_rows[r])
             for r in range(len(table.rows))),
        )
        conn.executemany(
            "INSERT INTO table_cells(table_id, col, row, text, number) VALUES (?, ?, ?, ?, ?)",
            ((table_id, c, r, text, nums[c] if c < len(nums) else None)
             for r, (cells, nums) in enumerate(zip(table.rows, table.numbers, strict=False))
             for c, text in enumerate(cells) if text),
        )


def delete_tables(conn: sqlite3.Connection, document_id: int) -> None:
    """A document's tables, their rows and cells (the foreign keys cascade)."""
    conn.execute("DELETE FROM doc_tables WHERE document_id = ?", (document_id,))


def _stored(row: Sequence[object]) -> StoredTable:
    cols = json.loads(str(row[8]) or "[]")
    return StoredTable(int(str(row[0])), int(str(row[1])), int(str(row[2])), int(str(row[3])), str(row[4]),
                       str(row[5]), int(str(row[6])), int(str(row[7])), tuple((str(n), str(k)) for n, k in cols),
                       int(str(row[9])))


_COLUMNS = "id, document_id, node_id, ordinal, title, sheet, first_col, header_row, columns, n_rows"


def tables_of_documents(conn: sqlite3.Connection, document_ids: Iterable[int]) -> list[StoredTable]:
    ids = sorted(set(document_ids))
    if not ids:
        return []
    out: list[StoredTable] = []
    for i in range(0, len(ids), 500):
        part = ids[i : i + 500]
        out += [_stored(r) for r in conn.execute(
            f"SELECT {_COLUMNS} FROM doc_tables WHERE document_id IN ({','.join('?' * len(part))}) "
            "ORDER BY document_id, ordinal", part)]
    return out


def tables_of_passages(conn: sqlite3.Connection, node_ids: Sequence[int]) -> list[StoredTable]:
    """The tables whose rows the passages ``node_ids`` hold, in the order of the passages given."""
    out: list[StoredTable] = []
    seen: set[int] = set()
    for nid in node_ids:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM doc_tables WHERE node_id = (SELECT parent_id FROM nodes WHERE id = ?)",
            (nid,)).fetchone()
        if row is not None and int(row[0]) not in seen:
            seen.add(int(row[0]))
            out.append(_stored(row))
    return out


def table_by_id(conn: sqlite3.Connection, table_id: int) -> StoredTable | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM doc_tables WHERE id = ?", (table_id,)).fetchone()
    return _stored(row) if row is not None else None


def read_table(conn: sqlite3.Connection, table: StoredTable) -> TableData:
    """All of a table's cells (for a table small enough to read whole)."""
    width, n = len(table.columns), table.n_rows
    data = TableData(table, [[""] * width for _ in range(n)], [[None] * width for _ in range(n)])
    for r, kind, node, sheet_row in conn.execute(
            "SELECT row, kind, node_id, sheet_row FROM table_rows WHERE table_id = ? ORDER BY row", (table.id,)):
        data.row_kinds.append(str(kind))
        data.row_nodes.append(int(node) if node is not None else None)
        data.sheet_rows.append(int(sheet_row))
        del r
    for c, r, text, number in conn.execute(
            "SELECT col, row, text, number FROM table_cells WHERE table_id = ?", (table.id,)):
        if r < n and c < width:
            data.text[r][c] = str(text)
            data.number[r][c] = float(number) if number is not None else None
    return data


def orphan_tables(conn: sqlite3.Connection) -> int:
    """Tables whose section node is gone (a tree rewritten without them): counted for ``doctor``."""
    return int(conn.execute(
        "SELECT count(*) FROM doc_tables t WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = t.node_id)"
    ).fetchone()[0])


def drop_orphan_tables(conn: sqlite3.Connection) -> int:
    """Delete the tables :func:`orphan_tables` counts; returns how many."""
    cur = conn.execute(
        "DELETE FROM doc_tables WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = doc_tables.node_id)")
    return int(cur.rowcount or 0)
