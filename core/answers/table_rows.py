"""A Markdown table row (as ingest stores tables: ``| a | b |`` rows under a header row) read as a sentence, for
the extracted answer and the model's sources: "Berlin, Germany: daily allowance EUR 55, hotel cap per night EUR
160", not "| Berlin | Germany | EUR 55 | EUR 160 |". Standard library only: the answer types use it."""

from __future__ import annotations

import re

_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def table_cells(row: str) -> list[str]:
    """The cells of a Markdown table row (``| a | b |``; an escaped ``\\|`` stays inside its cell)."""
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [" ".join(c.replace("\\|", "|").split()) for c in _CELL_SPLIT.split(inner)]


def _column_name(name: str) -> str:
    """A column's name as it reads inside a sentence: its first letter in lower case unless the first word is an
    acronym or a name in capitals ("Daily allowance" -> "daily allowance", "VAT rate" stays)."""
    first = name.split(" ", 1)[0]
    if len(first) > 1 and not first[1:].islower():
        return name
    return name[:1].lower() + name[1:]


def read_row(header: str, row: str) -> str:
    """A table row as a reader says it, from its header row: the row's label (its first cell, and the second
    when it is a short word or two without digits: "Berlin, Germany"), then each other filled cell after its
    column's name: "Berlin, Germany: daily allowance EUR 55, hotel cap per night EUR 160". Cells holding a comma
    are parted by semicolons instead. The row as written when the two do not line up (another cell count, no
    column names)."""
    return read_cells(table_cells(header), table_cells(row)) or row


def read_cells(names: list[str], cells: list[str]) -> str:
    """:func:`read_row` for a row already in cells with its column names ("" when the two do not line up)."""
    if len(names) != len(cells) or len(cells) < 2 or not any(names[1:]) or not cells[0]:
        return ""
    label = [cells[0]]
    rest = list(zip(names[1:], cells[1:], strict=True))
    second = cells[1]
    if len(cells) > 2 and second and len(second.split()) <= 2 and not any(ch.isdigit() for ch in second):
        label.append(second)
        rest = rest[1:]
    parts = [f"{_column_name(n)} {c}" if n else c for n, c in rest if c]
    if not parts:
        return ", ".join(label)
    sep = "; " if any("," in p or ";" in p for p in parts) else ", "
    return f"{', '.join(label)}: {sep.join(parts)}"
