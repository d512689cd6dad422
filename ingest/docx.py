"""Word (.docx) with python-docx: headings, paragraphs, list items and tables in body order.

Headings are paragraphs whose style is ``Heading N`` (or based on one), or whose outline level is set with
``w:outlineLvl`` in the paragraph or its style chain. Level jumps nest under the nearest shallower heading.
The first ``Title``-style paragraph is the title candidate (not a section). List items (``w:numPr`` in the
paragraph or its style) get a ``- `` prefix. Tables become Markdown: a cell spanning columns appears once (the
spanned columns stay empty); a cell spanning rows is repeated in each row, so every row chunk stands alone.
Word has no pages, so locations are empty; a passage is placed by its section path. A file with fewer than
``MIN_STYLE_HEADINGS`` heading-style paragraphs (or a stretch of ``LONG_PREFIX`` blocks before the first one that
numbers its bold headings 1., 2., 3. and prints no contents) gets its headings from their look instead: a short
paragraph in bold throughout, at the level of its numbering (``4.1.`` is level 2), else 1 when centred and 2
otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shelfwise.ingest.model import DEFAULT_LIMITS, Limits, ParsedDocument
from shelfwise.ingest.outline import OutlineBuilder, sensible_title
from shelfwise.ingest.sniff import check_office

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
MAX_HEADING_CHARS = 200


@dataclass
class StyleInfo:
    name: str
    based_on: str | None
    outline: int | None  # 1-based outline level from w:outlineLvl (None: not set; 0: body text)
    numbered: bool | None  # w:numPr present (None: not set)
    bold: bool | None = None  # w:b in the style's run properties (None: not set)


def _val(el: Any, tag: str) -> str | None:
    child = el.find(tag) if el is not None else None
    return child.get(f"{W}val") if child is not None else None


def _outline(ppr: Any) -> int | None:
    raw = _val(ppr, f"{W}outlineLvl")
    if raw is None or not raw.lstrip("-").isdigit():
        return None
    lvl = int(raw)
    return lvl + 1 if 0 <= lvl <= 8 else 0


def _on(rpr: Any, tag: str) -> bool | None:
    """A toggle property (``w:b``) of run properties: True, False, or None when not set."""
    el = rpr.find(tag) if rpr is not None else None
    if el is None:
        return None
    return el.get(f"{W}val") not in ("0", "false", "off")


def _all_bold(p: Any, style_bold: bool) -> bool:
    """Every run with text in the paragraph is bold (its own ``w:b`` or the paragraph style's)."""
    runs = [r for r in p.iter(f"{W}r") if "".join(t.text or "" for t in r.iter(f"{W}t")).strip()]
    if not runs:
        return False
    for r in runs:
        own = _on(r.find(f"{W}rPr"), f"{W}b")
        if not (own if own is not None else style_bold):
            return False
    return True


_NUMBER = re.compile(r"^(\d{1,3}(?:\.\d{1,3})*)\.?\s")
MIN_STYLE_HEADINGS = 3  # fewer paragraphs in heading styles than this: headings are found by their look


def _looks_like_heading(p: Any, text: str, styles: Styles, sid: str | None) -> int:
    """In a file without heading styles: the level of a short bold paragraph (its numbering depth, else 1 when
    centred and 2 otherwise), or 0 for body text."""
    flat = " ".join(text.split())
    if len(flat) > MAX_FALLBACK_CHARS or sum(ch.isalpha() for ch in flat) < 3 or flat.endswith((",", ";")):
        return 0
    if not _all_bold(p, styles.bold(sid)):
        return 0
    number = _NUMBER.match(flat)
    ppr = p.find(f"{W}pPr")
    centred = _val(ppr, f"{W}jc") in ("center", "centre")
    if flat.endswith(".") and not (number or centred):
        return 0
    return number.group(1).count(".") + 1 if number else (1 if centred else 2)


MAX_FALLBACK_CHARS = 120
LONG_PREFIX = 100  # body blocks before the first heading-style paragraph that are read for headings by their look


def _numbered(ppr: Any) -> bool | None:
    num = ppr.find(f"{W}numPr") if ppr is not None else None
    if num is None:
        return None
    num_id = _val(num, f"{W}numId")
    return num_id not in (None, "0")


class Styles:
    """Paragraph styles by id, resolving heading level and list numbering through ``w:basedOn``."""

    def __init__(self, styles_element: Any) -> None:
        self.by_id: dict[str, StyleInfo] = {}
        self.default: str | None = None
        if styles_element is None:
            return
        for st in styles_element.iter(f"{W}style"):
            if st.get(f"{W}type") not in (None, "paragraph"):
                continue
            sid = st.get(f"{W}styleId") or ""
            ppr = st.find(f"{W}pPr")
            self.by_id[sid] = StyleInfo(
                name=_val(st, f"{W}name") or sid,
                based_on=_val(st, f"{W}basedOn"),
                outline=_outline(ppr),
                numbered=_numbered(ppr),
                bold=_on(st.find(f"{W}rPr"), f"{W}b"),
            )
            if st.get(f"{W}default") in ("1", "true", "on"):
                self.default = sid
        self._level: dict[str, int] = {}

    def _chain(self, sid: str | None) -> Iterator[StyleInfo]:
        seen: set[str] = set()
        while sid and sid in self.by_id and sid not in seen:
            seen.add(sid)
            info = self.by_id[sid]
            yield info
            sid = info.based_on

    def name(self, sid: str | None) -> str:
        info = self.by_id.get(sid or self.default or "")
        return info.name if info else ""

    def level(self, sid: str | None) -> int:
        """Heading level 1-9 of a style, 0 for body text."""
        sid = sid or self.default
        if not sid:
            return 0
        if sid not in self._level:
            level = 0
            for info in self._chain(sid):
                if info.outline is not None:
                    level = info.outline
                    break
                m = _HEADING_NAME.match(info.name.strip())
                if m:
                    level = int(m.group(1))
                    break
            self._level[sid] = level
        return self._level[sid]

    def bold(self, sid: str | None) -> bool:
        for info in self._chain(sid or self.default):
            if info.bold is not None:
                return info.bold
        return False

    def numbered(self, sid: str | None) -> bool:
        for info in self._chain(sid or self.default):
            if info.numbered is not None:
                return info.numbered
        return False


def run_text(el: Any) -> str:
    """Visible text of a paragraph-like element: text runs, tabs and breaks; no field codes, deletions or
    compatibility fallbacks (which duplicate text boxes)."""
    parts: list[str] = []

    def walk(node: Any) -> None:
        for child in node:
            tag = child.tag
            if not isinstance(tag, str) or tag == MC_FALLBACK:
                continue
            if tag == f"{W}t":
                parts.append(child.text or "")
            elif tag == f"{W}tab":
                parts.append("\t")
            elif tag in (f"{W}br", f"{W}cr"):
                parts.append("\n")
            elif tag == f"{W}noBreakHyphen":
                parts.append("-")
            elif tag in (f"{W}del", f"{W}instrText", f"{W}delText", f"{W}pPr", f"{W}rPr"):
                continue
            elif tag == f"{W}p" and parts:
                parts.append("\n")  # a paragraph inside a text box
                walk(child)
            else:
                walk(child)

    walk(el)
    return "".join(parts)


def _cell_text(tc: Any) -> str:
    texts: list[str] = []
    for child in tc:
        if child.tag == f"{W}p":
            texts.append(run_text(child))
        elif child.tag == f"{W}tbl":  # nested table: flatten
            for row in table_rows(child):
                texts.append("; ".join(c for c in row if c))
        elif child.tag in (f"{W}sdt", f"{W}customXml"):
            texts.append(_cell_text(child.find(f"{W}sdtContent") if child.tag == f"{W}sdt" else child))
    return " ".join(" ".join(t.split()) for t in texts if t.strip())


def _direct(el: Any, tag: str) -> Iterator[Any]:
    """Children with ``tag``, looking through content-control and custom-XML wrappers (not nested tables)."""
    for child in el:
        if child.tag == tag:
            yield child
        elif child.tag in (f"{W}sdt", f"{W}sdtContent", f"{W}customXml"):
            yield from _direct(child, tag)


def table_rows(tbl: Any) -> list[list[str]]:
    """The table as a grid of strings (see the module docstring for merged cells)."""
    grid: list[list[str]] = []
    for tr in _direct(tbl, f"{W}tr"):
        trpr = tr.find(f"{W}trPr")
        before = _val(trpr, f"{W}gridBefore")
        row: list[str] = [""] * (int(before) if before and before.isdigit() else 0)
        for tc in _direct(tr, f"{W}tc"):
            tcpr = tc.find(f"{W}tcPr")
            span_raw = _val(tcpr, f"{W}gridSpan")
            span = max(1, int(span_raw)) if span_raw and span_raw.isdigit() else 1
            vmerge = tcpr.find(f"{W}vMerge") if tcpr is not None else None
            col = len(row)
            if vmerge is not None and vmerge.get(f"{W}val") in (None, "continue"):
                above = grid[-1] if grid else []
                text = above[col] if col < len(above) else ""
            else:
                text = _cell_text(tc)
            row.append(text)
            row.extend([""] * (span - 1))
        grid.append(row)
    width = max((len(r) for r in grid), default=0)
    grid = [r + [""] * (width - len(r)) for r in grid if any(c.strip() for c in r)]
    keep = [j for j in range(width) if any(r[j].strip() for r in grid)]
    return [[r[j] for j in keep] for r in grid]


def _body_blocks(container: Any) -> Iterator[Any]:
    """Paragraphs and tables in body order, looking inside content controls and custom XML."""
    for child in container:
        tag = child.tag
        if tag in (f"{W}p", f"{W}tbl"):
            yield child
        elif tag == f"{W}sdt":
            content = child.find(f"{W}sdtContent")
            if content is not None:
                yield from _body_blocks(content)
        elif tag == f"{W}customXml":
            yield from _body_blocks(child)


_CONTENTS = re.compile(r"^(table of )?contents$|^содержание$|^оглавление$|^inhalt(sverzeichnis)?$|^sommaire$",
                       re.IGNORECASE)


def _numbered_prefix(blocks: list[Any], styles: Styles) -> bool:
    """Does a stretch before the first heading style hold its own headings: bold paragraphs numbered 1., 2., 3. in
    order, and no printed table of contents (whose entries look the same)?"""
    tops: list[int] = []
    for b in blocks:
        if b.tag != f"{W}p":
            continue
        text = " ".join(run_text(b).split())
        if _CONTENTS.match(text):
            return False
        number = _NUMBER.match(text)
        if number and "." not in number.group(1) and _looks_like_heading(b, text, styles, _val(b.find(f"{W}pPr"),
                                                                                                  f"{W}pStyle")):
            tops.append(int(number.group(1)))
    return len(tops) >= 3 and tops[:3] == [1, 2, 3]


def _level(p: Any, styles: Styles) -> int:
    """A paragraph's heading level from its own outline level or its style (0: body text)."""
    ppr = p.find(f"{W}pPr")
    own = _outline(ppr)
    return own if own is not None else styles.level(_val(ppr, f"{W}pStyle"))


def parse(path: Path, limits: Limits = DEFAULT_LIMITS) -> ParsedDocument:
    check_office(path, "docx", limits)
    import docx  # python-docx; imported here so a folder walk does not load it

    document = docx.Document(str(path))
    try:
        styles = Styles(document.styles.element)
    except Exception:
        styles = Styles(None)
    builder = OutlineBuilder(limits.passage_tokens, limits.max_passages)
    title_para = ""
    warnings: list[str] = []
    blocks = list(_body_blocks(document.element.body))
    styled = [i for i, b in enumerate(blocks) if b.tag == f"{W}p" and _level(b, styles) >= 1 and run_text(b).strip()]
    # headings by their look: in a file with (almost) no heading styles, or in a long stretch before the first one
    look_until = len(blocks) if len(styled) < MIN_STYLE_HEADINGS else 0
    if styled and styled[0] >= LONG_PREFIX and _numbered_prefix(blocks[: styled[0]], styles):
        look_until = styled[0]
    for index, block in enumerate(blocks):
        by_look = index < look_until
        if builder.truncated:  # the passage cap: the rest is not read
            break
        if block.tag == f"{W}tbl":
            builder.table(table_rows(block))
            continue
        ppr = block.find(f"{W}pPr")
        sid = _val(ppr, f"{W}pStyle")
        text = run_text(block).strip()
        if not text:
            continue
        style_name = styles.name(sid).lower()
        if style_name == "title" and not title_para:
            title_para = " ".join(text.split())
            continue
        level = _level(block, styles)
        if level == 0 and by_look:
            level = _looks_like_heading(block, text, styles, sid)
        if 1 <= level <= 9 and len(text) <= MAX_HEADING_CHARS:
            builder.heading(text, level)
            continue
        numbered = _numbered(ppr)
        if numbered is None:
            numbered = styles.numbered(sid) or style_name.startswith("list bullet")
        builder.paragraph(f"- {text}" if numbered else text)
    children = builder.finish()
    if any(el.tag == f"{W}altChunk" for el in document.element.body.iter(f"{W}altChunk")):
        warnings.append("embedded alternative-format content (altChunk) was skipped")
    try:
        core_title = document.core_properties.title
    except Exception:
        core_title = ""
    title = sensible_title(core_title) or title_para or path.stem
    return ParsedDocument(title=title, format="docx", children=children, pages=0,
                          warnings=warnings + builder.warnings)
