"""Markdown and plain text.

Markdown: ATX (``#``) and setext (``===``/``---``) headings nest by level; fenced code blocks are kept whole
and never read as headings; paragraphs split on blank lines. Plain text: paragraphs split on blank lines; the
title is the first line when it looks like one, else the file name. Every passage has ``Location(line=n)``
(1-based line of its first paragraph).
"""

from __future__ import annotations

import re
from pathlib import Path

from shelfwise.ingest.encoding import decode_text
from shelfwise.ingest.model import DEFAULT_LIMITS, Limits, Location, ParsedDocument
from shelfwise.ingest.outline import OutlineBuilder

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_FRONT_MATTER = re.compile(r"\A---\s*\n.*?\n---\s*\n", re.DOTALL)


def read_text(path: Path, limits: Limits = DEFAULT_LIMITS) -> tuple[str, list[str]]:
    """Decode a text file (:func:`shelfwise.ingest.encoding.decode_text`: BOMs, UTF-16 without a BOM, UTF-8, then
    Windows-1252 with a warning; binary data is refused). Returns (text, warnings)."""
    text, warnings = decode_text(path.read_bytes(), limits)
    return text.replace("\r\n", "\n").replace("\r", "\n"), warnings


def _paragraphs(lines: list[str], start_line: int = 1) -> list[tuple[int, str]]:
    """Blank-line separated paragraphs as (1-based first line, text); line breaks inside are kept."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    first = 0
    for i, line in enumerate(lines):
        if line.strip():
            if not buf:
                first = i
            buf.append(line.rstrip())
        elif buf:
            out.append((start_line + first, "\n".join(buf)))
            buf = []
    if buf:
        out.append((start_line + first, "\n".join(buf)))
    return out


def parse_markdown(path: Path, limits: Limits) -> ParsedDocument:
    text, warnings = read_text(path, limits)
    offset = 0
    front = _FRONT_MATTER.match(text)
    title_meta = ""
    if front:
        m = re.search(r"^title:\s*(.+)$", front.group(0), re.MULTILINE)
        title_meta = m.group(1).strip().strip("\"'") if m else ""
        offset = front.group(0).count("\n")
        text = text[front.end() :]
    lines = text.split("\n")
    builder = OutlineBuilder(limits.passage_tokens)
    first_heading = ""
    buf: list[str] = []
    buf_start = 0
    in_fence = ""

    def flush() -> None:
        for line_no, para in _paragraphs(buf, buf_start + offset + 1):
            builder.paragraph(para, Location(line=line_no))
        buf.clear()

    for i, line in enumerate(lines):
        fence = _FENCE.match(line)
        if in_fence:
            buf.append(line)
            if fence and fence.group(1) == in_fence:
                in_fence = ""
            continue
        if fence:
            in_fence = fence.group(1)
            if not buf:
                buf_start = i
            buf.append(line)
            continue
        heading: tuple[int, str] | None = None
        atx = _ATX.match(line)
        if atx and (atx.group(2) or "").strip():
            heading = (len(atx.group(1)), atx.group(2).strip())
        elif (
            _SETEXT.match(line)
            and buf
            and buf[-1].strip()
            and not (buf[-1].lstrip().startswith(("-", "*", "|")))
        ):
            # "Title\n=====": the previous non-blank line is the heading
            title = buf.pop()
            heading = (1 if line.strip().startswith("=") else 2, title.strip())
        if heading is not None:
            flush()
            level, title = heading
            first_heading = first_heading or title
            builder.heading(title, level, Location(line=i + offset + 1))
            buf_start = i + 1
            continue
        if not buf:
            buf_start = i
        buf.append(line)
    flush()
    if in_fence:
        warnings.append("unclosed code fence")
    children = builder.finish()
    title = title_meta or first_heading or path.stem
    return ParsedDocument(title=title, format="md", children=children, pages=0, warnings=warnings)


def parse_plain(path: Path, limits: Limits) -> ParsedDocument:
    text, warnings = read_text(path, limits)
    builder = OutlineBuilder(limits.passage_tokens)
    for line_no, para in _paragraphs(text.split("\n")):
        builder.paragraph(para, Location(line=line_no))
    children = builder.finish()
    first = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
    title = first if 0 < len(first) <= 100 and not first.endswith((".", ",", ";")) else path.stem
    return ParsedDocument(title=" ".join(title.split()), format="txt", children=children, warnings=warnings)


def parse(path: Path, limits: Limits = DEFAULT_LIMITS) -> ParsedDocument:
    if path.suffix.lower() in (".md", ".markdown"):
        return parse_markdown(path, limits)
    return parse_plain(path, limits)
