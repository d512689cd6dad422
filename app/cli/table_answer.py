"""A value computed from a table, as ``shelfwise ask`` prints it before the answer: the value, the operation in
words, then the rows it used as a small aligned table, one line a row (its cells' addresses, their values, the
passage [n] of the row)."""

from __future__ import annotations

from itertools import groupby

from shelfwise.app.cli.shown import shown
from shelfwise.core.answers.types import CellRef, ShortAnswer

MAX_ROWS = 12  # rows listed; the rest are counted


def _others(first: str, address: str) -> str:
    """A further cell of the row ``first`` is in, named without what it shares with ``first``: ``D2`` beside
    ``Holidays 2026!C2``, ``Maximum`` beside ``table 2, row 3, Level``."""
    if "!" in first and address.startswith(first.split("!", 1)[0] + "!"):
        return address.split("!", 1)[1]
    head = first.rsplit(", ", 1)[0]
    return address[len(head) + 2:] if ", " in first and address.startswith(head + ", ") else address


def _rows(cells: list[CellRef]) -> list[tuple[str, str, int]]:
    """(the row's cell addresses, its values, its passage number) for each row the cells are in, in their order."""
    out = []
    for _, group in groupby(cells, key=lambda c: (c.table_id, c.row)):
        row = list(group)
        names = ", ".join([row[0].address, *(_others(row[0].address, c.address) for c in row[1:])])
        out.append((names, " | ".join(c.value for c in row), row[0].number))
    return out


def table_lines(short: ShortAnswer) -> list[str]:
    """The lines for a table's value (empty for a span's: the answer's own rendering shows it)."""
    if not short.operation or not short.cells:
        return []
    rows = _rows(short.cells)
    listed = rows[:MAX_ROWS]
    width = max(len("cells"), *(len(shown(names)) for names, _, _ in listed))
    lines = [f"Answer: {shown(short.text)}", f"  {shown(short.explanation)}", f"  {'cells':<{width}}  values"]
    for names, values, number in listed:
        cite = f"  [{number}]" if number else ""
        lines.append(f"  {shown(names):<{width}}  {shown(values)}{cite}")
    if len(rows) > MAX_ROWS:
        lines.append(f"  ... and {len(rows) - MAX_ROWS} more rows (ask --json lists every cell)")
    return lines
