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
from dataclasses import dataclass

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


class TableData:
    """A table's cells as the answers read them, column by column: ``text(c)`` as shown ("" when empty),
    ``number(c)`` (None when not a number); each row's kind, passage node and sheet row. A table read ``whole``
    has every column loaded at once; otherwise each column is read (one range of the key) when first asked for,
    and :meth:`find_cells` looks cells up by their text in SQLite."""

    def __init__(self, conn: sqlite3.Connection, table: StoredTable, whole: bool = True) -> None:
        self.conn = conn
        self.table = table
        self.whole = whole
        self.n_rows = table.n_rows
        # rows that are not data (totals): few, read at once; a row's sheet number when it is cited
        self.totals = {int(r) for (r,) in conn.execute(
            "SELECT row FROM table_rows WHERE table_id = ? AND kind != 'data'", (table.id,))}
        self._sheet_rows: dict[int, int] = {}
        self._cols: dict[int, tuple[list[str], list[float | None]]] = {}
        if whole:
            width = len(table.columns)
            for c in range(width):
                self._cols[c] = ([""] * self.n_rows, [None] * self.n_rows)
            for c, r, text, number in conn.execute(
                    "SELECT col, row, text, number FROM table_cells WHERE table_id = ?", (table.id,)):
                if c < width and r < self.n_rows:
                    self._cols[c][0][r] = str(text)
                    self._cols[c][1][r] = float(number) if number is not None else None

    def _column(self, c: int) -> tuple[list[str], list[float | None]]:
        if c not in self._cols:
            texts: list[str] = [""] * self.n_rows
            numbers: list[float | None] = [None] * self.n_rows
            for r, text, number in self.conn.execute(
                    "SELECT row, text, number FROM table_cells WHERE table_id = ? AND col = ?", (self.table.id, c)):
                if r < self.n_rows:
                    texts[r] = str(text)
                    numbers[r] = float(number) if number is not None else None
            self._cols[c] = (texts, numbers)
        return self._cols[c]

    def is_data(self, r: int) -> bool:
        return r not in self.totals

    def sheet_row(self, r: int) -> int:
        """Row ``r``'s 1-based row in its sheet (0 outside a sheet)."""
        if r not in self._sheet_rows:
            row = self.conn.execute("SELECT sheet_row FROM table_rows WHERE table_id = ? AND row = ?",
                                    (self.table.id, r)).fetchone()
            self._sheet_rows[r] = int(row[0]) if row is not None else 0
        return self._sheet_rows[r]

    def text(self, c: int) -> list[str]:
        return self._column(c)[0]

    def number(self, c: int) -> list[float | None]:
        return self._column(c)[1]

    def row_texts(self, r: int) -> list[str]:
        """Row ``r``'s cells as shown, every column: from the columns already read, the others looked up one cell
        each (a big table's row is read without reading its columns)."""
        out = []
        for c in range(len(self.table.columns)):
            if c in self._cols:
                out.append(self._cols[c][0][r])
                continue
            row = self.conn.execute("SELECT text FROM table_cells WHERE table_id = ? AND col = ? AND row = ?",
                                    (self.table.id, c, r)).fetchone()
            out.append(str(row[0]) if row is not None else "")
        return out

    def find_cells(self, phrases: set[str], columns: Sequence[int]) -> list[tuple[int, int, str]]:
        """(column, row, text) of the cells of ``columns`` whose text is one of ``phrases`` (compared in lower
        case; SQLite's ``lower`` folds ASCII letters only): one range of the key per column."""
        out: list[tuple[int, int, str]] = []
        items = sorted(phrases)
        for c in columns:
            for i in range(0, len(items), 500):
                part = items[i : i + 500]
                out += [(c, int(r), str(t)) for r, t in self.conn.execute(
                    f"SELECT row, text FROM table_cells WHERE table_id = ? AND col = ? AND lower(text) IN "
                    f"({','.join('?' * len(part))})", (self.table.id, c, *part))]
        return out


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
              passages[row_passage[r]] if 0 <= row_passage[r] < len(passages) else None, sheet_rows[r])
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


def read_table(conn: sqlite3.Connection, table: StoredTable, whole: bool = True) -> TableData:
    """A table's cells: all at once (``whole``), else column by column as they are asked for."""
    return TableData(conn, table, whole)


GRID_ROWS = 1000  # a bigger table is shown around the rows an answer used


@dataclass(frozen=True)
class TableGrid:
    """A stored table as the window's preview shows it: its title, sheet, column names and the rows shown (all of
    a table of up to ``GRID_ROWS`` rows, else the first rows and those around the rows asked for), each with its
    label (its sheet row number, else its 1-based row) and its data row number."""

    table_id: int
    title: str
    sheet: str
    names: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    row_numbers: tuple[int, ...]  # each shown row's 0-based data row
    row_labels: tuple[str, ...]
    total_rows: int


def table_grid(conn: sqlite3.Connection, table_id: int, around: Sequence[int] = ()) -> TableGrid | None:
    """The grid of table ``table_id`` (None when it has left the library)."""
    table = table_by_id(conn, table_id)
    if table is None:
        return None
    data = TableData(conn, table, whole=table.n_rows <= GRID_ROWS)
    if table.n_rows <= GRID_ROWS:
        shown = list(range(table.n_rows))
    else:
        keep = set(range(20))
        for r in around:
            keep.update(range(max(0, r - 10), min(table.n_rows, r + 11)))
        shown = sorted(keep)
    columns = [data.text(c) for c in range(len(table.columns))]
    labels = [str(data.sheet_row(r)) if table.sheet else str(r + 1) for r in shown]
    return TableGrid(table.id, table.title, table.sheet, tuple(table.names),
                     tuple(tuple(col[r] for col in columns) for r in shown), tuple(shown), tuple(labels), table.n_rows)
