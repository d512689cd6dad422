"""A value computed from a table, as ``shelfwise ask`` prints it before the answer: the value, the operation in
words, then the cells it used as a small aligned table (cell, value, the passage [n] of its row)."""

from __future__ import annotations

from shelfwise.app.cli.shown import shown
from shelfwise.core.answers.types import ShortAnswer

MAX_ROWS = 12  # cells listed; the rest are counted


def table_lines(short: ShortAnswer) -> list[str]:
    """The lines for a table's value (empty for a span's: the answer's own rendering shows it)."""
    if not short.operation or not short.cells:
        return []
    cells = short.cells[:MAX_ROWS]
    width = max(len("cell"), *(len(shown(c.address)) for c in cells))
    lines = [f"Answer: {shown(short.text)}", f"  {shown(short.explanation)}", f"  {'cell':<{width}}  value"]
    for c in cells:
        cite = f"  [{c.number}]" if c.number else ""
        lines.append(f"  {shown(c.address):<{width}}  {shown(c.value)}{cite}")
    if len(short.cells) > MAX_ROWS:
        lines.append(f"  ... and {len(short.cells) - MAX_ROWS} more cells (ask --json lists them all)")
    return lines
