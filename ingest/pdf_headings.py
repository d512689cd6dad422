"""Headings of a PDF without bookmarks: typography and numbering together.

A candidate is a run of rows (lines side by side) of one style that stands out from the body text: larger than the
body size, or bold and standing alone in its block. A section number before it (``2.3``, ``Chapter 4``,
``Appendix A``, ``第 1 章``), on its row, in a block of its own beside it, or on the rows just above it (with a
revision date), belongs to the heading. Rejected: monospaced text, figure and table labels, page numbers, text
ending like a sentence clause, and everything on a cover page.

Levels: a numbered heading's level is its numbering depth (relative to the shallowest numbering of the
document); an unnumbered one takes the level of the numbered headings of its style, or of the nearest style in
size; without any numbering, sizes are ranked (larger first) and bold body-size headings come last. Where the
document prints a table of contents (:mod:`shelfwise.ingest.pdf_toc`), an unnumbered candidate of a style the
contents' headings use must be listed there too.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from shelfwise.ingest.pdf_layout import Block, Furniture, Line, PageText
from shelfwise.ingest.pdf_toc import LABEL, Listings, parse_entry, row_text, rows

_LABEL_ONLY = re.compile(rf"^{LABEL}$", re.IGNORECASE)
_LABEL_START = re.compile(rf"^({LABEL})(?:\s+|(?=[^\x00-\x7f]))(?=\S)", re.IGNORECASE)
_DATE = re.compile(r"^\(?\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}\)?$")
_DATE_IN = re.compile(r"\s*\(\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}\)\s*")
_FIGURE = re.compile(r"^(?:figure|fig\.|table|tab\.|listing|chart|diagram|图|図|表)\s*[\dA-Z]+(?:[-.:]\d+)*\b",
                     re.IGNORECASE)
_FRAGMENT_END = re.compile(r"\s(?:and|or|of|the|to|for|in|with|a|an)$")  # lower case: "Appendix A" is a label
_DATE_ONLY = re.compile(r"^(?:(?:january|february|march|april|may|june|july|august|september|october|november|"
                        r"december)\s+)?(?:\d{1,2},?\s+)?\d{4}$", re.IGNORECASE)
_CONTINUED = re.compile(r"\((?:cont\.?|continued|suite|fortsetzung|forts\.)[^)]*\)|\bcontinued$", re.IGNORECASE)
_PAGE_NO = re.compile(r"^(?:page\s*)?[\divxlc]+(?:\s*(?:of|/)\s*\d+)?$", re.IGNORECASE)
MAX_HEADING_CHARS = 150
MAX_BOLD_HEADING_CHARS = 90
MAX_HEADING_ROWS = 4
COVER_BODY_CHARS = 300  # a first page with less body text is a cover; chosen on the corpus, docs/eval/tree-quality.md


@dataclass
class Heading:
    level: int
    title: str
    page: int
    y: float
    lines: list[Line] = field(default_factory=list)  # its lines on the page: left out of the passages
    number: str = ""
    style: tuple[float, bool] = (0.0, False)
    listing: bool = False  # the title of an index page that is a numbered part ("Appendix D Function index")
    repeat: bool = False  # "(Cont. 1)", "(continued)": the section goes on; the line is left out, nothing opens


def title_key(title: str) -> str:
    """A title folded for comparison: no leading number, case, punctuation or spacing."""
    m = _LABEL_START.match(title.strip())
    text = title.strip()[m.end():] if m else title
    return re.sub(r"[\W_]+", "", text).lower()


_TOP_WORD = re.compile(r"(chapter|appendix|part|kapitel|anhang|chapitre|annexe)\b|第", re.IGNORECASE)


def number_depth(number: str) -> int:
    """1 for a chapter, appendix or part; else the count of the numbering's parts (``2.3.59-4``: 4)."""
    if _TOP_WORD.match(number):
        return 1
    n = re.sub(r"^[^\W\d]{2,}\s+", "", number)  # "Exhibit 2.3.59-4", "Section 3.2"
    return n.count(".") + n.count("-") + 1


def merge_labels(pt: PageText) -> None:
    """A section number set in a block of its own beside its title (``1.1`` | ``コンソールの基礎``) joins the
    title's first line."""
    singles = [b for b in pt.blocks if len(b.lines) == 1 and _LABEL_ONLY.match(b.lines[0].text.strip())]
    for label_block in singles:
        ln = label_block.lines[0]
        mid = (ln.y0 + ln.y1) / 2
        for block in pt.blocks:
            first = block.lines[0]
            if block is label_block or abs((first.y0 + first.y1) / 2 - mid) > 3:
                continue
            if not (0 <= first.x0 - ln.x1 <= 3 * max(ln.size, 1.0)):
                continue
            block.lines[0] = Line(f"{ln.text.strip()} {first.text}", max(ln.size, first.size),
                                  first.bold, ln.x0, min(ln.y0, first.y0), first.x1, max(ln.y1, first.y1),
                                  first.mono)
            pt.blocks.remove(label_block)
            break


def body_size(pages: list[PageText], furniture: Furniture, skip: set[int]) -> float:
    chars: Counter[float] = Counter()
    for pt in pages:
        if pt.number in skip:
            continue
        for item in pt.items(furniture):
            if isinstance(item, Block):
                for ln in item.lines:
                    if not ln.mono:
                        chars[ln.style] += len(ln.text)
    return chars.most_common(1)[0][0] if chars else 0.0


def _row_style(row: list[Line]) -> tuple[float, bool, bool]:
    n = sum(len(ln.text) for ln in row) or 1
    size = max(row, key=lambda ln: len(ln.text)).style
    bold = sum(len(ln.text) for ln in row if ln.bold) >= 0.6 * n
    mono = sum(len(ln.text) for ln in row if ln.mono) >= 0.6 * n
    return size, bold, mono


def _candidates(pt: PageText, block: Block, body: float) -> list[Heading]:
    keep = {id(ln) for ln in block.lines}
    block_rows = rows(pt, keep)
    styles = [_row_style(r) for r in block_rows]
    texts = [row_text(r) for r in block_rows]

    def styled(i: int) -> tuple[float, bool] | None:
        size, bold, mono = styles[i]
        text = texts[i]
        if mono or sum(ch.isalpha() for ch in text) < 2 or _PAGE_NO.match(text):
            return None
        big = size >= body * 1.12 and size >= body + 0.9
        return (size, bold) if big or bold else None

    out: list[Heading] = []
    i = 0
    while i < len(block_rows):
        key = styled(i)
        if key is None:
            i += 1
            continue
        j = i + 1
        while j < len(block_rows) and styled(j) == key and j - i < MAX_HEADING_ROWS:
            j += 1
        start = i
        number = ""
        # a number (and a revision date) on the rows just above: "2.3.59.1" / "(12-12-2022)" / title
        k = i - 1
        while k >= 0 and _DATE.match(texts[k]):
            k -= 1
        if k >= 0 and _LABEL_ONLY.match(texts[k]) and i - k <= 2:
            number, start = texts[k].rstrip("."), k
        title = _DATE_IN.sub(" ", " ".join(texts[i:j])).strip()
        m = _LABEL_START.match(title)
        if _LABEL_ONLY.match(title) and not number:
            number = title.rstrip(".")
        elif m and not number:
            number = m.group(1).rstrip(".")
        elif number:
            title = f"{number} {title}"
        whole = start == 0 and j == len(block_rows)
        continues = j < len(block_rows) and texts[j][:1].islower()  # the next row goes on with the sentence
        if _accept(title, key, body, whole, j - i, continues):
            lines = [ln for r in block_rows[start:j] for ln in r]
            out.append(Heading(0, title, pt.number, min(ln.y0 for ln in lines), lines, number, key,
                               repeat=bool(_CONTINUED.search(title))))
        i = j
    return out


def _accept(title: str, key: tuple[float, bool], body: float, whole: bool, n_rows: int,
            continues: bool = False) -> bool:
    size, _bold = key
    if len(title) > MAX_HEADING_CHARS or title.rstrip().endswith((",", ";")) or _FIGURE.match(title):
        return False
    big = size >= body * 1.12 and size >= body + 0.9
    if (title[:1].islower() and title.isascii()) or _DATE_ONLY.match(title):
        return False  # a line broken out of a sentence or a table cell, or a date
    if _FRAGMENT_END.search(title) and (continues or not big):
        return False  # "... and" and the sentence goes on; a larger heading may end so ("Who to talk to")
    if big:
        return True
    # bold at body size: a heading only if it stands alone and is short
    numbered = bool(_LABEL_START.match(title))
    return whole and len(title) <= MAX_BOLD_HEADING_CHARS and (numbered or not title.endswith(".")) and n_rows <= 4


def _levels(heads: list[Heading], body: float) -> None:
    numbered = [h for h in heads if h.number]
    depths = Counter(number_depth(h.number) for h in numbered)
    frequent = [d for d, n in depths.items() if n >= 2 or d == 1] or list(depths)
    base = min(frequent) if frequent else 1
    by_style: dict[tuple[float, bool], Counter[int]] = defaultdict(Counter)
    for h in numbered:
        h.level = 1 if _TOP_WORD.match(h.number) else max(1, number_depth(h.number) - base + 1)
        by_style[h.style][h.level] += 1
    anchors = {style: c.most_common(1)[0][0] for style, c in by_style.items()}
    sizes = sorted({h.style[0] for h in heads if h.style[0] >= body + 0.9}, reverse=True)
    ranked: dict[float, int] = {}
    level, top = 0, 0.0
    for size in sizes:  # without numbering: sizes within 10% of a level's largest share it
        if level == 0 or size * 1.1 < top:
            level, top = level + 1, size
        ranked[size] = level
    for h in heads:
        if h.number:
            continue
        if h.style in anchors:
            h.level = anchors[h.style]
        elif anchors:
            near = min(anchors, key=lambda s: (abs(s[0] - h.style[0]), s[1] != h.style[1]))
            lvl = anchors[near]
            if h.style[0] < near[0] / 1.1 or (h.style[0] <= near[0] and near[1] and not h.style[1]):
                lvl += 1
            h.level = lvl
        else:
            h.level = ranked.get(h.style[0], level + 1)  # bold at body size: below every larger size
        h.level = max(1, min(h.level, 6))


def detect(pages: list[PageText], furniture: Furniture, listings: Listings) -> list[Heading]:
    """The headings of the document in reading order (see the module docstring)."""
    body = body_size(pages, furniture, listings.pages)
    if not body:
        return []
    heads: list[Heading] = []
    for pt in pages:
        if pt.number == 1 and len(pages) >= 3 and _body_chars(pt, furniture, body) < COVER_BODY_CHARS:
            continue  # a cover page: its title is the document's, not a section
        found: list[Heading] = []
        for item in pt.items(furniture):
            if isinstance(item, Block):
                found.extend(_candidates(pt, item, body))
        if pt.number in listings.pages:  # a contents or index page: only its title, when it is a numbered part
            top = min(found, key=lambda x: x.y) if found and pt.number - 1 not in listings.pages else None
            entry = parse_entry(top.title) if top is not None else None
            found = [top] if top is not None and top.number and (entry is None or entry.page is None) else []
            for h in found:
                h.listing = True
        heads.extend(_join_labels(found))
    heads = _recurring(heads, len(pages), {pt.number: pt for pt in pages}, furniture, body)
    if len(listings.entries) >= 8:
        heads = _confirm(heads, listings)
        heads = _with_listed_parents(heads, listings)
    _levels(heads, body)
    return heads


def _join_labels(found: list[Heading]) -> list[Heading]:
    """A heading that is only a label ("Chapter 1") and the heading just below it are one heading."""
    out: list[Heading] = []
    for h in found:
        prev = out[-1] if out else None
        if (prev is not None and _LABEL_ONLY.match(prev.title) and not h.number
                and 0 < h.y - prev.y < 4 * max(prev.style[0], h.style[0], 1.0)):
            big = max(prev, h, key=lambda x: x.style[0])
            out[-1] = Heading(0, f"{prev.title} {h.title}", prev.page, prev.y, prev.lines + h.lines, prev.number,
                              big.style)
            continue
        out.append(h)
    return out


RECUR_PAGES_LONG = 3  # in documents of 20 pages or more (2 in shorter ones); docs/eval/tree-quality.md


def _recurring(heads: list[Heading], n_pages: int, pages: dict[int, PageText] | None = None,
               furniture: Furniture | None = None, body: float = 0.0) -> list[Heading]:
    """An unnumbered candidate whose style no candidate on other pages shares is text in a figure, a syntax
    diagram or a back cover, not a heading (documents of 5 pages or more) -- unless, in a document under 20 pages,
    the style has 2 candidates or more and each opens a paragraph of body text or ends its page (a short guide's
    only third-level headings, all on one page; a diagram's labels are followed by more labels, a back cover's
    one banner is alone)."""
    if n_pages < 5:
        return heads
    need = RECUR_PAGES_LONG if n_pages >= 20 else 2
    pages_of: dict[tuple[float, bool], set[int]] = defaultdict(set)
    for h in heads:
        pages_of[h.style].add(h.page)
    lone = {style for style, on in pages_of.items() if len(on) < need}
    if lone and need == 2 and pages is not None and furniture is not None and body:
        for style in list(lone):
            group = [h for h in heads if h.style == style and not h.number]
            if len(group) >= 2 and all(_opens_paragraph(h, heads, pages[h.page], furniture, body) for h in group):
                lone.discard(style)
    return [h for h in heads if h.number or h.listing or h.style not in lone]


PARAGRAPH_CHARS = 40  # body text under a heading, at least; chosen on the ConditionalQA guides' tune half


def _opens_paragraph(head: Heading, heads: list[Heading], pt: PageText, furniture: Furniture, body: float) -> bool:
    """Is ``head`` followed on its page, before any other candidate, by at least ``PARAGRAPH_CHARS`` of body-size
    text (not monospaced)?"""
    if not head.lines:
        return False
    taken = {id(ln) for h in heads if h.page == head.page for ln in h.lines}
    lines = [ln for item in pt.items(furniture) if isinstance(item, Block) for ln in item.lines]
    last = id(head.lines[-1])
    at = next((i for i, ln in enumerate(lines) if id(ln) == last), None)
    if at is None:
        return False
    if at == len(lines) - 1:
        return True  # the last line of its page: the paragraph is on the next one
    chars = 0
    for ln in lines[at + 1:]:
        if id(ln) in taken or ln.mono or abs(ln.size - body) > 0.6:
            break
        chars += len(ln.text)
    return chars >= PARAGRAPH_CHARS


def _with_listed_parents(heads: list[Heading], listings: Listings) -> list[Heading]:
    """A numbered heading whose parent numbers have no heading in the text (a sampled or cut document) gets them
    from the printed contents, placed just before it: "2.1.6" under "Chapter 2" and "2.1" when the contents list
    them."""
    listed: dict[str, str] = {}
    for e in listings.entries:
        if e.number:
            plain = re.sub(r"^\D+\s*", "", e.number).rstrip(".:")
            listed.setdefault(plain, f"{e.number} {e.title}".strip())
    seen = {re.sub(r"^\D+\s*", "", h.number).rstrip(".:") for h in heads if h.number}
    shallowest = min((number_depth(h.number) for h in heads if h.number), default=1)
    out: list[Heading] = []
    for h in heads:
        if h.number and re.match(r"\d", h.number):
            parts = re.split(r"[.-]", h.number)
            for k in range(shallowest, len(parts)):
                parent = ".".join(parts[:k])
                if parent not in seen and parent in listed:
                    out.append(Heading(0, listed[parent], h.page, h.y - 0.5, [], listed[parent].split(" ")[0]
                                       if not listed[parent].lower().startswith(("chapter", "appendix", "part"))
                                       else " ".join(listed[parent].split(" ")[:2])))
                    seen.add(parent)
        out.append(h)
    return out


def _body_chars(pt: PageText, furniture: Furniture, body: float) -> int:
    return sum(len(ln.text) for item in pt.items(furniture) if isinstance(item, Block)
               for ln in item.lines if abs(ln.style - body) <= 0.6)


def _confirm(heads: list[Heading], listings: Listings) -> list[Heading]:
    """Where a table of contents is printed: an unnumbered candidate of a style used by listed headings must be
    listed too (bold labels, table headers and the like are not)."""
    keys = {title_key(e.title) for e in listings.entries}
    numbers = {e.number.lower() for e in listings.entries if e.number}
    listed_styles = {h.style for h in heads if title_key(h.title) in keys or h.number.lower() in numbers}
    out = []
    for h in heads:
        listed = title_key(h.title) in keys or (h.number and h.number.lower() in numbers)
        if listed or h.number or h.listing or h.style not in listed_styles:
            out.append(h)
    return out
