"""Table questions answered exactly from the stored tables (issue 49; docs/tables.md): the tables a question may be
about (the walk's, its scope's), each read whole or column by column, tried from the surest matching to the
loosest (:func:`answer_from_tables`): the question's words, then a part of a cell, then the encoder for column names
and label cells. Each try plans the operation over one table (:mod:`shelfwise.core.answers.table_plan`) and
computes it (:mod:`shelfwise.core.answers.table_compute`); the result is a :class:`ShortAnswer` whose cells are
cited, put on the answer by :func:`attach`. No model writes any of it; a question no table answers gives None, and
the answer stays the walk's sentence.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence

from shelfwise.core.answers.table_compute import Plan, compute, label_column
from shelfwise.core.answers.table_intent import TableIntent, read_intent, stem, words_of
from shelfwise.core.answers.table_match import HeaderEncoder, catch_all_row, col_scores, key_cells
from shelfwise.core.answers.table_plan import plan_question
from shelfwise.core.answers.table_rows import read_cells
from shelfwise.core.answers.typed_spans import WEEKDAY
from shelfwise.core.answers.types import Answer, Citation, ShortAnswer
from shelfwise.core.models.backend import Embedder
from shelfwise.core.navigation.scope import ResolvedScope
from shelfwise.core.navigation.trace import Hit
from shelfwise.core.store.db import Store
from shelfwise.core.store.tables import (
    StoredTable,
    TableData,
    read_table,
    tables_of_documents,
    tables_of_passages,
)

# a table answer's ShortAnswer.score: how sure its matching was (the question's words name whole column names and
# cells; a part of a cell; the encoder's column names; the encoder's label cell)
LEVEL_SCORE = (1.0, 0.6, 0.4, 0.3)
SURE = 1.0  # a table answer this sure is shown where the walk found nothing (core/answers/ask.py)
MAX_CELLS = 400_000  # a bigger table is not read whole for a question
MAX_TABLES = 8  # tables tried for one question
WORDS_READ = 20_000  # a table of more cells has its cells' words looked up by SQLite, not read (table_words)
MAX_READ_COLUMNS = 30  # a row wider than this is not read out in words (its cells are cited instead)
# how alike (cosine) a column name and a question's word must be for the encoder to count the column named, and by
# how much more than the next column's name, by encoder family; and how alike a phrase and a label cell must be
# (the same margin). Chosen on WikiTableQuestions training questions by benchmarks/research/table_header_tune.py
# (docs/eval/tables.md: EmbeddingGemma's the stricter of two bars that answered as many right)
HEADER_MATCH = {"gemma": (0.6, 0.1), "minilm": (0.5, 0.05)}
CELL_MATCH = {"gemma": 0.7, "minilm": 0.7}


def answer_from_tables(tables: Sequence[tuple[StoredTable, TableData | None]], question: str,
                       encoder: HeaderEncoder | None = None, focus: set[int] | None = None,
                       first_level: int = 0, first_text: str = "") -> ShortAnswer | None:
    """The first of ``tables`` (in the order given: the walk's) that answers ``question``, as a short answer. The
    surest matching is tried on every table before a looser one (:func:`_plan_at`): the column names and whole
    cells named by their words; then a phrase that is a part of cells; then (an ``encoder`` given) the column
    names by the encoder; then a cell of the label column by the encoder. The looser matchings are tried only on
    the tables in ``focus`` (ids: the table the walk's first passage is a row of), or on the only table there is:
    on another table of the document they would find words of notes and titles the question does not ask about.
    ``first_level``: the levels before it are known to find nothing (a benchmark choosing the encoder's bars).
    ``first_text``: the walk's first passage, when it is not a row of a table: a table is then not asked when it
    is not what the question is about (:func:`off_table`)."""
    intent = read_intent(question)
    ready = [data for _table, data in tables if data is not None]
    focus = focus if focus is not None else ({ready[0].table.id} if len(ready) == 1 else set())
    ready = [d for d in ready if names_all_there(intent, d) and not off_table(intent, d, first_text)]
    loose = loose_tables(intent, ready, focus)
    for level in range(first_level, 4 if encoder is not None else 2):
        for data in ready if level == 0 else loose:
            plan = _plan_at(level, intent, data, encoder)
            short = compute(plan, data) if plan is not None else None
            if short is not None and fits(question, short.text) and not _echoes(question, short):
                short.sentence = rows_read(data, short)
                short.score = LEVEL_SCORE[level]
                return short
    return None


_ASKS_YEAR = re.compile(r"^(?:in |during |for )?(?:what|which) (?:year|season)s?\b")
_ASKS_NUMBER = re.compile(r"^(?:how (?:many|much)|what (?:is|was|are|were) the (?:total )?number of)\b")
_ASKS_WHEN = re.compile(r"^(?:when|(?:on |in )?(?:what|which) (?:date|day)\b)")
NUMBER_WORDS_SAID = re.compile(r"\b(one|two|three|four|five|six|seven|eight|nine|ten|none|zero)\b")
_ASKS_WHO = re.compile(r"^who\b(?! (?:is|was) (?:the )?(?:number|no\b|#))")
_YEARISH = re.compile(r"\b(1[0-9]\d\d|20\d\d)\b|\b\d\d(?:\d\d)?[-–/]\d\d")


def _echoes(question: str, short: ShortAnswer) -> bool:
    """Whether a lookup's value is words the question itself says ("who was the winning driver after nigel
    mansell": not "Nigel Mansell", the key's own cell): no answer to it."""
    value = short.text.strip().strip('"“”').lower()
    return short.operation == "lookup" and bool(value) and bool(
        re.search(rf"(?<!\w){re.escape(value)}(?!\w)", " ".join(question.lower().split())))


def fits(question: str, value: str) -> bool:
    """Whether a table's value is of the kind the question asks for: a number for "how many" / "how much", a date,
    a year or a weekday for "when" / "on what date", a year for "what year" / "in which season", and not a bare
    number or a date for "who" ("in which year were the least jamaicans granted citizenship" is not "732")."""
    text = " ".join(question.lower().split())
    if _ASKS_WHEN.match(text) and re.fullmatch(WEEKDAY, value.strip().lower()):
        return True  # "what day of the week is Portugal Day?": Wednesday
    if _ASKS_NUMBER.match(text) or _ASKS_WHEN.match(text):
        return bool(re.search(r"\d", value) or NUMBER_WORDS_SAID.search(value.lower()))
    if _ASKS_YEAR.match(text) and not _YEARISH.search(value):
        return False
    return not (_ASKS_WHO.match(text) and re.fullmatch(r"[\d\s.,:/()–-]+", value) is not None)


ROW_OPERATIONS = frozenset({"argmax", "argmin", "choice", "previous", "next", "first", "last", "lookup"})
_NAMES_A_ROW = re.compile(r"^(?:which|who|what)\s+(?!(?:is|was|are|were|'s|number|amount|percentage|percent|total|sum|"
                          r"average|size|length|height|weight|time|date|day|month|year|score|population|price|cost)\b)")


# "what is the company with the highest revenue", "what was the name of the biggest stadium": a row named too
_THE_ROW = re.compile(r"^(?:what|which) (?:is|was|are|were) the (?:name of\b|(?!(?:number|amount|percentage|percent|"
                      r"total|sum|average|size|length|height|weight|time|date|day|month|year|score|population|price|"
                      r"cost)\b)\w+ (?:with|that|who|whose|which)\b)")
_THE_ONLY = re.compile(r"^(?:which|what) (?:is|was|are|were) (?:the only|the one|one) (?!(?:number|amount|total|"
                       r"percentage|time|date|year|price|cost)\b)\w+")


def names_a_row(question: str, short: ShortAnswer) -> bool:
    """Whether the question asks which row ("which stadium has the highest capacity", "what country won the least
    amount of gold medals", "which is the only canal with a length of 12 miles", "what is the company with the
    highest revenue", "what is the name of the biggest stadium") and the table's value is the name
    of the row its operation chose: an amount the question names ("capacity", "amount", "length") does not make it
    ask for a number."""
    text = " ".join(question.lower().split())
    return short.operation in ROW_OPERATIONS and bool(_NAMES_A_ROW.match(text) or _THE_ONLY.match(text)
                                                      or _THE_ROW.match(text))


def names_all_there(intent: TableIntent, data: TableData) -> bool:
    """Whether the table has every name the question writes with a capital (a word of its title, sheet, column
    names or cells): "How many matches were played in Belgrade against Zorya?" is not answered by the matches in
    Belgrade of a table without Zorya."""
    names = {stem(w) for w in intent.names if not w.isdigit()}
    missing = names - table_words(data, names) if names else set()
    # one name missing from a table with a row for all the others ("All other cities"): that row answers for it
    return not missing or (len(missing) == 1 and data.whole and catch_all_row(data) is not None)


def asked_words(intent: TableIntent) -> set[str]:
    """The question's words (light stems) that say what it is about: not numbers, not the operation's words."""
    return {stem(w) for w in intent.words if not w.isdigit()} - {stem(w) for w in intent.op_words()}


def off_table(intent: TableIntent, data: TableData, text: str) -> bool:
    """Whether a table the walk did not lead to is not what the question asks about, the walk's first passage
    being prose (``text``): that passage holds more of the question's words than the table does (in its title,
    sheet, column names or cells; the operation's words, "how many", "average", not counted), or the question
    counts a thing the table does not name (neither of the two words after "how many" / "wie viele" / "combien").
    "How many parking spaces does the Rotterdam office have?" is answered by "The Rotterdam office has 12 parking
    spaces ...", not by a count of the holiday table's rows whose office is Rotterdam."""
    if not text:
        return False
    said = asked_words(intent)
    held = table_words(data, said)
    if len(said & {stem(w) for w in words_of(text)}) > len(held):
        return True
    if intent.counted and intent.counted in intent.words:
        at = intent.words.index(intent.counted)
        counted = {stem(w) for w in intent.words[at:at + 2]}
        return not counted & held
    return False


def loose_tables(intent: TableIntent, ready: Sequence[TableData], focus: set[int]) -> list[TableData]:
    """The tables the looser matchings may answer from: the focus tables (none without one), unless another table
    has more of the question's words (in its title, sheet, column names or cells: :func:`table_words`); then the
    tables that have the most. A loose match (a part of a cell, the encoder's) on the walk's first table would
    otherwise answer a question about another workbook ("how many offices are in Vienna" counted from a fixtures
    sheet's "Vienna, Austria" when the question's offices are another table's)."""
    focused = [d for d in ready if d.table.id in focus]
    if len(ready) < 2 or not focused:
        return focused
    said = asked_words(intent)
    cover = {d.table.id: len(said & table_words(d, said)) for d in ready}
    best = max(cover.values())
    if any(cover[d.table.id] == best for d in focused):
        return [d for d in focused if cover[d.table.id] == best]
    return [d for d in ready if cover[d.table.id] == best]


def table_words(data: TableData, wanted: set[str]) -> set[str]:
    """The words (light stems) of ``wanted`` that ``data`` has in its title, sheet, column names or cells (a big
    table's cells: those whose whole text is one of the words, found by SQLite)."""
    t = data.table
    have = {stem(w) for w in words_of(f"{t.title} {t.sheet} {' '.join(t.names)}")}
    if data.whole and t.n_rows * len(t.names) <= WORDS_READ:
        for c in range(len(t.names)):
            if t.kinds[c] == "text":
                have |= {stem(w) for v in set(data.text(c)) for w in words_of(v)}
    else:
        texts = [c for c, kind in enumerate(t.kinds) if kind == "text"]
        have |= {stem(w) for _c, _r, v in data.find_cells(wanted - have, texts) for w in words_of(v)}
    return have & wanted


def _plan_at(level: int, intent: TableIntent, data: TableData, encoder: HeaderEncoder | None) -> Plan | None:
    """The plan at one level of :func:`answer_from_tables`; None when the level finds nothing new."""
    scores = col_scores(intent, data.table.names)
    if level < 2:
        return plan_question(intent, data, scores, parts=level > 0)
    assert encoder is not None
    raised = encoder.scores(intent, data.table.names, scores)
    if level == 2:
        # column names by the encoder with whole cells only: a name and a part of a cell both loose is a guess
        return plan_question(intent, data, raised) if raised != scores else None
    if key_cells(intent, data):  # a cell named by its words already: the encoder looks for no other
        return None
    col = label_column(data)
    names = data.table.names
    skip = {stem(w) for c in range(len(names)) if raised[c] >= 0.5 for w in words_of(names[c])}
    key = encoder.cell_key(intent, data, col, skip | {stem(w) for w in intent.op_words()})
    return plan_question(intent, data, raised, parts=True, given_key=(col, key)) if key is not None else None


_ENCODERS: dict[str, HeaderEncoder] = {}


def header_encoder(embedder: Embedder) -> HeaderEncoder:
    """The process's :class:`HeaderEncoder` for ``embedder`` (its vectors kept across questions)."""
    key = embedder.model_id
    if key not in _ENCODERS:
        family = embedder.profile.name if embedder.profile is not None else ""
        threshold, margin = next((v for k, v in HEADER_MATCH.items() if k in family), max(HEADER_MATCH.values()))
        cells = next((v for k, v in CELL_MATCH.items() if k in family), max(CELL_MATCH.values()))
        _ENCODERS.clear()
        _ENCODERS[key] = HeaderEncoder(embedder, threshold, margin, cells)
    _ENCODERS[key].embedder = embedder  # the same model opened again: its kept vectors still hold
    return _ENCODERS[key]


ROWS_READ = 3  # a value read from this many rows or fewer is shown with those rows read out; more: its explanation


def rows_read(data: TableData, short: ShortAnswer) -> str:
    """The rows a value was read from, each read with its column names ("L5, Lead: ...; maximum (EUR/year)
    102000"), when there are at most :data:`ROWS_READ` of them and the table is narrow enough to read across;
    else ""."""
    rows = list(dict.fromkeys(c.row for c in short.cells))
    names = data.table.names
    if not rows or len(rows) > ROWS_READ or len(names) > MAX_READ_COLUMNS:
        return ""
    said = []
    for r in rows:
        cells = data.row_texts(r)
        said.append(read_cells(list(names), cells) or "| " + " | ".join(cells) + " |")  # as written, like read_row
    return "; ".join(said)


def load_tables(conn: sqlite3.Connection, tables: Sequence[StoredTable]) -> list[tuple[StoredTable, TableData | None]]:
    """Each table ready to be read: a small one read whole, a bigger one (over ``MAX_CELLS``) column by column as
    the question needs them, its cells found by SQLite."""
    return [(t, read_table(conn, t, whole=t.n_rows * max(1, len(t.columns)) <= MAX_CELLS)) for t in tables]


def candidate_tables(store: Store, hits: Sequence[Hit], scope: ResolvedScope | None,
                     limit: int = MAX_TABLES) -> list[StoredTable]:
    """The tables a question may be about, best first: those whose rows the walk's passages hold, then the other
    tables of those passages' documents, then (a scope of a few documents) the scope's tables."""
    conn = store.conn
    out = tables_of_passages(conn, [h.node_id for h in hits])
    docs = list(dict.fromkeys(h.document_id for h in hits[:3]))
    if scope is not None and scope.restricted and len(scope.document_ids) <= 5:
        docs += sorted(scope.document_ids)
    seen = {t.id for t in out}
    for t in tables_of_documents(conn, docs):
        if t.id not in seen:
            seen.add(t.id)
            out.append(t)
    return out[:limit]


# a name defined in a passage's prose by the one in brackets after it: "The daily allowance (per diem) covers ..."
_DEFINED = re.compile(r"([^\W\d_][\w'’ -]{2,60}?)\s*\(([^()\d:;,.]{2,30})\)")


def with_defined_names(question: str, texts: Iterable[str], names: Iterable[str]) -> str:
    """``question`` with a column's name put in place of another name the passages define it by: "The daily
    allowance (per diem) covers meals ..." makes "What is the per diem in London?" ask for the column "Daily
    allowance". Only a name that a column's name ends the defining words with, and only where the question does
    not name that column already."""
    columns = sorted({n.lower() for n in names if len(n) > 2}, key=len, reverse=True)
    for text in texts:
        for m in _DEFINED.finditer(text):
            before, alias = m.group(1).lower(), " ".join(m.group(2).split()).lower()
            column = next((c for c in columns if before.endswith(c) and c != alias), None)
            said = re.compile(rf"(?<!\w){re.escape(alias)}(?!\w)", re.I)
            if column and column not in question.lower() and said.search(question):
                question = said.sub(column, question)
    return question


def table_answer(store: Store, question: str, hits: Sequence[Hit], scope: ResolvedScope | None,
                 embedder: Embedder | None = None) -> ShortAnswer | None:
    """The short answer computed from the tables of :func:`candidate_tables` (column names matched by the
    ``embedder`` too where given), or None."""
    tables = candidate_tables(store, hits, scope)
    if not tables:
        return None
    encoder = header_encoder(embedder) if embedder is not None else None
    if encoder is not None:
        encoder.store = store  # a table's column names and label cells kept in this library's vector cache
    # the table each of the first passages is a row of (none: prose)
    rows_of = [tables_of_passages(store.conn, [h.node_id]) for h in hits[:5]]
    focus = {t.id for t in rows_of[0]} if rows_of else set()
    first_text = hits[0].text if hits and not focus else ""  # the walk's first passage, when it is prose
    if len(tables) == 1:
        focus.add(tables[0].id)
    prose = [h.text for h, rows in zip(hits, rows_of, strict=False) if not rows]
    question = with_defined_names(question, prose, (n for t in tables for n in t.names))
    return answer_from_tables(load_tables(store.conn, tables), question, encoder, focus, first_text=first_text)


def attach(answer: Answer, short: ShortAnswer, store: Store) -> None:
    """Put a table's short answer on ``answer`` (it wins over a span): the rows it used join the citations (each
    cell's ``number`` is its row passage's [n]); an answer the walk did not find is answered by the explanation."""
    from shelfwise.core.navigation.lookup import LibraryLookup

    lookup = LibraryLookup(store)
    by_node = {c.hit.node_id: c.number for c in answer.citations}
    for cell in short.cells:
        node = store.conn.execute("SELECT node_id FROM table_rows WHERE table_id = ? AND row = ?",
                                  (cell.table_id, cell.row)).fetchone()
        if node is None or node[0] is None:
            continue
        nid = int(node[0])
        if nid not in by_node:
            hit = lookup.hit_for_node(nid)
            if hit is None:
                continue
            by_node[nid] = max([c.number for c in answer.citations], default=0) + 1
            answer.citations.append(Citation(by_node[nid], hit))
        cell.number = by_node[nid]
    # only the passages the value was read from are its sources, numbered in the order the cells use them
    used = list(dict.fromkeys(c.number for c in short.cells if c.number))
    if used:
        renumber = {old: new for new, old in enumerate(used, 1)}
        kept = {c.number: c.hit for c in answer.citations if c.number in renumber}
        answer.citations = [Citation(renumber[n], kept[n]) for n in used]
        for cell in short.cells:
            cell.number = renumber.get(cell.number, 0)
    numbers = sorted({c.number for c in short.cells if c.number})
    short.number = numbers[0] if len(numbers) == 1 else 0
    answer.short = short
    # what is shown beneath the value is what it was read from (the rows, or the operation over them), not the
    # walk's first sentence, which may be another row of the same table
    cites = "".join(f"[{n}]" for n in numbers)
    answer.text = f"{short.sentence or short.explanation} {cites}".strip()
    answer.sentences = []
    answer.found = True
