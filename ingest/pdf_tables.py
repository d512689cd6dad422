"""Tables in PDFs: a cheap check for vector ruling, then PyMuPDF's ``find_tables`` on that area only.

``find_tables`` is slow next to reading a page's text (docs/benchmarks.md, "PDF parsing"; PyMuPDF 2 adds a layout
model costing more, which is turned off here), so :mod:`shelfwise.ingest.pdf` calls it only on pages whose text
looks tabular and whose drawings could rule a table, within a time budget. Cell text comes from MuPDF's words,
which keep inter-word spaces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import pymupdf


class Box(Protocol):
    """Anything with a bounding box (a text line of :mod:`shelfwise.ingest.pdf_layout`)."""

    x0: float
    y0: float
    x1: float
    y1: float

# No images in the text output (they would be decoded and copied for nothing).
TEXT_FLAGS = pymupdf.TEXT_PRESERVE_LIGATURES | pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
MARGIN = 0.08  # top/bottom fraction of the page where running headers and footers live


@dataclass(slots=True)
class TableItem:
    rows: list[list[str]]
    x0: float
    y0: float
    x1: float
    y1: float

    def covers(self, ln: Box) -> bool:
        cx, cy = (ln.x0 + ln.x1) / 2, (ln.y0 + ln.y1) / 2
        return self.x0 - 1 <= cx <= self.x1 + 1 and self.y0 - 1 <= cy <= self.y1 + 1


def grid_area(page: Any) -> tuple[float, float, float, float] | None:
    """The area of vector ruling that could make a table (3+ horizontal and 2+ vertical edges, from lines or
    rectangle sides), or None. ``find_tables`` is then run on this area only, which is much cheaper."""
    horizontal = vertical = 0
    x0 = y0 = float("inf")
    x1 = y1 = float("-inf")
    try:
        drawings = page.get_cdrawings()
    except Exception:
        return None
    rect = page.rect
    top, bottom = rect.y0 + rect.height * MARGIN, rect.y1 - rect.height * MARGIN
    curves = 0
    for path in drawings:
        for item in path.get("items", ()):
            if item[0] == "c":
                curves += 1
                continue
            if item[0] == "l":
                (ax, ay), (bx, by) = item[1], item[2]
            elif item[0] == "re":
                ax, ay, bx, by = item[1]
            else:
                continue
            if max(ay, by) < top or min(ay, by) > bottom:  # header/footer rules
                continue
            ax, bx = max(min(ax, bx), rect.x0), min(max(ax, bx), rect.x1)
            ay, by = max(min(ay, by), rect.y0), min(max(ay, by), rect.y1)
            w, h = abs(bx - ax), abs(by - ay)
            if h < 2 and w > 5:
                horizontal += 1
            elif w < 2 and h > 5:
                vertical += 1
            elif w > 5 and h > 5 and item[0] == "re":
                horizontal += 2
                vertical += 2
            else:
                continue
            x0, y0 = min(x0, ax, bx), min(y0, ay, by)
            x1, y1 = max(x1, ax, bx), max(y1, ay, by)
    if curves > 100 and curves > horizontal + vertical:  # vector artwork (maps, charts), not a ruled table
        return None
    if horizontal >= 3 and vertical >= 2:
        return (x0 - 2, y0 - 2, x1 + 2, y1 + 2)
    return None


def find_tables(page: Any, area: tuple[float, float, float, float] | None = None) -> list[TableItem]:
    out: list[TableItem] = []
    clip = pymupdf.Rect(area) & page.rect if area is not None else None
    try:
        try:  # PyMuPDF 2's layout model costs seconds per page: not here
            found = page.find_tables(clip=clip, use_layout=False)
        except TypeError:  # PyMuPDF < 2 has no layout model (nor the argument)
            found = page.find_tables(clip=clip)
    except Exception:
        return out
    words: list[tuple[float, float, str]] | None = None
    for tab in found.tables:
        try:
            if words is None:
                words = [
                    ((w[0] + w[2]) / 2, (w[1] + w[3]) / 2, w[4])
                    for w in page.get_text("words", flags=TEXT_FLAGS)
                ]
            rows = _cell_texts(tab, words)
        except Exception:
            continue
        rows = [r for r in rows if any(r)]
        if len(rows) < 2 or max(len(r) for r in rows) < 2:
            continue
        filled = sum(1 for r in rows for c in r if c)
        if filled < 4:
            continue
        x0, y0, x1, y1 = tab.bbox
        out.append(TableItem(rows, x0, y0, x1, y1))
    return out


def _cell_texts(tab: Any, words: list[tuple[float, float, str]]) -> list[list[str]]:
    """Each cell's words (by their centre), in reading order. MuPDF's words keep the spaces that the table
    finder's own character joining loses on some PDFs ("Theeffectiveuser...")."""
    rows: list[list[str]] = []
    for row in tab.rows:
        cells: list[str] = []
        for bbox in row.cells:
            if bbox is None:  # covered by a merged cell: given once
                cells.append("")
                continue
            x0, y0, x1, y1 = bbox
            cells.append(" ".join(w for cx, cy, w in words if x0 <= cx <= x1 and y0 <= cy <= y1))
        rows.append(cells)
    return rows
