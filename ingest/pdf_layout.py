"""Page layout for the PDF parser: text lines with font size/weight, tables, running headers, heading styles.

Kept apart from :mod:`shelfwise.ingest.pdf` so the heuristics can be read (and tested) on their own.
"""

from __future__ import annotations

import itertools
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from shelfwise.ingest.normalize import fold_compat, garble_counts, is_garbled, is_garbled_line, strip_glyphs
from shelfwise.ingest.passages import join_lines
from shelfwise.ingest.pdf_tables import TEXT_FLAGS, TableItem, find_tables, grid_area

_PAGE_NO = re.compile(r"^(?:page\s*)?[\divxlc]+(?:\s*(?:of|/)\s*\d+)?$", re.IGNORECASE)
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
_MONO_NAME = re.compile(r"mono|courier|consol|typewriter|code|^cmtt|^sfti|lucidaconsole", re.IGNORECASE)
FURNITURE_BAND = 0.1  # top/bottom share of the page read for running lines; docs/eval/tree-quality.md


@dataclass(slots=True)
class Line:
    text: str
    size: float
    bold: bool
    x0: float
    y0: float
    x1: float
    y1: float
    mono: bool = False

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

@dataclass
class PageText:
    number: int
    width: float
    height: float
    blocks: list[Block] = field(default_factory=list)
    tables: list[TableItem] = field(default_factory=list)
    table_seconds: float = 0.0
    tables_skipped: int = 0  # 1 when the page looked tabular but the table time budget was spent
    table_calls: int = 0  # 1 when find_tables ran on this page
    glyphs_dropped: int = 0  # symbol-font / private-use characters left out of the text

    @property
    def has_text(self) -> bool:
        return any(ln.text.strip() for b in self.blocks for ln in b.lines)

    def in_margin(self, ln: Line) -> bool:
        """In the top or bottom band where running headers and footers live."""
        return ln.y1 < self.height * FURNITURE_BAND or ln.y0 > self.height * (1 - FURNITURE_BAND)

    def items(self, drop: Furniture | set[str]) -> list[Block | TableItem]:
        """Blocks (without running headers/footers and table text) and tables, in reading order."""
        if isinstance(drop, set):
            drop = Furniture(drop)
        blocks: list[Block] = []
        for block in self.blocks:
            lines = [
                ln
                for ln in block.lines
                if not (self.in_margin(ln) and drop.holds(ln))
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


def _clean(text: str, pt: PageText | None = None) -> str:
    """Strip a line; a bullet glyph without Unicode mapping (shown as U+FFFD, a control or private-use character)
    becomes "-"; other such glyphs are dropped (counted on ``pt`` for a warning); ligatures are folded."""
    text = text.strip()
    if text.startswith("\ufffd"):
        text = "-" + text[1:]
    text, dropped = strip_glyphs(text)
    if dropped and pt is not None:
        pt.glyphs_dropped += dropped
    return fold_compat(text.strip())


_font_kinds: dict[str, tuple[bool, bool]] = {}


def _font_kind(font: str) -> tuple[bool, bool]:
    """(bold, monospaced) from a font name, cached."""
    kind = _font_kinds.get(font)
    if kind is None:
        kind = _font_kinds[font] = (bool(_BOLD_NAME.search(font)), bool(_MONO_NAME.search(font)))
    return kind


def read_page(
    page: Any, number: int, *, textpage: Any = None, tables: bool = True, fonts: bool = True
) -> PageText:
    """One page's text lines (and tables). ``fonts=False`` reads plain blocks, faster than the
        font-aware ``dict`` output (docs/benchmarks.md, "PDF parsing"): enough when the outline gives the structure
        (line positions are then interpolated)."""
    rect = page.rect
    pt = PageText(number=number, width=float(rect.width), height=float(rect.height))
    if fonts:
        _read_dict(pt, page, textpage)
    else:
        _read_blocks(pt, page, textpage)
    if looks_tabular(pt):
        started = time.perf_counter()
        area = grid_area(page)
        if area is not None:
            if tables:
                pt.tables = find_tables(page, area)
                pt.table_calls = 1
            else:
                pt.tables_skipped = 1
        pt.table_seconds = time.perf_counter() - started
    return pt


def _read_blocks(pt: PageText, page: Any, textpage: Any) -> None:
    for x0, y0, x1, y1, text, _no, kind in page.get_text("blocks", flags=TEXT_FLAGS, textpage=textpage):
        if kind != 0:
            continue
        raw = [_clean(ln, pt) for ln in text.split("\n")]
        raw = [ln for ln in raw if ln and not _garbled_line(ln, pt)]
        if not raw:
            continue
        step = (y1 - y0) / len(raw)
        pt.blocks.append(
            Block(
                [Line(t, 0.0, False, x0, y0 + i * step, x1, y0 + (i + 1) * step) for i, t in enumerate(raw)]
            )
        )


def _garbled_line(text: str, pt: PageText) -> bool:
    """A line that is mostly mojibake (read without fonts: judged alone); counted on ``pt`` as dropped glyphs."""
    if is_garbled_line(text):
        pt.glyphs_dropped += len(text) - sum(c.isspace() for c in text)
        return True
    return False


def _garbled_fonts(blocks: list[dict[str, Any]]) -> set[str]:
    """The fonts whose text on this page is mostly mojibake (a wrong character map: :func:`is_garbled`)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for raw in blocks:
        for rl in raw.get("lines", ()):
            for span in rl["spans"]:
                c = counts[span["font"]]
                for i, v in enumerate(garble_counts(span["text"])):
                    c[i] += v
    return {font for font, (chars, odd, letters) in counts.items() if is_garbled(chars, odd, letters)}


def _read_dict(pt: PageText, page: Any, textpage: Any) -> None:
    data = page.get_text("dict", flags=TEXT_FLAGS, textpage=textpage)
    garbled = _garbled_fonts([b for b in data["blocks"] if b.get("type", 0) == 0])
    for raw in data["blocks"]:
        if raw.get("type", 0) != 0:
            continue
        lines: list[Line] = []
        for rl in raw["lines"]:
            parts: list[str] = []
            n = 0
            size_sum = 0.0
            bold_chars = mono_chars = 0
            for span in rl["spans"]:
                text = span["text"]
                if garbled and span["font"] in garbled:
                    pt.glyphs_dropped += len(text.strip())
                    continue
                parts.append(text)
                k = len(text.strip())
                if not k:
                    continue
                n += k
                size_sum += span["size"] * k
                bold, mono = _font_kind(span["font"])
                if span["flags"] & 16 or bold:
                    bold_chars += k
                if span["flags"] & 8 or mono:
                    mono_chars += k
            if not n:
                continue
            x0, y0, x1, y1 = rl["bbox"]
            lines.append(
                Line(
                    _clean("".join(parts), pt),
                    size_sum / n,
                    bold_chars >= 0.6 * n,
                    x0,
                    y0,
                    x1,
                    y1,
                    mono_chars >= 0.6 * n,
                )
            )
        if lines:
            pt.blocks.append(Block(lines))


def looks_tabular(pt: PageText) -> bool:
    """Cheap pre-check for ``find_tables``: at least 3 text rows with 2+ separate cells side by side."""
    rows: dict[int, list[Line]] = defaultdict(list)
    for block in pt.blocks:
        for ln in block.lines:
            rows[round((ln.y0 + ln.y1) / 4)].append(ln)  # 2-point bands of line centres
    multi = 0
    for lines in rows.values():
        if len(lines) < 2:
            continue
        lines.sort(key=lambda ln: ln.x0)
        cells = 1 + sum(1 for a, b in itertools.pairwise(lines) if b.x0 > a.x1 + 2)
        if cells >= 2:
            multi += 1
            if multi >= 3:
                return True
    return False


@dataclass
class Furniture:
    """Page furniture: texts (digits masked) repeated in the top/bottom margin of several pages, and the margin
    *slots* (position and size) where such running lines sit on many pages. A slot's other texts are furniture too:
    a running header that names the current chapter repeats on that chapter's pages only."""

    keys: set[str] = field(default_factory=set)
    slots: set[tuple[int, float]] = field(default_factory=set)
    titles: set[str] = field(default_factory=set)  # keys on SLOT_SHARE of the pages or more: a running title

    def holds(self, ln: Line) -> bool:
        return (
            running_key(ln.text) in self.keys
            or bool(_PAGE_NO.match(ln.text.strip()))
            or _slot(ln) in self.slots
        )

    def __contains__(self, key: object) -> bool:
        return key in self.keys

    def strip_echoes(self, lines: list[Line]) -> list[Line]:
        """``lines`` less the body lines that repeat a running title: a line, or a run of up to ``ECHO_MAX_LINES``
        consecutive lines, whose text is a running text of at least 4 letters found on ``SLOT_SHARE`` of the pages
        or more (a cover or title page setting the title its pages carry as a header: Debian's title page, the IBM
        redpaper's covers; a table's header row that some pages carry at their top is not one). Only passage text is
        filtered; headings are detected before (a chapter's heading that its footer repeats stays)."""
        if not self.titles or not lines:
            return lines
        out: list[Line] = []
        i = 0
        while i < len(lines):
            for n in range(min(ECHO_MAX_LINES, len(lines) - i), 0, -1):
                key = running_key(" ".join(ln.text for ln in lines[i:i + n]))
                if key in self.titles and sum(ch.isalpha() for ch in key) >= 4:
                    i += n
                    break
            else:
                out.append(lines[i])
                i += 1
        return out


def _slot(ln: Line) -> tuple[int, float]:
    return (round(ln.y0 / 4), ln.style)


ECHO_MAX_LINES = 3  # a running title set over this many lines on a cover is still its echo
RUNNING_MIN_PAGES = 3  # a margin text on this many pages is furniture; docs/eval/tree-quality.md
SLOT_SHARE = 0.3  # a margin position holding running lines on this share of pages is furniture on every page


def running_lines(pages: list[PageText]) -> Furniture:
    """Running headers, footers and page numbers (see :class:`Furniture`)."""
    if len(pages) < 3:
        return Furniture()
    counts: Counter[str] = Counter()
    for pt in pages:
        seen = {running_key(ln.text) for b in pt.blocks for ln in b.lines if pt.in_margin(ln)}
        counts.update(seen)
    keys = {key for key, n in counts.items() if n >= RUNNING_MIN_PAGES and sum(ch.isalnum() for ch in key) >= 1}
    slot_pages: Counter[tuple[int, float]] = Counter()
    for pt in pages:
        slot_pages.update({_slot(ln) for b in pt.blocks for ln in b.lines
                           if pt.in_margin(ln) and (running_key(ln.text) in keys or _PAGE_NO.match(ln.text.strip()))})
    slots = {slot for slot, n in slot_pages.items() if n >= max(RUNNING_MIN_PAGES, SLOT_SHARE * len(pages))}
    titles = {key for key in keys if counts[key] >= SLOT_SHARE * len(pages)}
    return Furniture(keys, slots, titles)


def _size_chars(pt: PageText, drop: Furniture | set[str] | None = None) -> Counter[float]:
    sizes: Counter[float] = Counter()
    blocks = pt.blocks if drop is None else [b for b in pt.items(drop) if isinstance(b, Block)]
    for b in blocks:
        for ln in b.lines:
            sizes[ln.style] += len(ln.text)
    return sizes


def title_on(pt: PageText, body: float | None = None) -> str:
    """The largest text of several words on a page when it stands out (>= 1.3x the body size), else ""."""
    sizes = _size_chars(pt)
    if not sizes:
        return ""
    body = body or sizes.most_common(1)[0][0]
    for size in sorted(sizes, reverse=True):
        if size < 1.3 * body:
            break
        text = " ".join(" ".join(ln.text for b in pt.blocks for ln in b.lines if ln.style == size).split())
        if len(text.split()) >= 2 and sum(ch.isalpha() for ch in text) >= 5:
            return text[:200]
    return ""


