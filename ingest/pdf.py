"""PDF with PyMuPDF: outline or detected headings -> nested sections; paragraphs and tables with their pages.

Pass 1 reads each page once (``get_text("dict")`` without images; bounded memory: only text lines are kept) and
finds tables on pages that look tabular (cheap check first, then ``find_tables`` within a time budget).
Pass 2 drops running headers/footers and builds the tree: from the outline (``get_toc``; a flat outline whose
titles are numbered like ``2.3.59.1`` is nested by its numbering) or, without one, from headings detected by font
size and weight (see :mod:`shelfwise.ingest.pdf_layout`).
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any

import pymupdf

from shelfwise.ingest.model import CorruptFile, Limits, Location, NeedsOCR, ParsedDocument, PasswordProtected
from shelfwise.ingest.outline import OutlineBuilder, sensible_title
from shelfwise.ingest.pdf_layout import (
    Block,
    PageText,
    TableItem,
    detect_headings,
    read_page,
    running_lines,
)

_NUMBERED = re.compile(r"^\s*(\d+(?:\.\d+)+)\.?\s")


def _page_ranges(pages: list[int], limit: int = 20) -> str:
    """``[1, 2, 3, 7]`` -> ``"1-3, 7"`` (at most ``limit`` ranges)."""
    ranges: list[str] = []
    start = prev = pages[0]
    for p in pages[1:] + [0]:
        if p == prev + 1:
            prev = p
            continue
        ranges.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = p
    more = f" (+{len(ranges) - limit} more)" if len(ranges) > limit else ""
    return ", ".join(ranges[:limit]) + more


def _open(path: Path) -> Any:
    try:
        doc = pymupdf.open(str(path), filetype="pdf")
    except pymupdf.FileDataError as exc:
        raise CorruptFile(f"corrupt or truncated file: {exc}") from exc
    except (RuntimeError, ValueError) as exc:
        raise CorruptFile(f"corrupt or truncated file: {exc}") from exc
    if doc.needs_pass:
        doc.close()
        raise PasswordProtected("password-protected")
    if doc.page_count == 0:
        doc.close()
        raise CorruptFile("corrupt or truncated file: no pages")
    return doc


def outline_entries(doc: Any, n_pages: int) -> list[tuple[int, str, int, float]]:
    """The outline as (level, title, page, y) in document order; entries without a usable target are dropped
    (their children are kept). Flat numbered outlines get levels from their numbering."""
    try:
        toc = doc.get_toc(simple=False)
    except Exception:  # a broken outline must not lose the text
        return []
    entries: list[tuple[int, str, int, float]] = []
    for item in toc:
        level, title, page = int(item[0]), " ".join(str(item[1]).split()), int(item[2])
        if not title or page < 1 or page > n_pages:
            continue
        dest = item[3] if len(item) > 3 and isinstance(item[3], dict) else {}
        to = dest.get("to")
        y = float(to.y) if to is not None and hasattr(to, "y") else 0.0
        entries.append((level, title, page, y))
    levels = {e[0] for e in entries}
    if len(entries) >= 5 and len(levels) == 1:
        numbered = [_NUMBERED.match(e[1] + " ") for e in entries]
        if sum(1 for m in numbered if m) >= 0.6 * len(entries):
            depth = [m.group(1).count(".") + 1 if m else None for m in numbered]
            base = min(d for d in depth if d is not None)
            fixed: list[tuple[int, str, int, float]] = []
            prev = 1
            for e, d in zip(entries, depth, strict=True):
                lvl = d - base + 1 if d is not None else prev
                fixed.append((lvl, e[1], e[2], e[3]))
                prev = lvl
            entries = fixed
    # the target point's y is in unrotated page space; out-of-page values are treated as "top of page"
    return sorted(entries, key=lambda e: (e[2], max(0.0, e[3])))


def _ocr_pages(doc: Any, limit: int, warnings: list[str]) -> list[PageText] | None:
    """OCR every page with a local tesseract (through PyMuPDF) when one is installed; None if not possible."""
    if shutil.which("tesseract") is None:
        return None
    pages: list[PageText] = []
    try:
        for i in range(limit):
            page = doc[i]
            tp = page.get_textpage_ocr(full=True)
            pages.append(read_page(page, i + 1, textpage=tp, tables=False))
    except Exception as exc:
        warnings.append(f"OCR failed: {exc.__class__.__name__}: {exc}")
        return None
    warnings.append("text recognised by OCR (tesseract); expect errors")
    return pages


def read_pages(doc: Any, limit: int, warnings: list[str]) -> list[PageText]:
    """Pass 1: text lines and tables of the first ``limit`` pages, one page at a time."""
    pages: list[PageText] = []
    table_budget = 0.0  # seconds find_tables may still spend: grows with the pages read
    table_spent = 0.0
    for i in range(limit):
        started = time.perf_counter()
        try:
            page = doc[i]
            table_budget += 0.004  # ~4 ms per page on average keeps throughput near plain text extraction
            allow = table_spent < table_budget + 0.25
            pt = read_page(page, i + 1, tables=allow)
            table_spent += pt.table_seconds
        except Exception as exc:  # one broken page must not lose the document
            warnings.append(f"page {i + 1} could not be read: {exc.__class__.__name__}: {exc}")
            pt = PageText(number=i + 1, width=1.0, height=1.0)
        pages.append(pt)
        del started
    return pages


def parse(path: Path, limits: Limits = Limits()) -> ParsedDocument:
    doc = _open(path)
    warnings: list[str] = []
    try:
        n_pages = doc.page_count
        limit = min(n_pages, limits.max_pages)
        if n_pages > limit:
            warnings.append(f"only the first {limit} of {n_pages} pages were read")
        pages = read_pages(doc, limit, warnings)
        if not any(p.has_text for p in pages):
            ocr = _ocr_pages(doc, limit, warnings)
            if ocr is None or not any(p.has_text for p in ocr):
                raise NeedsOCR("no text layer; OCR needed")
            pages = ocr
        entries = outline_entries(doc, limit)
        meta_title = (doc.metadata or {}).get("title", "")
    finally:
        doc.close()
    empty = [p.number for p in pages if not p.has_text]
    if empty:
        warnings.append(f"pages without text (scanned or images only): {_page_ranges(empty)}")
    drop = running_lines(pages)
    builder = OutlineBuilder(limits.passage_tokens)
    first_heading = ""
    if entries:
        first_heading = entries[0][1]
        _build_from_outline(builder, pages, entries, drop)
    else:
        first_heading = _build_from_layout(builder, pages, drop)
    children = builder.finish()
    title = sensible_title(meta_title) or first_heading or path.stem
    return ParsedDocument(title=title, format="pdf", children=children, pages=n_pages, warnings=warnings)


def _norm(text: str) -> str:
    return re.sub(r"[\W_]+", "", text).lower()


def _emit(builder: OutlineBuilder, item: Block | TableItem, page: int) -> None:
    loc = Location(page=page)
    if isinstance(item, TableItem):
        builder.table(item.rows, loc)
    else:
        builder.paragraph(item.text, loc)


def _build_from_outline(
    builder: OutlineBuilder, pages: list[PageText], entries: list[tuple[int, str, int, float]], drop: set[str]
) -> None:
    by_page: dict[int, list[tuple[int, str, int, float]]] = {}
    for e in entries:
        by_page.setdefault(e[2], []).append(e)
    for pt in pages:
        pending = by_page.get(pt.number, [])
        last_title = ""
        for item in pt.items(drop):
            while pending and pending[0][3] <= item.y0 + 2:
                level, title, page, _y = pending.pop(0)
                builder.heading(title, level, Location(page=page))
                last_title = _norm(title)
            if isinstance(item, Block) and last_title and _norm(item.text) and _norm(item.text) in last_title:
                last_title = ""  # the heading's own text on the page: already the section title
                continue
            last_title = ""
            _emit(builder, item, pt.number)
        for level, title, page, _y in pending:
            builder.heading(title, level, Location(page=page))


def _build_from_layout(builder: OutlineBuilder, pages: list[PageText], drop: set[str]) -> str:
    """Headings from font size/weight; returns the document title candidate (cover title or first heading)."""
    levels, cover = detect_headings(pages, drop)
    first = cover
    for pt in pages:
        for item in pt.items(drop):
            if isinstance(item, Block):
                for kind, text in item.split(levels):
                    if kind == 0:
                        builder.paragraph(text, Location(page=pt.number))
                    elif kind < 0:  # the cover title: the document title, kept as text too
                        builder.paragraph(text, Location(page=pt.number))
                    else:
                        first = first or text
                        builder.heading(text, kind, Location(page=pt.number))
            else:
                _emit(builder, item, pt.number)
    return first
