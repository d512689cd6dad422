"""Tables found as tables: each cell's value read from its text (number, money, percent, date, time or text), each
column's kind, and total rows marked. Every parser that finds a table (``xlsx.py`` from the cells' own types,
``outline.py`` for DOCX, PPTX, PDF and Markdown tables from their text) builds its :class:`ParsedTable` here.

A number keeps its sign and drops thousands separators; money drops its currency sign or code; a percent is the
number shown ("5%" -> 5.0); a date is its day number (``date.toordinal()``), so ranges compare; a time is seconds
since midnight. A column's kind is the kind of most of its filled cells (``KIND_SHARE``), else text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from shelfwise.ingest.model import CellKind, ParsedTable, read_cell

KIND_SHARE = 0.6  # share of a column's filled cells that must agree for the column to take their kind

_TOTAL = re.compile(r"^(sub-?)?totals?\b|^(grand )?total\b|^sum\b|^gesamt|^summe|^insgesamt|^zwischensumme|^totaux?\b|"
                    r"^sous-total", re.IGNORECASE)


def column_kinds(kinds: Sequence[Sequence[CellKind]], filled: Sequence[Sequence[bool]], width: int) -> list[CellKind]:
    """Each column's kind: the kind most of its filled cells have (text when none has ``KIND_SHARE`` of them)."""
    out: list[CellKind] = []
    for j in range(width):
        counts = Counter(row[j] for row, full in zip(kinds, filled, strict=True) if j < len(row) and full[j])
        total = sum(counts.values())
        kind, n = counts.most_common(1)[0] if counts else ("text", 0)
        out.append(kind if total and n >= KIND_SHARE * total else "text")
    return out


def is_total(row: Sequence[str]) -> bool:
    """A total or subtotal row: its first filled cell says so ("Total", "Subtotal", "Gesamt", "Summe", "Total")."""
    first = next((c for c in row if c.strip()), "")
    return bool(_TOTAL.match(first.strip()))


def table_from_text(header: Sequence[str], rows: Sequence[Sequence[str]]) -> ParsedTable:
    """A table read from its cells' text (DOCX, PPTX, PDF, Markdown): rows padded or cut to the header's width."""
    width = len(header)
    data = [(list(r) + [""] * width)[:width] for r in rows]
    read = [[read_cell(c) for c in r] for r in data]
    kinds = column_kinds([[k for k, _n in r] for r in read], [[bool(c.strip()) for c in r] for r in data], width)
    return ParsedTable(
        header=[" ".join(h.split()) for h in header],
        rows=[[" ".join(c.split()) for c in r] for r in data],
        numbers=[[n for _k, n in r] for r in read],
        kinds=kinds,
        row_kinds=["total" if is_total(r) else "data" for r in data],
    )


def header_title(header: Sequence[str]) -> str:
    """A table's title from its column names when it has no caption: "Band, Level name, Minimum ..." (cut)."""
    names = [h for h in header if h.strip()]
    title = ", ".join(names[:4]) + (" ..." if len(names) > 4 else "")
    return title or "Table"
