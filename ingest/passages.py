"""Bounded passages: sentence-aware splitting, packing paragraphs, and Markdown tables.

Token estimate (no tokenizer is loaded at ingest time): ``estimate_tokens`` counts each CJK/kana/hangul
character as one token and every other whitespace-separated word as 1.3 tokens, but never less than a quarter
of the non-CJK characters (so long unbroken strings such as URLs or identifiers are not under-counted). For
English prose this tracks BPE tokenizers such as Gemma's within ~15%, which is all a passage bound needs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from shelfwise.ingest.model import Location, ParsedNode

# A block (a table chunk with its caption) may pass the passage bound a little to stay whole, never this: the
# bundled MiniLM embedder reads 256 tokens (EmbeddingGemma 2,048), so no passage is cut off by the embedder. The
# estimate against the real tokenizer: docs/reliability.md.
BLOCK_CAP_TOKENS = 256

# CJK ideographs, kana, hangul, full-width forms: each is about one token.
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_CJK = re.compile(f"[{_CJK_CHARS}]")
_CJK_RUN = re.compile(f"[{_CJK_CHARS}]+")
_SPACE_OR_CJK = re.compile(f"[\\s{_CJK_CHARS}]*")

# A sentence ends at . ! ? … (optionally followed by closing quotes/brackets) and whitespace, or right
# after a CJK
# full stop. Abbreviations such as "e.g." or "Mr." are protected below.
# The ends of other scripts: Devanagari and related danda, Arabic question mark and full stop, Ethiopic, Myanmar,
# Khmer, Armenian; CJK full stops need no space after them. (The same ends as core/languages.py, which ingest
# does not import; tests/test_languages.py keeps the two in step.)
_SENT_END = re.compile(r"(?<=[.!?…\u0964\u0965\u061f\u06d4\u1362\u1367\u1368\u104b\u17d4\u0589\u203c\u2047-\u2049])"
                       r"[\"'”’)\]»]*\s+|(?<=[。！？｡．])[」』）】”]*\s*")
_ABBREV = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|cf|al|approx|no|nos|vol|fig|figs|p|pp|ch|sec|art|para|mr|mrs|ms|dr|prof|st|jr|sr|"
    r"inc|ltd|co|corp|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|u\.s|z\.b|d\.h|usw|bzw|ca)\.|\b[A-Z]\.)$",
    re.IGNORECASE,
)
_ENUM = re.compile(r"\(?(?:\d{1,3}|[A-Za-z]|[ivxIVX]{1,4})[.)]")  # "1." or "a)" opening a list item


def estimate_tokens(text: str) -> int:
    """Approximate token count (see the module docstring): the CJK characters, plus the larger of 1.3 per word and
    a quarter of a token per character of the rest, CJK counted as spaces there.

    CJK runs are replaced whole, not character by character (one replacement per character made a long CJK line
    several times slower to parse than ASCII; docs/reliability.md), with the same result."""
    rest, runs = _CJK_RUN.subn(" ", text)
    if not runs:
        return max(math.ceil(len(text.split()) * 1.3), math.ceil(len(text.strip()) / 4))
    cjk = len(text) - len(rest) + runs
    # the rest's length with each CJK character as a space, stripped: the text less its ends of spaces and CJK
    lead = _SPACE_OR_CJK.match(text)
    start = lead.end() if lead else 0
    tail = _SPACE_OR_CJK.match(text[::-1]) if start < len(text) else None
    body = len(text) - start - (tail.end() if tail else 0) if start < len(text) else 0
    return cjk + max(math.ceil(len(rest.split()) * 1.3), math.ceil(body / 4))


def split_sentences(text: str) -> list[str]:
    """Split text into sentences; abbreviations (``e.g.``, ``Dr.``, initials) do not end a sentence."""
    text = text.strip()
    if not text:
        return []
    out: list[str] = []
    start = 0
    for m in _SENT_END.finditer(text):
        end = m.end()
        if end >= len(text):
            break
        head = text[start : m.start()].strip()
        if _ABBREV.search(head[-12:]) or _ENUM.fullmatch(head):
            continue
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = end
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def _split_words(sentence: str, max_tokens: int) -> list[str]:
    """Split one over-long sentence at word boundaries (or between characters for unspaced CJK text)."""
    pieces: list[str] = []
    current: list[str] = []
    tokens = 0.0
    for word in sentence.split():
        cost = max(1.3, (len(word) + 1) / 4) if not _CJK.search(word) else float(estimate_tokens(word))
        if cost > max_tokens:  # an unbroken run (CJK text, a giant identifier)
            if current:
                pieces.append(" ".join(current))
                current, tokens = [], 0.0
            pieces.extend(_split_chars(word, max_tokens))
            continue
        # per-word estimates add up to at least the whole-string estimate, so the bound holds
        if current and tokens + cost > max_tokens:
            pieces.append(" ".join(current))
            current, tokens = [], 0.0
        current.append(word)
        tokens += cost
    if current:
        pieces.append(" ".join(current))
    return pieces


def _split_chars(word: str, max_tokens: int) -> list[str]:
    """An unbroken run (CJK text, a giant identifier) in pieces within ``max_tokens``. Every character is at least
    a quarter of a token (see :func:`estimate_tokens`), so a piece is at most ``4 * max_tokens`` characters; a
    piece starts from the last piece's length and is scaled by its estimate (one or two estimates a piece:
    searching the whole rest of a long line for each piece made a long CJK line far slower to parse than ASCII)."""
    pieces: list[str] = []
    cap = 4 * max_tokens + 4
    guess = cap
    start = 0
    while start < len(word):
        left = len(word) - start
        n = min(left, guess)
        est = estimate_tokens(word[start : start + n])
        if est < 0.8 * max_tokens and n < min(left, cap):  # room to grow (the text got sparser): scale up once
            n = min(left, cap, n * max_tokens // max(est, 1))
            est = estimate_tokens(word[start : start + n])
        while n > 1 and est > max_tokens:
            n = min(n - 1, max(1, n * max_tokens // est))
            est = estimate_tokens(word[start : start + n])
        pieces.append(word[start : start + n])
        start += n
        guess = n
    return pieces


def split_passages(text: str, max_tokens: int = 200) -> list[str]:
    """Split ``text`` into passages of at most ``max_tokens`` (estimated), at sentence boundaries.

    Sentences are packed greedily; a sentence is cut (at word boundaries) only when it alone exceeds the
    bound. Line breaks inside the text are kept within a passage."""
    max_tokens = max(8, max_tokens)
    text = text.strip()
    if not text:
        return []
    if estimate_tokens(text) <= max_tokens:
        return [text]
    units: list[str] = []
    for line in text.split("\n"):
        for sentence in split_sentences(line):
            if estimate_tokens(sentence) > max_tokens:
                units.extend(_split_words(sentence, max_tokens))
            else:
                units.append(sentence)
        if units:
            units[-1] += "\n"
    passages: list[str] = []
    current = ""
    tokens = 0  # sum of the units' estimates: never below the estimate of their concatenation
    for unit in units:
        cost = estimate_tokens(unit)
        joined = (f"{current} {unit}" if current and not current.endswith("\n")
                  and not (_CJK.match(current[-1]) or _CJK.match(unit[0])) else current + unit)
        # the sum of the units' estimates is a bound but for the joining spaces (a quarter token each): near the
        # cap, the joined text itself is estimated
        if current and (tokens + cost > max_tokens
                        or (tokens + cost > 0.8 * max_tokens and estimate_tokens(joined) > max_tokens)):
            passages.append(current.strip())
            current, tokens = unit, cost
            continue
        current = joined
        tokens += cost
    if current.strip():
        passages.append(current.strip())
    return passages


def _cell(value: str) -> str:
    return " ".join(value.replace("|", "\\|").split())


def markdown_table(rows: list[list[str]]) -> str:
    """A GitHub-style Markdown table; the first row is the header. Ragged rows are padded; pipes are
    escaped."""
    rows = [list(r) for r in rows if any(c.strip() for c in r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    norm = [[_cell(c) for c in r] + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(norm[0]) + " |", "|" + "---|" * width]
    lines.extend("| " + " | ".join(r) + " |" for r in norm[1:])
    return "\n".join(lines)


def _abbreviate(text: str, words: int) -> str:
    parts = text.split()
    return text if len(parts) <= words else " ".join(parts[:words]) + "…"


def table_chunks(
    rows: list[list[str]], max_tokens: int = 200, max_rows: int = 20
) -> list[tuple[int, int, str]]:
    """Split a table (first row = header) into Markdown chunks that each repeat the header.

    Returns ``(first_row, last_row, markdown)`` with 0-based indices into ``rows`` of the data rows covered
    (the first chunk's ``first_row`` is 0, the header). A chunk holds at most ``max_rows`` data rows and stays
    under ``max_tokens`` unless a single row is bigger than that."""
    if not rows:
        return []
    header, body = rows[0], rows[1:]
    if not body:
        return [(0, 0, markdown_table([header]))]
    header_tokens = estimate_tokens(" ".join(header)) + len(header)
    if header_tokens > max_tokens // 4:  # a long header is given in full once, then abbreviated
        short = [_abbreviate(h, 5) for h in header]
        short_tokens = estimate_tokens(" ".join(short)) + len(short)
    else:
        short, short_tokens = header, header_tokens
    chunks: list[tuple[int, int, str]] = []
    start = 0
    while start < len(body):
        head, head_tokens = (header, header_tokens) if start == 0 else (short, short_tokens)
        end, tokens = start, head_tokens
        while end < len(body) and end - start < max_rows:
            row_tokens = estimate_tokens(" ".join(body[end])) + len(body[end])
            if end > start and tokens + row_tokens > max_tokens:
                break
            tokens += row_tokens
            end += 1
        first = 0 if start == 0 else start + 1
        chunks.append((first, end, markdown_table([head, *body[start:end]])))
        start = end
    return chunks


_A1 = re.compile(r"^([A-Z]+)(\d+)(?::([A-Z]+)(\d+))?$")


def _col_num(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n


def _col_letters(n: int) -> str:
    out = ""
    while n:
        n, rem = divmod(n - 1, 26)
        out = chr(65 + rem) + out
    return out


def union_cells(a: str, b: str) -> str:
    """The smallest A1 range covering two ranges (``"A1:C4"`` + ``"B9:D12"`` -> ``"A1:D12"``)."""
    ma, mb = _A1.match(a), _A1.match(b)
    if not ma or not mb:
        return a
    cols = [_col_num(x) for x in (ma[1], ma[3] or ma[1], mb[1], mb[3] or mb[1])]
    rows = [int(x) for x in (ma[2], ma[4] or ma[2], mb[2], mb[4] or mb[2])]
    return f"{_col_letters(min(cols))}{min(rows)}:{_col_letters(max(cols))}{max(rows)}"


def merge_locations(a: Location, b: Location) -> Location:
    """The location covering ``a`` then ``b``: page ranges and cell ranges widen; other fields keep
    ``a``'s."""
    if a.sheet is not None and a.sheet == b.sheet and a.cells and b.cells:
        return Location(sheet=a.sheet, cells=union_cells(a.cells, b.cells))
    if a.page is None or b.page is None:
        return a
    last = max(a.page_end or a.page, b.page_end or b.page)
    boxes = (a.boxes or ()) + (b.boxes or ()) if a.boxes or b.boxes else None
    return Location(
        page=a.page,
        page_end=last if last != a.page else None,
        slide=a.slide,
        sheet=a.sheet,
        cells=a.cells,
        line=a.line,
        boxes=boxes,
    )


@dataclass
class PassageBuilder:
    """Packs a run of paragraphs (within one section) into bounded passages.

    ``add`` a paragraph with its location; short paragraphs are joined (one per line) until the bound; a long
    one is split by :func:`split_passages`. ``add_block`` adds a pre-bounded unit (a table chunk) that is
    never split but may share a passage with neighbours. ``flush`` returns the passages and resets; call it at
    every heading so passages never straddle headings."""

    max_tokens: int = 200
    _parts: list[str] = field(default_factory=list)
    _tokens: int = 0
    _loc: Location | None = None
    _out: list[ParsedNode] = field(default_factory=list)

    def _emit(self) -> None:
        if self._parts:
            text = "\n".join(self._parts).strip()
            if text:
                self._out.append(ParsedNode("passage", _title(text), text, self._loc or Location()))
        self._parts, self._tokens, self._loc = [], 0, None

    def _append(self, text: str, tokens: int, loc: Location) -> None:
        over = self._tokens + tokens > self.max_tokens
        if self._parts and not over and self._tokens + tokens > 0.8 * self.max_tokens:  # the joins count too
            over = estimate_tokens("\n".join([*self._parts, text])) > self.max_tokens
        if self._parts and over:
            self._emit()
        self._parts.append(text)
        self._tokens += tokens
        self._loc = loc if self._loc is None else merge_locations(self._loc, loc)

    def add(self, text: str, loc: Location | None = None) -> None:
        text = text.strip()
        if not text:
            return
        loc = loc or Location()
        tokens = estimate_tokens(text)
        if tokens <= self.max_tokens:
            self._append(text, tokens, loc)
            return
        self._emit()
        for piece in split_passages(text, self.max_tokens):
            self._append(piece, estimate_tokens(piece), loc)
        self._emit()

    def add_block(self, text: str, loc: Location | None = None, *, alone: bool = False) -> None:
        """A unit that is not split (a table chunk) while it is within the bound; ``alone`` keeps it in a passage of
        its own. A block over the bound (one spreadsheet cell of megabytes, a header row alone) is split like text
        (:func:`split_passages`): no passage is longer than the embedder reads."""
        text = text.strip()
        if not text:
            return
        if estimate_tokens(text) > max(self.max_tokens, BLOCK_CAP_TOKENS):
            self._emit()
            for piece in split_passages(text, self.max_tokens):
                self._append(piece, estimate_tokens(piece), loc or Location())
                self._emit()
            return
        if alone:
            self._emit()
        self._append(text, estimate_tokens(text), loc or Location())
        if alone:
            self._emit()

    @property
    def pending(self) -> int:
        """Finished passages waiting for :meth:`flush`."""
        return len(self._out)

    def flush(self) -> list[ParsedNode]:
        self._emit()
        out, self._out = self._out, []
        return out


def _title(text: str, limit: int = 80) -> str:
    """A short label for a passage: its first line, cut at a word boundary."""
    first = text.strip().split("\n", 1)[0].strip(" |-#")
    first = " ".join(first.split())
    if len(first) <= limit:
        return first
    cut = first[:limit].rsplit(" ", 1)[0]
    return (cut if len(cut) > limit // 2 else first[:limit]) + "…"


_LEADERS = re.compile(r"(?:[ \t]*[.·…_]){5,}[ \t]*")


def clean_leaders(text: str) -> str:
    """Collapse table-of-contents leader dots (``Intro . . . . . 7`` -> ``Intro … 7``)."""
    return _LEADERS.sub(" … ", text) if "..." in text or ". ." in text or "__" in text else text


def join_lines(lines: Iterable[str]) -> str:
    """Join text lines into one paragraph, undoing end-of-line hyphenation (``exam-`` + ``ple``)."""
    out = ""
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if out.endswith("-") and len(out) > 1 and out[-2].isalpha() and line[:1].islower():
            out = out[:-1] + line
        elif out and (_CJK.match(out[-1]) or _CJK.match(line[0])):
            out += line
        else:
            out = f"{out} {line}" if out else line
    return clean_leaders(out)
