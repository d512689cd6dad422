"""Markdown and plain text.

Markdown: ATX (``#``) and setext (``===``/``---``) headings nest by level; fenced code blocks are kept whole
and never read as headings; paragraphs split on blank lines. Plain text: paragraphs split on blank lines; the
title is the first line when it looks like one, else the file name. Every passage has ``Location(line=n)``
(1-based line of its first paragraph).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from shelfwise.ingest.encoding import decode_text, text_lines
from shelfwise.ingest.model import DEFAULT_LIMITS, PIPE_RULE, Limits, Location, ParsedDocument, pipe_cells
from shelfwise.ingest.outline import OutlineBuilder

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


PARAGRAPH_CHARS = 1 << 16  # a paragraph without a blank line is handed on after this many characters


def read_text(path: Path, limits: Limits = DEFAULT_LIMITS) -> tuple[str, list[str]]:
    """Decode a whole text file (:func:`shelfwise.ingest.encoding.decode_text`: BOMs, UTF-16 without a BOM, UTF-8,
    then Windows-1252 with a warning; binary data is refused). Returns (text, warnings). The parsers here read
    lazily instead (:func:`shelfwise.ingest.encoding.text_lines`), so the passage cap stops the reading."""
    text, warnings = decode_text(path.read_bytes(), limits)
    return text.replace("\r\n", "\n").replace("\r", "\n"), warnings


def _paragraphs(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """Blank-line separated paragraphs as (1-based first line, text); line breaks inside are kept. A paragraph
    longer than ``PARAGRAPH_CHARS`` is handed on in parts (each becomes passages of its own anyway)."""
    buf: list[str] = []
    size = 0
    first = 0
    for n, line in lines:
        if line.strip():
            if not buf:
                first = n
            buf.append(line.rstrip())
            size += len(line)
            if size < PARAGRAPH_CHARS:
                continue
        if buf:
            yield first, "\n".join(buf)
            buf, size = [], 0
    if buf:
        yield first, "\n".join(buf)


def _front_matter(lines: Iterator[tuple[int, str]]) -> tuple[str, list[tuple[int, str]]]:
    """A YAML front matter block (``---`` lines around it) at the start: (its title or "", the lines to parse
    after it). Without one, the lines read while looking are given back."""
    head: list[tuple[int, str]] = []
    for item in lines:
        head.append(item)
        if len(head) == 1 and item[1].rstrip() != "---":
            return "", head
        if len(head) > 1 and item[1].rstrip() == "---":
            m = re.search(r"^title:\s*(.+)$", "\n".join(t for _, t in head), re.MULTILINE)
            return (m.group(1).strip().strip("\"'") if m else ""), []
        if len(head) > 1000:  # not front matter after all
            break
    return "", head


def parse_markdown(path: Path, limits: Limits) -> ParsedDocument:
    numbered, warnings = text_lines(path, limits)
    lines = iter(numbered)
    title_meta, replay = _front_matter(lines)
    builder = OutlineBuilder(limits.passage_tokens, limits.max_passages)
    first_heading = ""
    buf: list[tuple[int, str]] = []
    size = 0
    in_fence = ""

    def flush() -> None:
        nonlocal size
        for line_no, para in _paragraphs(buf):
            lines = para.split("\n")
            at = next((i for i in range(len(lines) - 1) if "|" in lines[i] and PIPE_RULE.match(lines[i + 1])),
                      None)
            if at is None:
                builder.paragraph(para, Location(line=line_no))
                continue
            if at:
                builder.paragraph("\n".join(lines[:at]), Location(line=line_no))
            end = next((j for j in range(at + 2, len(lines)) if "|" not in lines[j]), len(lines))
            rows = [pipe_cells(ln) for ln in [lines[at], *lines[at + 2 : end]]]
            builder.table(rows, Location(line=line_no + at))
            if end < len(lines):
                builder.paragraph("\n".join(lines[end:]), Location(line=line_no + end))
        buf.clear()
        size = 0

    for n, line in itertools.chain(replay, lines):
        if size > PARAGRAPH_CHARS:
            flush()
            if builder.truncated:  # the passage cap: stop reading
                break
        fence = _FENCE.match(line)
        if in_fence:
            buf.append((n, line))
            size += len(line)
            if fence and fence.group(1) == in_fence:
                in_fence = ""
            continue
        if fence:
            in_fence = fence.group(1)
            buf.append((n, line))
            continue
        heading: tuple[int, str] | None = None
        atx = _ATX.match(line)
        if atx and (atx.group(2) or "").strip():
            heading = (len(atx.group(1)), atx.group(2).strip())
        elif (
            _SETEXT.match(line)
            and buf
            and buf[-1][1].strip()
            and not (buf[-1][1].lstrip().startswith(("-", "*", "|")))
        ):
            # "Title\n=====": the previous non-blank line is the heading
            title = buf.pop()[1]
            heading = (1 if line.strip().startswith("=") else 2, title.strip())
        if heading is not None:
            flush()
            if builder.truncated:
                break
            level, title = heading
            first_heading = first_heading or title
            builder.heading(title, level, Location(line=n))
            continue
        buf.append((n, line))
        size += len(line)
    else:
        if in_fence:
            warnings.append("unclosed code fence")
    flush()
    children = builder.finish()
    title = title_meta or first_heading or path.stem
    return ParsedDocument(title=title, format="md", children=children, pages=0,
                          warnings=warnings + builder.warnings)


def parse_plain(path: Path, limits: Limits) -> ParsedDocument:
    lines, warnings = text_lines(path, limits)
    builder = OutlineBuilder(limits.passage_tokens, limits.max_passages)
    first = ""
    for line_no, para in _paragraphs(lines):
        first = first or para.split("\n", 1)[0].strip()
        builder.paragraph(para, Location(line=line_no))  # past the passage cap: dropped, and noted
        if builder.truncated:  # stop reading
            break
    children = builder.finish()
    title = first if 0 < len(first) <= 100 and not first.endswith((".", ",", ";")) else path.stem
    return ParsedDocument(title=" ".join(title.split()), format="txt", children=children,
                          warnings=warnings + builder.warnings)


def parse(path: Path, limits: Limits = DEFAULT_LIMITS) -> ParsedDocument:
    if path.suffix.lower() in (".md", ".markdown"):
        return parse_markdown(path, limits)
    return parse_plain(path, limits)
