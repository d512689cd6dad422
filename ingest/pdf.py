"""PDF with PyMuPDF: outline or detected headings -> nested sections; paragraphs and tables with their pages.

Pass 1 reads each page once (``get_text("dict")`` without images; bounded memory: only text lines are kept)
and finds tables on pages that look tabular (cheap check first, then ``find_tables`` within a time budget).
Pass 2 drops running headers/footers and printed contents/index pages and builds the tree: from the outline
(``get_toc``; a flat outline whose titles are numbered like ``2.3.59.1`` is nested by its numbering) or, without
one, from headings detected by font size and weight (see :mod:`shelfwise.ingest.pdf_layout`).
"""

from __future__ import annotations

import math
import re
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pymupdf

from shelfwise.ingest.model import (
    DEFAULT_LIMITS,
    CorruptFile,
    Limits,
    Location,
    NeedsOCR,
    ParsedDocument,
    PasswordProtected,
)
from shelfwise.ingest.outline import OutlineBuilder, sensible_title
from shelfwise.ingest.pdf_headings import Heading, body_size, detect, merge_labels
from shelfwise.ingest.pdf_layout import (
    Block,
    Furniture,
    Line,
    PageText,
    _read_dict,
    read_page,
    running_lines,
    title_on,
)
from shelfwise.ingest.pdf_ocr import line_boxes, page_ranges, read_scans
from shelfwise.ingest.pdf_tables import TableItem
from shelfwise.ingest.pdf_toc import find_listings

# "2.3.59.1.1 Background", "2.3.59-4 Exhibit title" (an exhibit of 2.3.59 sits at the level of 2.3.59.1)
_NUMBERED = re.compile(r"^\s*(\d+(?:\.\d+)+(?:-\d+)?)\.?\s")


def _open(path: Path) -> Any:
    try:
        doc = pymupdf.open(str(path), filetype="pdf")
    except (pymupdf.FileDataError, RuntimeError, ValueError) as exc:
        raise CorruptFile("corrupt or truncated file: PyMuPDF cannot open it as a PDF") from exc
    if doc.needs_pass:
        doc.close()
        raise PasswordProtected("password-protected")
    if doc.page_count == 0:
        doc.close()
        raise CorruptFile("corrupt or truncated file: no pages")
    return doc


Entry = tuple[int, str, int, float | None]  # (level, title, 1-based page, y from the page top or None)
MAX_OUTLINE_ENTRIES = 20_000
#: The deepest outline read: a book's bookmarks go a few levels down; one nested past this (a hostile chain of
#: thousands) is left out whole, with a warning, and the pages are read as an outline-less PDF (building sections that
#: deep exhausted the recursion of the tree's later passes, and the file was refused).
MAX_OUTLINE_DEPTH = 64


def _walk_outline(doc: Any) -> list[tuple[int, str, int, float | None]]:
    """The outline tree in document order, read directly (``get_toc(simple=False)`` loads a page per
    entry)."""
    out: list[tuple[int, str, int, float | None]] = []
    stack: list[tuple[Any, int]] = [(doc.outline, 1)]
    while stack and len(out) < MAX_OUTLINE_ENTRIES:
        item, level = stack.pop()
        if item is None or not item.this.m_internal:  # a document without outline gives a null item
            continue
        nxt, down = item.next, item.down
        if nxt is not None:
            stack.append((nxt, level))
        if down is not None:
            stack.append((down, level + 1))
        page, y = -1, None
        if not item.is_external and item.uri:
            if item.page == -1:
                page, _x, y = doc.resolve_link(item.uri)
            else:
                page, y = item.page, item.y
        y = y if isinstance(y, float) and math.isfinite(y) and y > 0 else None
        out.append((level, item.title or "", page + 1 if page >= 0 else -1, y))
    return out


def outline_entries(doc: Any, n_pages: int) -> list[Entry]:
    """The outline as (level, title, page, y) in document order; entries without a target page in range are
        dropped (their children are kept). A flat outline whose titles are numbered (``2.3.59.1.1``) is
    nested by the numbering."""
    try:
        raw = _walk_outline(doc)
    except Exception:
        return []
    entries: list[Entry] = []
    for level, title, page, y in raw:
        title = " ".join(title.split())
        if title and 1 <= page <= n_pages:
            entries.append((level, title, page, y))
    levels = {e[0] for e in entries}
    if len(entries) >= 5 and len(levels) == 1:
        numbered = [_NUMBERED.match(e[1] + " ") for e in entries]
        if sum(1 for m in numbered if m) >= 0.5 * len(entries):
            depth = [m.group(1).count(".") + m.group(1).count("-") + 1 if m else None for m in numbered]
            base = min(d for d in depth if d is not None)
            fixed: list[Entry] = []
            prev = 1
            for e, d in zip(entries, depth, strict=True):
                lvl = d - base + 1 if d is not None else prev
                fixed.append((lvl, e[1], e[2], e[3]))
                prev = lvl
            entries = fixed
    return entries


TABLE_FREE_CALLS = 4  # find_tables calls always allowed per document (small documents are deterministic)
TABLE_BUDGET_SHARE = 0.35  # after those, its total time may reach this share of the text reading time


def read_pages(doc: Any, limit: int, warnings: list[str], *, fonts: bool = True) -> list[PageText]:
    """Pass 1: text lines and tables of the first ``limit`` pages, one page at a time.

    ``find_tables`` is slow (docs/benchmarks.md, "PDF parsing"), so it runs only on pages with both tabular text
    and vector ruling, and only while its total time stays within a budget that grows with the text reading time."""
    pages: list[PageText] = []
    text_seconds = table_seconds = 0.0
    skipped = calls = 0
    for i in range(limit):
        started = time.perf_counter()
        allow = calls < TABLE_FREE_CALLS or table_seconds < TABLE_BUDGET_SHARE * text_seconds
        try:
            pt = read_page(doc[i], i + 1, tables=allow, fonts=fonts)
        except Exception as exc:
            warnings.append(f"page {i + 1} could not be read: {exc.__class__.__name__}: {exc}")
            pt = PageText(number=i + 1, width=1.0, height=1.0)
        skipped += pt.tables_skipped
        calls += pt.table_calls
        table_seconds += pt.table_seconds
        text_seconds += time.perf_counter() - started - pt.table_seconds
        pages.append(pt)
    if skipped:
        warnings.append(f"table detection skipped on {skipped} pages (time budget); their text is kept")
    return pages


def parse(path: Path, limits: Limits = DEFAULT_LIMITS) -> ParsedDocument:
    doc = _open(path)
    warnings: list[str] = []
    try:
        n_pages = doc.page_count
        limit = min(n_pages, limits.max_pages)
        if n_pages > limit:
            warnings.append(f"only the first {limit} of {n_pages} pages were read")
        entries = outline_entries(doc, limit)
        deepest = max((e[0] for e in entries), default=0)
        if deepest > MAX_OUTLINE_DEPTH:
            warnings.append(f"the outline (bookmarks) is {deepest} levels deep, more than {MAX_OUTLINE_DEPTH}: "
                            "left out; headings are read from the pages")
            entries = []
        pages = read_pages(doc, limit, warnings, fonts=not entries)
        ocr_pages = read_scans(doc, pages, limits, warnings)
        if not any(p.has_text for p in pages):
            why = next((w for w in warnings if w.startswith("no text layer")), "no text layer; the pages are blank")
            raise NeedsOCR(why)
        meta_title = (doc.metadata or {}).get("title", "") or ""
        cover = _first_page_title(doc) if entries and not sensible_title(meta_title) else ""
    finally:
        doc.close()
    glyphs = sum(p.glyphs_dropped for p in pages)
    if glyphs:
        warnings.append(f"{glyphs} characters of symbol or private-use glyphs (no text meaning) were left out")
    empty = [p.number for p in pages if not p.has_text]
    if empty:
        warnings.append(f"pages without text (scanned or images only): {page_ranges(empty)}")
    drop = running_lines(pages)
    builder = OutlineBuilder(limits.passage_tokens, limits.max_passages)
    first_heading = ""
    if entries:
        first_heading = cover or next((e[1] for e in entries if e[0] == min(x[0] for x in entries)), "")
        listings = find_listings(pages, drop)  # the bookmarks give the tree; the printed contents are not text
        if listings.pages:
            warnings.append(f"printed contents/index pages not stored as text: {page_ranges(sorted(listings.pages))}")
        _build_from_outline(builder, pages, entries, drop, ocr_pages, listings.pages)
    else:
        first_heading = _build_from_layout(builder, pages, drop, ocr_pages, warnings)
    children = builder.finish()
    title = sensible_title(meta_title) or first_heading or path.stem
    return ParsedDocument(title=title, format="pdf", children=children, pages=n_pages,
                          warnings=warnings + builder.warnings, ocr_pages=len(ocr_pages))


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).lower()


def _loc(item: Block | TableItem, page: int, ocr_pages: set[int]) -> Location:
    """The item's page; for OCR'd text also its line boxes (the page has no text layer to find it in)."""
    if page in ocr_pages and isinstance(item, Block):
        return Location(page=page, boxes=line_boxes(item, page))
    return Location(page=page)


def _emit(
    builder: OutlineBuilder, item: Block | TableItem, page: int, ocr_pages: set[int], drop: Furniture | None = None
) -> None:
    if isinstance(item, TableItem):
        builder.table(item.rows, _loc(item, page, ocr_pages))
        return
    if drop is not None:  # a running header's words set again on a cover or title page
        lines = drop.strip_echoes(item.lines)
        if not lines:
            return
        item = Block(lines) if len(lines) != len(item.lines) else item
    builder.paragraph(item.text, _loc(item, page, ocr_pages))


def _entry_y(pt: PageText, items: list[Block | TableItem], title: str, y: float | None, vague: bool = False) -> float:
    """Where a heading starts on its page: the outline target if it has one, else the block that starts with
    the title's text, else the top of the page. A ``vague`` target (one that other entries of the same page share:
    some PDF writers point every bookmark at its page's top) gives way to the title's text when that is found on
    the page. (A lone entry's page-top target is kept: a chapter's "Chapter 2" label above its title then stays
    with the chapter.)"""
    if y is not None and 0 <= y <= pt.height and not vague:
        return y - 2  # targets point at (or just above) the heading line
    found = _title_y(items, title)
    if found is not None:
        return found
    return y - 2 if y is not None and 0 <= y <= pt.height else -1.0


def _title_y(items: list[Block | TableItem], title: str) -> float | None:
    """The top of the first block that starts with ``title`` (or with its number, for a numbered title)."""
    number = _NUMBERED.match(title + " ")
    key = _norm(title)[:24]
    for item in items:
        if not isinstance(item, Block):
            continue
        if number:  # "2.3.59.1" on a line of its own or starting the heading line
            first = item.lines[0].text
            if first == number.group(1) or first.startswith(number.group(1) + " "):
                return item.y0
        elif key:
            text = _norm(" ".join(ln.text for ln in item.lines[:3]))
            if text.startswith(key) or (len(text) >= 6 and key.startswith(text)):
                return item.y0
    return None


def _is_heading_echo(text: str, title: str) -> bool:
    """Is this block just the heading's own text on the page (perhaps with a date or number added)?"""
    if len(text) > len(title) + 30:
        return False
    words = set(re.findall(r"\w+", title.lower()))
    return bool(words) and words <= set(re.findall(r"\w+", text.lower()))


def _build_from_outline(
    builder: OutlineBuilder, pages: list[PageText], entries: list[Entry], drop: Furniture, ocr_pages: set[int],
    skip: set[int] | frozenset[int] = frozenset(),
) -> None:
    by_page: dict[int, list[Entry]] = {}
    for e in entries:
        by_page.setdefault(e[2], []).append(e)
    for pt in pages:
        items = pt.items(drop)
        here = by_page.get(pt.number, [])
        targets = [round(e[3]) for e in here if e[3] is not None]
        placed = [(_entry_y(pt, items, e[1], e[3], vague=e[3] is not None and targets.count(round(e[3])) > 1), e)
                  for e in here]
        # keep outline order, but never let a heading come before one placed above it on the page
        pending: list[tuple[float, Entry]] = []
        floor = -1.0
        for y, e in placed:
            floor = max(floor, y)
            pending.append((floor, e))
        last_title = ""
        for item in items:
            while pending and pending[0][0] <= item.y0 + 2:
                _y, (level, title, page, _p) = pending.pop(0)
                builder.heading(title, level, Location(page=page))
                last_title = title
            if isinstance(item, Block) and last_title and _is_heading_echo(item.text, last_title):
                last_title = ""  # the heading's own line on the page: already the section title
                continue
            last_title = ""
            if pt.number not in skip:  # a printed contents or index page: its headings only
                _emit(builder, item, pt.number, ocr_pages, drop)
        for _y, (level, title, page, _p) in pending:
            builder.heading(title, level, Location(page=page))


def _first_page_title(doc: Any) -> str:
    page = doc[0]
    pt = PageText(number=1, width=float(page.rect.width), height=float(page.rect.height))
    try:
        _read_dict(pt, page, None)
    except Exception:
        return ""
    return title_on(pt)


def _build_from_layout(
    builder: OutlineBuilder, pages: list[PageText], drop: Furniture, ocr_pages: set[int], warnings: list[str]
) -> str:
    """Headings from typography and numbering (:mod:`shelfwise.ingest.pdf_headings`); printed contents and index
    pages are not stored. Returns the document title candidate (the cover's title or the first heading)."""
    for pt in pages:
        merge_labels(pt)
    listings = find_listings(pages, drop)
    if listings.pages:
        warnings.append(f"printed contents/index pages not stored as text: {page_ranges(sorted(listings.pages))}")
    heads = detect(pages, drop, listings)
    first = title_on(pages[0], body_size(pages, drop, listings.pages) or None) if pages else ""
    by_page: dict[int, list[Heading]] = defaultdict(list)
    for h in heads:
        by_page[h.page].append(h)
    for pt in pages:
        starts: dict[int, list[Heading]] = {}
        waiting: list[Heading] = []  # headings taken from the printed contents (no line): before the next one
        for h in by_page.get(pt.number, []):
            waiting.append(h)
            if h.lines:
                starts[id(h.lines[0])], waiting = waiting, []
        inside = {id(ln) for h in by_page.get(pt.number, []) for ln in h.lines}
        for item in pt.items(drop):
            if isinstance(item, TableItem):
                if pt.number not in listings.pages:
                    _emit(builder, item, pt.number, ocr_pages)
                continue
            run: list[Line] = []
            for ln in item.lines:
                heads_here = starts.get(id(ln))
                if heads_here:
                    _emit_lines(builder, run, pt.number, ocr_pages, listings.pages, drop)
                    run = []
                    for head in heads_here:
                        if head.repeat:
                            continue
                        first = first or head.title
                        builder.heading(head.title, head.level, Location(page=pt.number))
                elif id(ln) not in inside:
                    run.append(ln)
            _emit_lines(builder, run, pt.number, ocr_pages, listings.pages, drop)
    return first


def _emit_lines(
    builder: OutlineBuilder, lines: list[Line], page: int, ocr_pages: set[int], skip: set[int], drop: Furniture
) -> None:
    if lines and page not in skip:
        _emit(builder, Block(lines), page, ocr_pages, drop)
