"""Page layout for the PDF parser: text lines with font size/weight, tables, running headers, heading styles.

Kept apart from :mod:`shelfwise.ingest.pdf` so the heuristics can be read (and tested) on their own.
"""

from __future__ import annotations

import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import pymupdf

from shelfwise.ingest.passages import join_lines

# No images in the dict output (they would be decoded and copied for nothing).
TEXT_FLAGS = pymupdf.TEXT_PRESERVE_LIGATURES | pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_MEDIABOX_CLIP
MARGIN = 0.08  # top/bottom fraction of the page where running headers and footers live
_PAGE_NO = re.compile(r"^(?:page\s*)?[\divxlc]+(?:\s*(?:of|/)\s*\d+)?$", re.IGNORECASE)
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
MAX_HEADING_CHARS = 150
MAX_BOLD_HEADING_CHARS = 90


@dataclass(slots=True)
class Line:
    text: str
    size: float
    bold: bool
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def style(self) -> float:
        """Font size rounded to half a point (the key heading levels are assigned by)."""
        return round(self.size * 2) / 2


@dataclass(slots=True)
class Block:
    lines: list[Line]

    @property
    def y0(self) -> float:
        return min(ln.y0 for ln in self.lines)

    @property
    def x0(self) -> float:
        return min(ln.x0 for ln in self.lines)

    @property
    def x1(self) -> float:
        return max(ln.x1 for ln in self.lines)

    @property
    def text(self) -> str:
        return join_lines(ln.text for ln in self.lines)

    def split(self, levels: dict[float, int]) -> list[tuple[int, str]]:
        """Runs of lines by kind: 0 body, -1 cover title, n >= 1 heading level (checked per run)."""
        runs: list[tuple[int, list[Line]]] = []
        for ln in self.lines:
            kind = levels.get(ln.style, 0)
            if kind == BOLD_LEVEL_MARK:
                kind = levels.get(BOLD_KEY, 0) if ln.bold else 0
            if runs and runs[-1][0] == kind:
                runs[-1][1].append(ln)
            else:
                runs.append((kind, [ln]))
        out: list[tuple[int, str]] = []
        for kind, lines in runs:
            text = join_lines(ln.text for ln in lines)
            if kind != 0 and not _heading_text_ok(text, lines, whole_block=len(runs) == 1, bold_only=all(
                levels.get(ln.style, 0) == BOLD_LEVEL_MARK for ln in lines)):
                kind = 0
            if out and out[-1][0] == 0 and kind == 0:
                out[-1] = (0, join_lines([out[-1][1], text]))
            else:
                out.append((kind, text))
        return out


BOLD_KEY = -1.0  # levels[BOLD_KEY]: the level of bold lines at body size
BOLD_LEVEL_MARK = 99  # levels[size] == BOLD_LEVEL_MARK: bold lines of this size are headings


def _heading_text_ok(text: str, lines: list[Line], *, whole_block: bool, bold_only: bool) -> bool:
    letters = sum(ch.isalpha() for ch in text)
    if letters < 2 or _PAGE_NO.match(text.strip()):
        return False
    if text.rstrip().endswith((",", ";")):
        return False
    if bold_only:  # bold text at body size: a heading only if it stands alone and is short
        return whole_block and len(lines) <= 2 and len(text) <= MAX_BOLD_HEADING_CHARS and not text.endswith(".")
    return len(text) <= MAX_HEADING_CHARS and len(lines) <= 4


@dataclass(slots=True)
class TableItem:
    rows: list[list[str]]
    x0: float
    y0: float
    x1: float
    y1: float

    def covers(self, ln: Line) -> bool:
        cx, cy = (ln.x0 + ln.x1) / 2, (ln.y0 + ln.y1) / 2
        return self.x0 - 1 <= cx <= self.x1 + 1 and self.y0 - 1 <= cy <= self.y1 + 1


@dataclass
class PageText:
    number: int
    width: float
    height: float
    blocks: list[Block] = field(default_factory=list)
    tables: list[TableItem] = field(default_factory=list)
    table_seconds: float = 0.0

    @property
    def has_text(self) -> bool:
        return any(ln.text.strip() for b in self.blocks for ln in b.lines)

    def in_margin(self, ln: Line) -> bool:
        return ln.y1 < self.height * MARGIN or ln.y0 > self.height * (1 - MARGIN)

    def items(self, drop: set[str]) -> list[Block | TableItem]:
        """Blocks (without running headers/footers and table text) and tables, in reading order."""
        blocks: list[Block] = []
        for block in self.blocks:
            lines = [
                ln for ln in block.lines
                if not (self.in_margin(ln) and (running_key(ln.text) in drop or _PAGE_NO.match(ln.text.strip())))
                and not any(t.covers(ln) for t in self.tables)
            ]
            if lines:
                blocks.append(Block(lines))
        return reading_order(blocks, self.tables, self.width)


def reading_order(blocks: list[Block], tables: list[TableItem], width: float) -> list[Block | TableItem]:
    """Top to bottom; on two-column pages, the left column before the right one between full-width bands.

    A page counts as two-column when both halves hold several blocks that stay on their side of the middle.
    """
    items: list[Block | TableItem] = [*blocks, *tables]
    mid = width / 2
    left = [b for b in blocks if b.x1 <= mid + 4]
    right = [b for b in blocks if b.x0 >= mid - 4]
    two_col = len(left) >= 3 and len(right) >= 3 and sum(len(b.text) for b in right) > 200
    if not two_col:
        return sorted(items, key=lambda it: (round(it.y0 / 3), it.x0))
    out: list[Block | TableItem] = []
    band: list[Block | TableItem] = []

    def flush() -> None:
        band.sort(key=lambda it: (0 if it.x1 <= mid + 4 else 1, it.y0, it.x0))
        out.extend(band)
        band.clear()

    for it in sorted(items, key=lambda it: (it.y0, it.x0)):
        full = it.x0 < mid - 4 and it.x1 > mid + 4
        if full:
            flush()
            out.append(it)
        else:
            band.append(it)
    flush()
    return out


def running_key(text: str) -> str:
    return re.sub(r"\d+", "#", " ".join(text.lower().split()))


def _is_bold(span: dict[str, Any]) -> bool:
    return bool(span.get("flags", 0) & 16) or bool(_BOLD_NAME.search(span.get("font", "")))


def read_page(page: Any, number: int, *, textpage: Any = None, tables: bool = True) -> PageText:
    rect = page.rect
    pt = PageText(number=number, width=float(rect.width), height=float(rect.height))
    data = page.get_text("dict", flags=TEXT_FLAGS, textpage=textpage)
    for raw in data.get("blocks", []):
        if raw.get("type", 0) != 0:
            continue
        lines: list[Line] = []
        for rl in raw.get("lines", []):
            spans = rl.get("spans", [])
            text = "".join(s.get("text", "") for s in spans)
            if not text.strip():
                continue
            n = sum(len(s.get("text", "").strip()) for s in spans) or 1
            size = sum(s.get("size", 0.0) * len(s.get("text", "").strip()) for s in spans) / n
            bold_chars = sum(len(s.get("text", "").strip()) for s in spans if _is_bold(s))
            x0, y0, x1, y1 = rl.get("bbox", (0.0, 0.0, 0.0, 0.0))
            lines.append(Line(text.strip(), size, bold_chars >= 0.6 * n, x0, y0, x1, y1))
        if lines:
            pt.blocks.append(Block(lines))
    if tables and looks_tabular(pt):
        started = time.perf_counter()
        pt.tables = find_tables(page)
        pt.table_seconds = time.perf_counter() - started
    return pt


def looks_tabular(pt: PageText) -> bool:
    """Cheap pre-check for ``find_tables``: at least 3 text rows with 3+ separate cells side by side."""
    rows: dict[int, list[Line]] = defaultdict(list)
    for block in pt.blocks:
        for ln in block.lines:
            rows[round((ln.y0 + ln.y1) / 4)].append(ln)  # 2-point bands of line centres
    multi = 0
    for lines in rows.values():
        if len(lines) < 3:
            continue
        lines.sort(key=lambda ln: ln.x0)
        cells = 1 + sum(1 for a, b in zip(lines, lines[1:], strict=False) if b.x0 > a.x1 + 2)
        if cells >= 3:
            multi += 1
            if multi >= 3:
                return True
    return False


def find_tables(page: Any) -> list[TableItem]:
    out: list[TableItem] = []
    try:
        found = page.find_tables()
    except Exception:  # table detection is a bonus; never lose the page for it
        return out
    for tab in found.tables:
        try:
            raw = tab.extract()
        except Exception:
            continue
        rows = [[" ".join((c or "").split()) for c in row] for row in raw]
        rows = [r for r in rows if any(r)]
        if len(rows) < 2 or max(len(r) for r in rows) < 2:
            continue
        filled = sum(1 for r in rows for c in r if c)
        if filled < 4:
            continue
        x0, y0, x1, y1 = tab.bbox
        out.append(TableItem(rows, x0, y0, x1, y1))
    return out


def running_lines(pages: list[PageText]) -> set[str]:
    """Texts (digits masked) repeated in the top/bottom margin of many pages: running headers and footers."""
    if len(pages) < 3:
        return set()
    counts: Counter[str] = Counter()
    for pt in pages:
        seen = {running_key(ln.text) for b in pt.blocks for ln in b.lines if pt.in_margin(ln)}
        counts.update(seen)
    need = max(3, int(0.3 * len(pages)))
    return {key for key, n in counts.items() if n >= need}


def detect_headings(pages: list[PageText], drop: set[str]) -> tuple[dict[float, int], str]:
    """Heading levels by font size, from the body's dominant size. Returns (levels, cover title).

    ``levels`` maps a size (half points) to a level: 1.. for sizes clearly above the body size (larger first),
    -1 for a size used only on the first page above every heading size (the cover title), and
    :data:`BOLD_LEVEL_MARK` for the body size, whose *bold* stand-alone short lines are the lowest level
    (``levels[BOLD_KEY]``).
    """
    chars: Counter[float] = Counter()
    runs: dict[float, list[tuple[int, int]]] = defaultdict(list)  # size -> (page, run length in chars)
    bold_runs = 0
    for pt in pages:
        for block in pt.items(drop):
            if not isinstance(block, Block):
                continue
            prev: float | None = None
            for ln in block.lines:
                n = len(ln.text)
                chars[ln.style] += n
                if ln.style == prev:
                    page, length = runs[ln.style][-1]
                    runs[ln.style][-1] = (page, length + n)
                else:
                    runs[ln.style].append((pt.number, n))
                prev = ln.style
            if len(block.lines) <= 2 and all(ln.bold for ln in block.lines):
                bold_runs += 1
    if not chars:
        return {}, ""
    total = sum(chars.values())
    body = chars.most_common(1)[0][0]
    heading_sizes = []
    for size, n in chars.items():
        if size < body * 1.12 or size < body + 0.9:
            continue
        sizes_runs = runs[size]
        avg = sum(length for _p, length in sizes_runs) / len(sizes_runs)
        if avg <= MAX_HEADING_CHARS and n <= 0.2 * total:
            heading_sizes.append(size)
    heading_sizes.sort(reverse=True)
    levels: dict[float, int] = {}
    cover = ""
    if len(heading_sizes) >= 2 and all(p <= 1 for p, _n in runs[heading_sizes[0]]):
        levels[heading_sizes.pop(0)] = -1
        cover = _cover_text(pages, [k for k, v in levels.items() if v == -1][0])
    level = 0
    prev_size = None
    for size in heading_sizes:
        if prev_size is None or prev_size - size > 0.6:
            level += 1
        levels[size] = min(level, 6)
        prev_size = size
    if bold_runs:
        levels[body] = BOLD_LEVEL_MARK
        levels[BOLD_KEY] = min(level + 1, 7)
    return levels, cover


def _cover_text(pages: list[PageText], size: float) -> str:
    parts = [ln.text for b in pages[0].blocks for ln in b.lines if ln.style == size]
    return " ".join(" ".join(parts).split())[:200]
