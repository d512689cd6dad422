"""A PDF's printed table of contents, index and lists of figures: found, read as entries, kept out of the text.

A page is a *contents page* when most of its rows (lines side by side joined) are entries, a numbered title or a
title with a page number after dot leaders, and the page is titled "Contents" (or a translation) or follows a
contents page. A page whose rows mostly end in leaders and a page number (an index, a list of tables) is a
*listing page*. Neither is stored as passages; the contents' entries are what the heading detection
(:mod:`shelfwise.ingest.pdf_headings`) checks its candidates against.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shelfwise.ingest.pdf_layout import Furniture, Line, PageText

LABEL = (r"(?:(?:chapter|appendix|part|section|exhibit|kapitel|anhang|chapitre|annexe)\s+"
         r"[\dA-Z]{1,4}(?:[.-]\d{1,3})*[.:]?|"
         r"第\s*[\d一二三四五六七八九十]+\s*[章節部編]|\d{1,3}(?:\.\d{1,3})*(?:-\d{1,3})?\.?|[A-Z](?:\.\d{1,3})+\.?)")
_LABEL = re.compile(rf"^{LABEL}(?=\s|$|[^\x00-\x7f])", re.IGNORECASE)
_LEADER_END = re.compile(r"(?:(?:\s*\.){3,}|\s*…|\s*_{3,})\s*(\d{1,4}|[ivxlc]{1,6})$", re.IGNORECASE)
_SPACE_END = re.compile(r"(?:\s|(?<=[^\x00-\x7f]))(\d{1,4})$")
_CONTENTS = re.compile(
    r"^(?:table of contents|contents|目次|inhalt|inhaltsverzeichnis|sommaire|table des matières|índice|indice|"
    r"содержание|оглавление)$",
    re.IGNORECASE,
)
MIN_ROWS = 5  # a page with fewer rows is no listing
ENTRY_SHARE = 0.5  # share of a page's rows that are entries; chosen on the corpus, docs/eval/tree-quality.md


@dataclass
class TocEntry:
    number: str  # "1.2", "Chapter 4", "" when unnumbered
    title: str
    page: int | None  # the printed page number, when given


@dataclass
class Listings:
    contents: set[int]  # page numbers of contents pages
    listing: set[int]  # index, list of tables/figures
    entries: list[TocEntry]

    @property
    def pages(self) -> set[int]:
        return self.contents | self.listing


def rows(pt: PageText, keep: set[int] | None = None) -> list[list[Line]]:
    """The page's lines grouped into rows, left to right: lines whose vertical centres are within 3 points, or
    within a third of the taller line's height (a small "Chapter 1." label beside a large title)."""
    lines = sorted((ln for b in pt.blocks for ln in b.lines if keep is None or id(ln) in keep),
                   key=lambda ln: ((ln.y0 + ln.y1) / 2, ln.x0))
    out: list[list[Line]] = []
    for ln in lines:
        mid = (ln.y0 + ln.y1) / 2
        first = out[-1][0] if out else None
        if first is not None and abs(mid - (first.y0 + first.y1) / 2) <= max(3.0, (max(first.y1 - first.y0,
                                                                                       ln.y1 - ln.y0)) / 3):
            out[-1].append(ln)
        else:
            out.append([ln])
    for row in out:
        row.sort(key=lambda ln: ln.x0)
    return out


def row_text(row: list[Line]) -> str:
    return " ".join(" ".join(ln.text for ln in row).split())


def parse_entry(text: str) -> TocEntry | None:
    """A contents row as an entry: ``1.2 Title . . . 7``, ``Title … 7``, ``2.3.59.1 Title`` (no page)."""
    text = text.strip()
    page: int | None = None
    m = _LEADER_END.search(text)
    if m:
        page = int(m.group(1)) if m.group(1).isdigit() else None
        text = text[: m.start()].strip()
    label = _LABEL.match(text)
    tail = _SPACE_END.search(text) if not m else None
    if tail and (not label or tail.start() > label.end()):
        page, text = int(tail.group(1)), text[: tail.start()].strip()
    elif not m and not label:
        return None
    if not m and not label and len(text) > 120:
        return None
    number = label.group(0).strip() if label else ""
    title = text[label.end():].strip(" .:") if label else text
    if sum(ch.isalpha() for ch in title) < 2 and not number:
        return None
    return TocEntry(number.rstrip("."), title, page)


def find_listings(pages: list[PageText], furniture: Furniture) -> Listings:
    out = Listings(set(), set(), [])
    previous = False
    for pt in pages:
        keep = {id(ln) for b in pt.blocks for ln in b.lines if not (pt.in_margin(ln) and furniture.holds(ln))}
        page_rows = [row_text(r) for r in rows(pt, keep)]
        page_rows = [r for r in page_rows if r]
        if len(page_rows) < (1 if previous else MIN_ROWS):  # the last page of a contents may hold a few rows
            previous = False
            continue
        entries = [parse_entry(r) for r in page_rows]
        share = sum(1 for e in entries if e) / len(page_rows)
        dotted = sum(1 for r in page_rows if _LEADER_END.search(r)) / len(page_rows)
        titled = any(_CONTENTS.match(r) for r in page_rows[:6])
        if (titled or previous) and share >= ENTRY_SHARE:
            out.contents.add(pt.number)
            out.entries.extend(e for e in entries if e)
            previous = True
            continue
        previous = False
        if dotted >= ENTRY_SHARE:
            out.listing.add(pt.number)
    return out
