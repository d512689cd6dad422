"""Turn a stream of headings, paragraphs and tables into nested sections with bounded passages.

Every parser feeds an :class:`OutlineBuilder` in reading order. Headings nest by level with a stack, so level
jumps are tolerated (a ``Heading 8`` after an ``H2`` becomes the H2's child; a later ``H3`` is the H2's child
too). Passages never straddle headings: the pending paragraphs are flushed at every heading.

With ``max_passages`` the builder keeps the first that many passages and ignores everything after them; ``full``
tells the parser it may stop reading, and ``warnings`` says what was dropped (the per-document passage cap,
applied while parsing instead of after building everything).
"""

from __future__ import annotations

import re

from shelfwise.ingest.model import Location, ParsedNode, ParsedTable
from shelfwise.ingest.passages import PassageBuilder, estimate_tokens, table_chunks
from shelfwise.ingest.tables import header_title, table_from_text

TABLE_LEVEL = 99  # a table's section sits below every heading level; the next heading closes it


class OutlineBuilder:
    def __init__(self, max_tokens: int = 200, max_passages: int | None = None) -> None:
        self.max_tokens = max_tokens
        self.max_passages = max_passages
        self.passages = 0  # passages placed in the tree so far
        self.truncated = False  # content was dropped at the cap
        self.roots: list[ParsedNode] = []
        self._stack: list[tuple[int, ParsedNode]] = []  # (level, section)
        self._passages = PassageBuilder(max_tokens)
        self._caption = ""
        self.headings = 0

    def _target(self) -> list[ParsedNode]:
        return self._stack[-1][1].children if self._stack else self.roots

    def _flush(self) -> None:
        new = self._passages.flush()
        if self.max_passages is not None and self.passages + len(new) > self.max_passages:
            new = new[: max(0, self.max_passages - self.passages)]
            self.truncated = True
        self.passages += len(new)
        self._target().extend(new)

    @property
    def full(self) -> bool:
        """The passage cap is reached: whatever comes next is dropped (the parser may stop reading)."""
        return self.max_passages is not None and self.passages + self._passages.pending >= self.max_passages

    def _drop(self, text: str) -> bool:
        """True (and note the loss) when the cap is reached and ``text`` would add something."""
        if self.full:
            self.truncated = self.truncated or bool(text.strip())
            return True
        return False

    @property
    def warnings(self) -> list[str]:
        if not self.truncated:
            return []
        return [f"only the first {self.max_passages:,} passages were kept (limit per document); the rest of the "
                "document was not read"]

    def heading(self, title: str, level: int, loc: Location | None = None) -> ParsedNode:
        """Open a section at ``level`` (1 = top). Returns the new section node (past the cap: a detached one)."""
        if self._drop(title):
            return ParsedNode("section", " ".join(title.split()), location=loc or Location())
        self._flush()
        level = max(1, level)
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        node = ParsedNode("section", " ".join(title.split()), location=loc or Location())
        self._target().append(node)
        self._stack.append((level, node))
        self.headings += 1
        return node

    def passage_break(self) -> None:
        """End the current passage here (the next text starts a new one)."""
        self._flush()

    def paragraph(self, text: str, loc: Location | None = None) -> None:
        if not self._drop(text):
            self._passages.add(text, loc)

    def block(self, text: str, loc: Location | None = None, *, alone: bool = False) -> None:
        """A unit that is never split (already bounded), e.g. one chunk of a table."""
        if not self._drop(text):
            self._passages.add_block(text, loc, alone=alone)

    def begin_table(self, table: ParsedTable, title: str, loc: Location | None = None) -> ParsedNode | None:
        """Open the section of a table found as a table (titled by its caption or header); its row chunks follow
        as blocks (each one passage), then :meth:`end_table`. None past the passage cap."""
        if self._drop(title):
            return None
        self._flush()
        node = ParsedNode("section", " ".join(title.split())[:200] or "Table", location=loc or Location(),
                          table=table)
        self._target().append(node)
        self._stack.append((TABLE_LEVEL, node))
        return node

    def end_table(self, node: ParsedNode | None, spans: list[tuple[int, int]]) -> None:
        """Close a table's section. ``spans`` are the data rows [first, last) of each block given since
        :meth:`begin_table`, in order; each row's passage is found from them (every row in the first passage when
        the passages did not come out one per block; none for the rows past the passage cap)."""
        self._flush()
        if node is None or node.table is None:
            return
        while self._stack and self._stack[-1][1] is not node:
            self._stack.pop()
        if self._stack:
            self._stack.pop()
        passages = [c for c in node.children if c.kind == "passage"]
        n = len(node.table.rows)
        row_passage = [-1] * n  # -1: the row has no passage (dropped at the passage cap)
        if len(passages) == len(spans) or (self.truncated and len(passages) < len(spans)):
            for i, (first, last) in enumerate(spans[: len(passages)]):
                for r in range(max(0, first), min(n, last)):
                    row_passage[r] = i
        elif passages:  # a block was split: every row in the first passage
            row_passage = [0] * n
        node.table.row_passage = row_passage

    def table(self, rows: list[list[str]], loc: Location | None = None) -> None:
        """A table as Markdown; a big one is split into row chunks that each repeat the header. A table with a
        header row and data becomes a section of its own holding a :class:`ParsedTable` (``begin_table``).

        Layout tables are read as text instead: a one-column table gives one paragraph per cell, and a row too
        big for one passage gives a paragraph of its cells (one per line), split at sentences."""
        rows = [r for r in rows if any(c.strip() for c in r)]
        if not rows or self._drop("x"):
            return
        width = max(len(r) for r in rows)
        caption: list[str] = []
        while len(rows) > 1 and width > 2 and sum(1 for c in rows[0] if c.strip()) == 1:
            caption.append(next(c for c in rows[0] if c.strip()))  # a title row spanning the table
            rows = rows[1:]
        filled = sum(1 for r in rows for c in r if c.strip())
        if (
            width == 1
            or (len(rows) == 1
            and len(" ".join(rows[0])) > 100)
            or (width > 12 and filled < 0.4 * width * len(rows))
        ):  # layout tables and wide sparse grids read better as lines of text
            if caption:
                self._passages.add("\n".join(caption), loc)
            for row in rows:
                self._passages.add(" | ".join(c for c in row if c.strip()), loc)
            return
        if len(rows) > 1:
            self._found_table(rows, caption, loc)
            return
        self._caption = "\n".join(caption)
        header, run, emitted = rows[0], [rows[0]], False
        for row in rows[1:]:
            if estimate_tokens(" ".join(row)) + len(row) > self.max_tokens:
                if len(run) > 1 or not emitted:
                    self._table_run(run, loc)
                run, emitted = [header], True
                if self._caption:
                    self._passages.add(self._caption, loc)
                    self._caption = ""
                self._passages.add("\n".join(c for c in row if c.strip()), loc)
            else:
                run.append(row)
        if len(run) > 1 or not emitted:
            self._table_run(run, loc)

    def _found_table(self, rows: list[list[str]], caption: list[str], loc: Location | None) -> None:
        """A table with a header row and data rows: its section, then its rows in chunks that repeat the header
        (a row too big for a passage is given as lines of its cells)."""
        width = max(len(r) for r in rows)
        rows = [(r + [""] * width)[:width] for r in rows]
        header, body = rows[0], rows[1:]
        table = table_from_text(header, body)
        title = " ".join(caption) or header_title(header)
        node = self.begin_table(table, title, loc)
        spans: list[tuple[int, int]] = []
        prefix = "\n".join(caption)
        if prefix and estimate_tokens(prefix) > self.max_tokens // 4:
            prefix = ""  # a long title row is the section's title only
        start, run = 0, [header]
        for i, row in enumerate(body):
            if estimate_tokens(" ".join(row)) + len(row) > self.max_tokens:
                self._table_blocks(run, start, spans, prefix, loc)
                prefix = ""
                self._passages.add_block("\n".join(f"{h}: {c}" if h else c for h, c in zip(header, row, strict=True)
                                                   if c.strip()), loc, alone=True)
                spans.append((i, i + 1))
                start, run = i + 1, [header]
            else:
                run.append(row)
        self._table_blocks(run, start, spans, prefix, loc)
        self.end_table(node, spans)

    def _table_blocks(self, run: list[list[str]], start: int, spans: list[tuple[int, int]], prefix: str,
                      loc: Location | None) -> None:
        if len(run) < 2:
            return
        for first, last, md in table_chunks(run, self.max_tokens):
            if prefix:
                md, prefix = f"{prefix}\n{md}", ""
            self._passages.add_block(md, loc, alone=True)
            spans.append((start + max(0, first - 1), start + last))

    def _table_run(self, rows: list[list[str]], loc: Location | None) -> None:
        if len(rows) == 1 and estimate_tokens(" ".join(rows[0])) + len(rows[0]) > self.max_tokens:
            cells = [self._caption] if self._caption else []
            self._caption = ""
            self._passages.add("\n".join(cells + [c for c in rows[0] if c.strip()]), loc)
            return
        if self._caption and estimate_tokens(self._caption) > self.max_tokens // 4:
            self._passages.add(self._caption, loc)  # a long title row: text of its own
            self._caption = ""
        for _first, _last, md in table_chunks(rows, self.max_tokens):
            if self._caption:  # a short title row travels with the table's first chunk
                md, self._caption = f"{self._caption}\n{md}", ""
            self._passages.add_block(md, loc)

    def finish(self) -> list[ParsedNode]:
        self._flush()
        self._stack.clear()
        for node in self.roots:
            _span_pages(node)
        return self.roots


def _span_pages(node: ParsedNode) -> tuple[int | None, int | None]:
    """Widen each section's page range to cover its descendants; returns (first, last) page."""
    first = node.location.page
    last = node.location.page_end or node.location.page
    for child in node.children:
        c_first, c_last = _span_pages(child)
        if c_first is not None:
            first = c_first if first is None else min(first, c_first)
        if c_last is not None:
            last = c_last if last is None else max(last, c_last)
    if node.kind == "section" and first is not None:
        loc = node.location
        node.location = Location(
            page=first,
            page_end=last if last != first else None,
            slide=loc.slide,
            sheet=loc.sheet,
            cells=loc.cells,
            line=loc.line,
        )
    return first, last


def sensible_title(title: str | None) -> str:
    """``title`` cleaned, or "" when it is not a usable document title (empty, a file name, "Untitled")."""
    title = " ".join((title or "").split())
    if len(title) < 3 or not any(ch.isalpha() for ch in title):
        return ""
    if title.lower() in (
        "untitled",
        "document",
        "word document",
        "title",
        "slide 1",
        "powerpoint presentation",
        "presentation",
        "workbook",
        "sheet1",
        "book1",
    ):
        return ""
    if re.search(r"\.(docx?|pdf|pptx?|xlsx?|dotx?)$", title, re.IGNORECASE):
        return ""
    if re.fullmatch(
        r"(slide|folie|diapositiva|diapositive|dia|sheet|blatt|tabelle)\s*\d+", title, re.IGNORECASE
    ):
        return ""
    return title
