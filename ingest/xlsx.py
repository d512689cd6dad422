"""Excel (.xlsx/.xlsm) with openpyxl (read-only, cached values): one section per sheet, table regions as
passages.

A sheet is read row by row (bounded memory). Non-empty rows separated by blank rows form a *region*. Leading
rows of a region that hold a single cell while the region is wider are its caption (a sheet title such as
"Stanley Cups" above the header); the next row is the header. Regions become row blocks (~20 rows, within the
passage bound), each repeating the header, as Markdown with ``Location(sheet=, cells="A1:F20")``. A one-column
region is read as text lines. Sheets over ``limits.max_sheet_cells`` cells are truncated with a warning.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openpyxl.utils import get_column_letter

from shelfwise.ingest.model import DEFAULT_LIMITS, CellKind, Limits, Location, ParsedDocument, ParsedTable
from shelfwise.ingest.outline import OutlineBuilder, sensible_title
from shelfwise.ingest.passages import estimate_tokens, table_chunks
from shelfwise.ingest.tables import column_kinds, header_title, is_total, read_cell

ROWS_PER_PASSAGE = 20
MAX_COLUMNS = 200  # wider rows are cut (a stray value in column XFD must not make every row 16k cells wide)


def format_value(value: Any, number_format: str = "General") -> str:
    """A cell value as readable text: dates ISO, whole floats without ``.0``, percentages with ``%``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0, 0):
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="minutes" if value.second == 0 else "seconds")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, float | int):
        if "%" in (number_format or ""):
            decimals = len(number_format.split(".")[1].rstrip("%")) if "." in number_format else 0
            return f"{value * 100:.{min(decimals, 6)}f}%"
        shown = _as_formatted(value, number_format or "")
        if shown:
            return shown
        if isinstance(value, float):
            if value.is_integer() and abs(value) < 1e15:
                return str(int(value))
            return f"{value:.10g}"
        return str(value)
    text = str(value)
    if text.startswith("#") and text.rstrip("!?/0A").upper() in ("#N/", "#DIV", "#REF", "#VALUE", "#NAME"):
        return text  # error values stay visible
    return " ".join(text.split())


# a plain number format: an optional currency (a symbol, "[$EUR]", "[$€-x]" or a quoted word) before or after digits
# with optional thousands grouping and decimals ("#,##0", "#,##0.00", "€#,##0", "[$EUR] #,##0.00", "0.0")
_CURRENCY = r'(?:\[\$([^\]-]*)(?:-[^\]]*)?\]|"([^"]*)"|([€$£¥]))'
_PLAIN_FORMAT = re.compile(rf"^{_CURRENCY}?\s*([#0]*(,)?[#0]*0)(?:\.(0+))?\s*{_CURRENCY}?$")


def _as_formatted(value: float, number_format: str) -> str:
    """``value`` as the sheet shows it under a plain number format (:data:`_PLAIN_FORMAT`, its first section: the
    positive numbers'): "102,000" for ``#,##0``, "EUR 1,500.00" for ``[$EUR] #,##0.00``; "" for any other format
    (General, dates, fractions, scientific ...)."""
    section = re.sub(r"_.|\*.|\\", "", number_format.split(";")[0]).strip()  # padding, fill and escapes out
    m = _PLAIN_FORMAT.match(section)
    if m is None or not (m.group(5) or m.group(6) or any(m.group(i) for i in (1, 2, 3, 7, 8, 9))):
        return ""  # "0" or "#": nothing a plain number does not show
    decimals = len(m.group(6) or "")
    digits = f"{abs(value):{',' if m.group(5) else ''}.{decimals}f}"
    before = next((g for g in m.group(1, 2, 3) if g), "").strip()
    after = next((g for g in m.group(7, 8, 9) if g), "").strip()
    sign = "-" if value < 0 else ""
    if before:
        return f"{sign}{before}{' ' if before[-1:].isalpha() else ''}{digits}"
    return f"{sign}{digits}{' ' + after if after else ''}"


_NUMBER = re.compile(r"^-?(?:[€$£¥]|[A-Z]{3} )?[-+(]?[\d.,' ]*\d[\d.,' ]*\)?%?(?: ?[€$£¥]| [A-Za-z]{1,3})?$"
                     r"|^\d{4}-\d\d-\d\d(?: [\d:]+)?$")  # with a currency or short unit as number formats write


def _data_like(cells: list[str]) -> bool:
    """Mostly numbers or dates: a data row, not a header."""
    filled = [c for c in cells if c]
    return bool(filled) and sum(1 for c in filled if _NUMBER.match(c)) >= max(1, len(filled) / 2)


@dataclass
class Region:
    """A block of consecutive non-empty rows: (sheet row number, cells by absolute column) pairs."""

    rows: list[tuple[int, list[str]]] = field(default_factory=list)

    def caption_split(self) -> tuple[list[tuple[int, list[str]]], list[tuple[int, list[str]]]]:
        """Leading rows holding a single cell while the region is wider (titles above the header), and the
        rest."""
        wide = any(sum(1 for c in cells if c) > 1 for _r, cells in self.rows)
        i = 0
        while wide and i < len(self.rows) - 1 and sum(1 for c in self.rows[i][1] if c) == 1:
            i += 1
        return self.rows[:i], self.rows[i:]

    def header_only(self) -> bool:
        """A few text rows and no data: a (multi-row) header whose data follows after a blank row."""
        _caption, rest = self.caption_split()
        return 0 < len(rest) <= 3 and all(
            sum(1 for c in cells if c) > 1 and not _data_like(cells) for _r, cells in rest
        )


def _bounds(rows: list[tuple[int, list[str]]]) -> tuple[int, int]:
    first = min(next(j for j, c in enumerate(cells) if c) for _r, cells in rows)
    last = max(max(j for j, c in enumerate(cells) if c) for _r, cells in rows)
    return first, last


def _cells(row: tuple[Any, ...]) -> tuple[list[str], list[tuple[CellKind, float | None]]]:
    """The row's cells as shown, and each cell's kind and number from its own type (:func:`_typed`)."""
    out: list[str] = []
    raw: list[tuple[CellKind, float | None]] = []
    for cell in row[:MAX_COLUMNS]:
        value = getattr(cell, "value", None)
        if value is None:
            out.append("")
            raw.append(("text", None))
            continue
        fmt = getattr(cell, "number_format", "General")
        out.append(format_value(value, fmt))
        raw.append(_typed(value, fmt))
    while out and not out[-1]:
        out.pop()
    return out, raw[: len(out)]


def _a1(col0: int, row: int) -> str:
    return f"{get_column_letter(col0 + 1)}{row}"


class SheetReader:
    """Turns one sheet's rows into passages, region by region (see the module docstring)."""

    def __init__(self, builder: OutlineBuilder, sheet: str) -> None:
        self.builder = builder
        self.sheet = sheet
        self.pending: Region | None = None  # a header-only region waiting for its data
        self.raw: dict[int, list[tuple[CellKind, float | None]]] = {}  # sheet row -> typed cells (this region)

    def loc(self, c1: int, r1: int, c2: int, r2: int) -> Location:
        return Location(sheet=self.sheet, cells=f"{_a1(c1, r1)}:{_a1(c2, r2)}")

    def region(self, region: Region) -> None:
        caption, rest = region.caption_split()
        if self.pending is not None:
            pending, self.pending = self.pending, None
            if not caption and _data_like(rest[0][1]):
                self._emit(pending.rows + region.rows, adopted=len(pending.rows))
                return
            self._emit(pending.rows)
        if region.header_only():
            self.pending = region
            return
        self._emit(region.rows)

    def finish(self) -> None:
        if self.pending is not None:
            self._emit(self.pending.rows)
            self.pending = None

    def _emit(self, rows: list[tuple[int, list[str]]], adopted: int = 0) -> None:
        first_col, last_col = _bounds(rows)
        if first_col == last_col:
            for r, cells in rows:
                self.builder.paragraph(cells[first_col], Location(sheet=self.sheet, cells=_a1(first_col, r)))
            return
        grid = [
            (r, (cells + [""] * (last_col + 1 - len(cells)))[first_col : last_col + 1]) for r, cells in rows
        ]
        head = Region(grid[: adopted or len(grid)])
        caption, header_rows = head.caption_split()
        prefix = "\n".join(next(c for c in cells if c) for _r, cells in caption)  # goes with the first chunk
        title = " ".join(prefix.split())
        if estimate_tokens(prefix) > self.builder.max_tokens // 4:  # unless it is long: then text of its own
            self.builder.paragraph(prefix, self.loc(first_col, caption[0][0], last_col, caption[-1][0]))
            prefix = ""
        if adopted:  # a header-only region above its data
            hdr, data = header_rows, grid[adopted:]
        elif _merged_header(header_rows):  # a merged cell over a second header row
            hdr, data = header_rows[:2], header_rows[2:]
        elif _data_like(header_rows[0][1]):  # no header row: name the columns by their letters
            hdr, data = [], header_rows
        else:
            hdr, data = header_rows[:1], header_rows[1:]
        if hdr:  # a multi-row header: join each column's parts (a merged cell's name spans the columns after it)
            parts = [_fill_right(c) for _r, c in hdr[:-1]] + [hdr[-1][1]]
            header = [" ".join(dict.fromkeys(p for p in col if p)) for col in zip(*parts, strict=True)]
        else:
            header = [get_column_letter(first_col + 1 + j) for j in range(last_col - first_col + 1)]
        start_row = header_rows[0][0]
        table = self._table(header, data, first_col, last_col)
        table.header_row = hdr[-1][0] if hdr else 0
        node = self.builder.begin_table(table, title or header_title(header),
                                        self.loc(first_col, start_row, last_col, grid[-1][0]))
        spans: list[tuple[int, int]] = []
        rows_md = [header] + [cells for _r, cells in data]
        for first, last, md in table_chunks(rows_md, self.builder.max_tokens, ROWS_PER_PASSAGE):
            r1 = start_row if first == 0 else data[first - 1][0]
            r2 = data[last - 1][0] if last > 0 else start_row
            span = (max(0, first - 1), last)
            if estimate_tokens(md) > 1.5 * self.builder.max_tokens and last > 0:  # one huge row: read as text
                text = "\n".join(
                    f"{h}: {c}" if h else c for h, c in zip(header, data[last - 1][1], strict=True) if c
                )
                if prefix:
                    text, prefix = f"{prefix}\n{text}", ""
                self.builder.block(text, self.loc(first_col, r2, last_col, r2), alone=True)
                spans.append(span)
                continue
            if prefix:
                md, r1, prefix = f"{prefix}\n{md}", caption[0][0], ""
            self.builder.block(md, self.loc(first_col, r1, last_col, r2), alone=True)
            spans.append(span)
        self.builder.end_table(node, spans)

    def _table(self, header: list[str], data: list[tuple[int, list[str]]], first_col: int,
               last_col: int) -> ParsedTable:
        """The region's data rows typed from the cells' own values (:func:`_typed`), text cells read as text."""
        width = last_col - first_col + 1
        kinds: list[list[CellKind]] = []
        numbers: list[list[float | None]] = []
        for r, cells in data:
            raw = self.raw.get(r, [])
            row_kinds: list[CellKind] = []
            row_numbers: list[float | None] = []
            for j in range(width):
                col = first_col + j
                kind, number = raw[col] if col < len(raw) else ("text", None)
                if kind == "text" and cells[j]:
                    kind, number = read_cell(cells[j])
                row_kinds.append(kind)
                row_numbers.append(number)
            kinds.append(row_kinds)
            numbers.append(row_numbers)
        rows = [cells for _r, cells in data]
        return ParsedTable(
            header=header, rows=rows, numbers=numbers,
            kinds=column_kinds(kinds, [[bool(c) for c in row] for row in rows], width),
            row_kinds=["total" if is_total(row) else "data" for row in rows],
            sheet=self.sheet, first_col=first_col, sheet_rows=[r for r, _c in data],
        )


def _fill_right(cells: list[str]) -> list[str]:
    """A header row with each empty cell given the name on its left (a merged cell spans the columns after it)."""
    out, last = [], ""
    for c in cells:
        last = c or last
        out.append(last)
    return out


def _merged_header(rows: list[tuple[int, list[str]]]) -> bool:
    """Two header rows above the data, the first with gaps (a merged cell over several columns of the second):
    "Salary" over "Minimum | Maximum"."""
    if len(rows) < 3 or _data_like(rows[0][1]) or _data_like(rows[1][1]) or not _data_like(rows[2][1]):
        return False
    top, second = rows[0][1], rows[1][1]
    return any(not t and s for t, s in zip(top, second, strict=True)) and sum(1 for c in second if c) > 1


_CURRENCY_FORMAT = re.compile(r"[€$£¥]|\[\$|EUR|USD|GBP|CHF", re.IGNORECASE)


def _typed(value: Any, number_format: str) -> tuple[CellKind, float | None]:
    """A cell's kind and number from its own value and format (text cells: ("text", None), read from the text)."""
    if isinstance(value, bool) or value is None:
        return "text", None
    if isinstance(value, dt.datetime):
        day = value.date().toordinal()
        seconds = value.hour * 3600 + value.minute * 60 + value.second
        return "date", float(day) + seconds / 86400
    if isinstance(value, dt.date):
        return "date", float(value.toordinal())
    if isinstance(value, dt.time):
        return "time", float(value.hour * 3600 + value.minute * 60 + value.second)
    if isinstance(value, dt.timedelta):
        return "number", value.total_seconds()
    if isinstance(value, int | float):
        fmt = number_format or ""
        if "%" in fmt:
            return "percent", float(value) * 100
        if _CURRENCY_FORMAT.search(fmt):
            return "money", float(value)
        return "number", float(value)
    return "text", None


def _read_sheet(builder: OutlineBuilder, ws: Any, limits: Limits, warnings: list[str]) -> None:
    name = ws.title
    if hasattr(ws, "reset_dimensions"):
        ws.reset_dimensions()  # the stored dimension is often wrong; read what is there
    reader = SheetReader(builder, name)
    region = Region()
    cells_seen = 0
    wide = False
    for row_no, row in enumerate(ws.iter_rows(), 1):
        cells_seen += max(1, len(row))
        if cells_seen > limits.max_sheet_cells:
            warnings.append(
                f"sheet {name!r} truncated at row {row_no} (over {limits.max_sheet_cells:,} cells)"
            )
            break
        values, raw = _cells(row)
        if (
            len(row) > MAX_COLUMNS
            and not wide
            and any(getattr(c, "value", None) is not None for c in row[MAX_COLUMNS:])
        ):
            wide = True
            warnings.append(f"sheet {name!r}: only the first {MAX_COLUMNS} columns were read")
        if any(values):
            region.rows.append((row_no, values))
            reader.raw[row_no] = raw
        elif region.rows:
            reader.region(region)
            if reader.pending is None:
                reader.raw.clear()
            region = Region()
    if region.rows:
        reader.region(region)
    reader.finish()


def parse(path: Path, limits: Limits = DEFAULT_LIMITS) -> ParsedDocument:
    from shelfwise.ingest.sniff import check_office

    check_office(path, "xlsx", limits)
    import openpyxl

    wb = openpyxl.load_workbook(str(path), read_only=True, data_only=True, keep_links=False)
    warnings: list[str] = []
    builder = OutlineBuilder(limits.passage_tokens, limits.max_passages)
    try:
        sheets = wb.worksheets
        for ws in sheets:
            if builder.truncated:  # the passage cap: the rest is not read
                break
            builder.heading(ws.title, 1, Location(sheet=ws.title))
            try:
                _read_sheet(builder, ws, limits, warnings)
            except Exception as exc:
                warnings.append(f"sheet {ws.title!r} could not be read: {exc.__class__.__name__}: {exc}")
            builder.passage_break()
        if any(str(getattr(ws, "sheet_state", "visible")) != "visible" for ws in sheets):
            hidden = [ws.title for ws in sheets if getattr(ws, "sheet_state", "visible") != "visible"]
            warnings.append(f"hidden sheets included: {', '.join(hidden)}")
        core_title = getattr(wb.properties, "title", None)
        count = len(sheets)
    finally:
        wb.close()
    children = builder.finish()
    return ParsedDocument(
        title=sensible_title(core_title) or path.stem,
        format="xlsx",
        children=children,
        pages=count,
        warnings=warnings + builder.warnings,
    )
