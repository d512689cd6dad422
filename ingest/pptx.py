"""PowerPoint (.pptx) with python-pptx: one section per slide, body text in reading order, tables, notes.

A slide's title is its title placeholder's text; without one, the top-most short text box; else ``Slide N``.
Body shapes are read sorted by (top, left), group shapes recursively; tables become Markdown (a merged cell
appears once); speaker notes become their own passage prefixed ``Notes: ``. Every node has
``Location(slide=n)``.

Animation builds (a slide whose title is the next slide's and whose body the next slide repeats, or nearly) are
stored once, with the last step; their speaker notes are kept. Lines of one or two characters repeated on a slide
(a diagram's shapes labelled "R") are not text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from shelfwise.ingest.model import DEFAULT_LIMITS, Limits, Location, ParsedDocument
from shelfwise.ingest.outline import OutlineBuilder, sensible_title
from shelfwise.ingest.passages import split_passages
from shelfwise.ingest.sniff import check_office

MAX_TITLE_CHARS = 150
_FURNITURE = (13, 15, 16)  # PP_PLACEHOLDER.SLIDE_NUMBER, FOOTER, DATE


def _clean_title(text: str) -> str:
    return " ".join(text.replace("\x0b", " ").split())


def _frame_text(shape: Any) -> str:
    """A text frame's paragraphs, one per line, indented by outline level; soft breaks become newlines."""
    lines: list[str] = []
    for para in shape.text_frame.paragraphs:
        text = "".join(run.text for run in para.runs) if para.runs else para.text
        text = text.replace("\x0b", "\n").strip()
        if text:
            lines.append("  " * min(para.level, 4) + text)
    return "\n".join(lines)


def _pos(shape: Any) -> tuple[int, int]:
    try:
        return (shape.top or 0, shape.left or 0)
    except (AttributeError, ValueError, KeyError):
        return (0, 0)


def _flatten(shapes: Any) -> Iterator[Any]:
    """Shapes in reading order (top, then left); a group's members in their own order, in the group's place.
    Slide-number, date and footer placeholders are left out."""
    from pptx.shapes.group import GroupShape

    for shape in sorted(shapes, key=_pos):
        if isinstance(shape, GroupShape):
            yield from _flatten(shape.shapes)
        elif _placeholder_type(shape) not in _FURNITURE:
            yield shape


def _placeholder_type(shape: Any) -> int:
    if not getattr(shape, "is_placeholder", False):
        return 0
    try:
        return int(shape.placeholder_format.type)
    except (ValueError, AttributeError, KeyError, TypeError):
        return 0


def _is_title_placeholder(shape: Any) -> bool:
    return _placeholder_type(shape) in (1, 3, 5)  # PP_PLACEHOLDER.TITLE, CENTER_TITLE, VERTICAL_TITLE


def _table_rows(shape: Any) -> list[list[str]]:
    rows: list[list[str]] = []
    for row in shape.table.rows:
        cells = []
        for cell in row.cells:
            cells.append("" if cell.is_spanned else " ".join(cell.text.split()))
        rows.append(cells)
    return rows


def _slide_title(shapes: list[Any]) -> tuple[str, Any | None]:
    """(title, the shape it came from) for one slide's flattened shapes."""
    for shape in shapes:
        if _is_title_placeholder(shape) and shape.has_text_frame:
            title = _clean_title(shape.text_frame.text)
            if title:
                return title[:MAX_TITLE_CHARS], shape
    candidates = []
    for shape in shapes:
        if not getattr(shape, "has_text_frame", False):
            continue
        text = _clean_title(shape.text_frame.text)
        lines = [ln for ln in shape.text_frame.text.replace("\x0b", "\n").split("\n") if ln.strip()]
        if sum(ch.isalpha() for ch in text) >= 2 and len(text) <= 100 and len(lines) <= 2:
            candidates.append((_pos(shape), text, shape))
    if candidates:
        _at, text, shape = min(candidates, key=lambda c: c[0])
        return text, shape
    return "", None


def _notes(slide: Any) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return frame.text.replace("\x0b", "\n").strip() if frame is not None else ""


@dataclass
class _Slide:
    number: int
    title: str
    items: list[tuple[str, Any]] = field(default_factory=list)  # ("table", rows) or ("text", str)
    notes: str = ""

    def body(self) -> str:
        return "\n".join(x if kind == "text" else "\n".join(" | ".join(r) for r in x) for kind, x in self.items)


GLYPH_RUN = 5  # a one- or two-character line repeated this often on a slide is a drawing's glyphs, not text
BUILD_SIMILARITY = 0.9  # a slide whose body is this similar to the next one's is an animation build of it


def _drop_glyph_runs(texts: list[str]) -> list[str]:
    """Lines of one or two letters or digits repeated on a slide (shapes labelled "R" in a diagram) are left out
    (a code listing's closing braces are kept)."""
    counts = Counter(ln.strip() for t in texts for ln in t.split("\n") if 0 < len(ln.strip()) <= 2
                     and ln.strip().isalnum())
    noise = {ln for ln, n in counts.items() if n >= GLYPH_RUN}
    if not noise:
        return texts
    out = []
    for t in texts:
        kept = "\n".join(ln for ln in t.split("\n") if ln.strip() not in noise)
        if kept.strip():
            out.append(kept)
    return out


def _is_build(a: _Slide, b: _Slide) -> bool:
    """``a`` shows part of what ``b`` shows: the same title and a body that ``b`` repeats (an animation step)."""
    body_a, body_b = a.body(), b.body()
    if a.title != b.title or not body_a.strip():
        return False
    lines_a = {ln.strip() for ln in body_a.split("\n") if ln.strip()}
    lines_b = {ln.strip() for ln in body_b.split("\n") if ln.strip()}
    if lines_a <= lines_b:
        return True
    return SequenceMatcher(None, body_a, body_b, autojunk=False).ratio() >= BUILD_SIMILARITY


def _read_slide(n: int, slide: Any) -> _Slide:
    shapes = list(_flatten(slide.shapes))
    title, title_shape = _slide_title(shapes)
    out = _Slide(n, title)
    texts: list[tuple[int, str]] = []
    for shape in shapes:
        if shape is title_shape:
            continue
        if getattr(shape, "has_table", False) and shape.has_table:
            out.items.append(("table", _table_rows(shape)))
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            text = _frame_text(shape)
            if text:
                texts.append((len(out.items), text))
                out.items.append(("text", text))
    kept = _drop_glyph_runs([t for _i, t in texts])
    if len(kept) != len(texts) or kept != [t for _i, t in texts]:
        out.items = [it for it in out.items if it[0] == "table"] + [("text", t) for t in kept]
    out.notes = _notes(slide)
    return out


def parse(path: Path, limits: Limits = DEFAULT_LIMITS) -> ParsedDocument:
    check_office(path, "pptx", limits)
    import pptx  # python-pptx

    prs = pptx.Presentation(str(path))
    builder = OutlineBuilder(limits.passage_tokens, limits.max_passages)
    warnings: list[str] = []
    slides: list[_Slide] = []
    count = 0
    for n, slide in enumerate(prs.slides, 1):
        count = n
        if n > limits.max_pages:
            warnings.append(f"only the first {limits.max_pages} slides were read")
            break
        try:
            slides.append(_read_slide(n, slide))
        except Exception as exc:
            warnings.append(f"slide {n} could not be read: {exc.__class__.__name__}: {exc}")
    builds = 0
    for i, sl in enumerate(slides):
        if builder.truncated:  # the passage cap: the rest is not read
            break
        loc = Location(slide=sl.number)
        build = i + 1 < len(slides) and _is_build(sl, slides[i + 1])
        if build:
            builds += 1
            if not sl.notes:
                continue  # stored once, with its last step
        builder.heading(sl.title or f"Slide {sl.number}", 1, loc)
        for kind, payload in ([] if build else sl.items):
            if kind == "table":
                builder.table(payload, loc)
            else:
                builder.paragraph(payload, loc)
        if sl.notes:
            builder.passage_break()
            for piece in split_passages(sl.notes, max(16, limits.passage_tokens - 4)):
                builder.block(f"Notes: {piece}", loc, alone=True)
    if builds:
        warnings.append(f"{builds} animation build slides stored once, with their last step")
    children = builder.finish()
    try:
        core_title = prs.core_properties.title
    except Exception:
        core_title = ""
    first_title = slides[0].title if slides and slides[0].number == 1 else ""
    title = sensible_title(first_title) or sensible_title(core_title) or path.stem
    return ParsedDocument(title=title, format="pptx", children=children, pages=count,
                          warnings=warnings + builder.warnings)
