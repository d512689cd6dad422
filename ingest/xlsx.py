"""Excel (.xlsx/.xlsm) with openpyxl (read-only, cached values): one section per sheet, table regions as passages.

A sheet is read row by row (bounded memory). Non-empty rows separated by blank rows form a *region*. Leading rows
of a region that hold a single cell while the region is wider are its caption (a sheet title such as "Stanley Cups"
above the header); the next row is the header. Regions become row blocks (~20 rows, within the passage bound),
each repeating the header, as Markdown with ``Location(sheet=, cells="A1:F20")``. A one-column region is read as
text lines. Sheets over ``limits.max_sheet_cells`` cells are truncated with a warning.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openpyxl.utils import get_column_letter

from shelfwise.ingest.model import Limits, Location, ParsedDocument
from shelfwise.ingest.outline import OutlineBuilder, sensible_title
from shelfwise.ingest.passages import estimate_tokens, table_chunks

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
        if isinstance(value, float):
            if value.is_integer() and abs(value) < 1e15:
                return str(int(value))
            return f"{value:.10g}"
        return str(value)
    text = str(value)
    if text.startswith("#") and text.rstrip("!?/0A").upper() in ("#N/", "#DIV", "#REF", "#VALUE", "#NAME"):
        return text  # error values stay visible
    return " ".join(text.split())


@dataclass
class Region:
    """A block of consecutive non-empty rows: (sheet row number, cells) pairs."""

    rows: list[tuple[int, list[str]]] = field(default_factory=list)

    def bounds(self) -> tuple[int, int]:
        """First and last used column (0-based)."""
        first = min(next(j for j, c in enumerate(cells) if c) for _r, cells in self.rows)
        last = max(max(j for j, c in enumerate(cells) if c) for _r, cells in self.rows)
        return first, last


def _cells(row: tuple[Any, ...]) -> list[str]:
    out: list[str] = []
    for cell in row[:MAX_COLUMNS]:
        value = getattr(cell, "value", None)
        if value is None:
            out.append("")
            continue
        out.append(format_value(value, getattr(cell, "number_format", "General")))
    while out and not out[-1]:
        out.pop()
    return out


def _a1(col0: int, row: int) -> str:
    return f"{get_column_letter(col0 + 1)}{row}"


def _emit_region(builder: OutlineBuilder, sheet: str, region: Region, max_tokens: int) -> None:
    first_col, last_col = region.bounds()
    rows = [(r, (cells + [""] * (last_col + 1 - len(cells)))[first_col : last_col + 1]) for r, cells in region.rows]
    width = last_col - first_col + 1

    def loc(r1: int, r2: int) -> Location:
        return Location(sheet=sheet, cells=f"{_a1(first_col, r1)}:{_a1(last_col, r2)}")

    if width == 1:
        for r, cells in rows:
            builder.paragraph(cells[0], Location(sheet=sheet, cells=_a1(first_col, r)))
        return
    caption: list[str] = []
    while len(rows) > 1 and sum(1 for c in rows[0][1] if c) == 1:
        caption.append(next(c for c in rows[0][1] if c))
        rows = rows[1:]
    if caption:
        builder.paragraph("\n".join(caption), loc(region.rows[0][0], region.rows[len(caption) - 1][0]))
    grid = [cells for _r, cells in rows]
    for first, last, md in table_chunks(grid, max_tokens, ROWS_PER_PASSAGE):
        if estimate_tokens(md) > 2 * max_tokens:  # a single huge row: read its cells as text
            builder.paragraph("\n".join(c for c in grid[last] if c), loc(rows[last][0], rows[last][0]))
            continue
        builder.block(md, loc(rows[first][0], rows[last][0]))


def _read_sheet(builder: OutlineBuilder, ws: Any, limits: Limits, warnings: list[str]) -> None:
    name = ws.title
    if hasattr(ws, "reset_dimensions"):
        ws.reset_dimensions()  # the stored dimension is often wrong; read what is there
    region = Region()
    cells_seen = 0
    for row_no, row in enumerate(ws.iter_rows(), 1):
        cells_seen += max(1, len(row))
        if cells_seen > limits.max_sheet_cells:
            warnings.append(
                f"sheet {name!r} truncated at row {row_no} (over {limits.max_sheet_cells:,} cells)"
            )
            break
        values = _cells(row)
        if any(values):
            region.rows.append((row_no, values))
        elif region.rows:
            _emit_region(builder, name, region, builder.max_tokens)
            region = Region()
    if region.rows:
        _emit_region(builder, name, region, builder.max_tokens)


def parse(path: Path, limits: Limits = Limits()) -> ParsedDocument:
    from shelfwise.ingest.sniff import check_office

    check_office(path, "xlsx", limits)
    import openpyxl

    wb = openpyxl.load_workbook(str(path), read_only=True, data_only=True, keep_links=False)
    warnings: list[str] = []
    builder = OutlineBuilder(limits.passage_tokens)
    try:
        sheets = wb.worksheets
        for ws in sheets:
            builder.heading(ws.title, 1, Location(sheet=ws.title))
            try:
                _read_sheet(builder, ws, limits, warnings)
            except Exception as exc:  # one broken sheet must not lose the workbook
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
    return ParsedDocument(title=sensible_title(core_title) or path.stem, format="xlsx", children=children,
                          pages=count, warnings=warnings)
