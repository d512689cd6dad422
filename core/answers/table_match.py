"""A question's words matched to one stored table (issue 49; docs/tables.md): how well each column's name is named
(exact words and light stems; the encoder's vectors of the question's words and the names when the words give no
plan), the cells whose whole text the question names (keys: "L5", "lisbon"), the cells a question's phrase is a
part of ("belgrade" in "Belgrade, Serbia"; "ethiopian" for "Ethiopia"), and whether the question negates a key
("other than Lisbon", "not for the FIFA World Cup"); :class:`TableMatch` holds a question matched to one table.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from shelfwise.core.answers.facts import dates_in
from shelfwise.core.answers.table_compute import Plan
from shelfwise.core.answers.table_intent import STOP, TableIntent, stem, words_of
from shelfwise.core.models.backend import Embedder, text_sha
from shelfwise.core.store.db import Store
from shelfwise.core.store.tables import TableData

_TOKEN = re.compile(r"[\w$€£%]+", re.UNICODE)
_NEGATION = re.compile(
    r"\b(not|n't|other than|besides|beside|except|excluding|apart from|aside from|nicht|außer|ausser|"
    r"andere[rsn]? als|sauf|pas|hors|autres? que)\b"
)
# a row named and then set aside: "clivio piccione and what other driver", "Lyon und welcher andere Gegner"
_AND_OTHER = re.compile(r"^\W*(?:and|und|et) (?:what|which|welche[rsn]?|quel(?:le)?s?) "
                        r"(?:other|another|andere\w*|autres?)\b")
_RATE = frozenset({"per", "each", "every", "pro", "je", "par", "chaque"})
NEGATION_WINDOW = 4  # a negation word this many words or fewer before a key negates it
PART_MAX_WORDS = 3  # the longest phrase looked for inside cells
PART_SHARE = 3  # a phrase must be more than 1/PART_SHARE of a cell's words to filter by a part of it
PART_CELL_WORDS = 6  # a cell of more words (a note, a sentence) is not looked into
CELL_PHRASE_WORDS = 2  # the longest phrase the encoder compares with label cells


_SUBJECT_VERB = re.compile(  # the verb of "which company provides ...", "who directed ..." (not "what is ...")
    r"^(?:who|(?:which|what) (?!(?:is|are|was|were|do|does|did|has|have|had|can|will)\b)\w+)\s+(\w+)")


def agent_nouns(intent: TableIntent) -> set[str]:
    """The names of the one who does what the question's verb says, when the question asks who does it: "which
    company provides ..." -> provider, "who directed ..." -> director (regular forms only: a base with -r, -er
    or -or). Only that verb's: "what is provided ..." asks for the thing, not the provider."""
    m = _SUBJECT_VERB.match(intent.text)
    if m is None or len(m.group(1)) < 5 or re.search(r"\bby\b", intent.text[m.end():]):
        return set()  # "what movie directed by X ...": the thing done, not the doer
    verb = m.group(1)
    bases = {verb[:-1]} if verb.endswith("s") and not verb.endswith("ss") else set()
    if verb.endswith("ed"):
        bases |= {verb[:-1], verb[:-2]}  # "provided" -> provide, "directed" -> direct
    return {b + end for b in bases if len(b) >= 4 for end in ("r", "er", "or")}


def col_scores(intent: TableIntent, names: Sequence[str]) -> list[float]:
    """How well each column's name is named by the question: the share of its words the question has (light
    stems; a doer's name counts as said by its verb, :func:`agent_nouns`), 1.0 when the whole name is in the
    question."""
    qstems = {stem(w) for w in intent.words} | agent_nouns(intent)
    out = []
    for name in names:
        ws = [stem(w) for w in words_of(re.sub(r"\(.*?\)", " ", name))] or [stem(w) for w in words_of(name)]
        if not ws:
            out.append(0.0)
            continue
        score = sum(1 for w in ws if w in qstems) / len(ws)
        if len(name) > 2 and re.search(rf"\b{re.escape(name.lower())}\b", intent.text):
            score = 1.0
        out.append(score)
    return out


def negated(text: str, start: int, end: int = -1) -> bool:
    """Whether a negation word ("not", "other than", "except") stands at most :data:`NEGATION_WINDOW` words
    before position ``start`` of ``text``, or the phrase ending at ``end`` is followed by "and what other"."""
    before = text[:start].split()[-NEGATION_WINDOW:]
    return bool(_NEGATION.search(" ".join(before))) or (end >= 0 and bool(_AND_OTHER.match(text[end:])))


@dataclass
class Key:
    """The rows of one column that the question names by their cells: ``rows``; ``phrase`` the question's words
    that named them; ``exact`` a whole cell named (else a part of the cells); ``negated`` "other than ...";
    ``start`` where the phrase stands in the question."""

    rows: set[int]
    phrase: str
    exact: bool = True
    negated: bool = False
    start: int = 0
    share: float = 1.0  # the least share of a named cell's words the phrase is (1.0: whole cells)


def key_cells(intent: TableIntent, data: TableData) -> dict[int, Key]:
    """Cells whose whole text the question names (as words): column -> :class:`Key`. A cell that is only a stop
    word, or a number the question compares with, is not a key."""
    text = intent.text
    compared = " ".join(c.words for c in intent.comparisons)
    found: dict[int, Key] = {}
    if not data.whole:  # a big table: the cells equal to a phrase of the question, found by SQLite
        tokens = [t.strip("?!.,;:\"'()") for t in text.split()]
        phrases = {
            " ".join(tokens[i:j])
            for i in range(len(tokens))
            for j in range(i + 1, min(len(tokens), i + 8) + 1)
        }
        cells = data.find_cells(
            {p for p in phrases if p and words_of(p) and p not in compared},
            [c for c, kind in enumerate(data.table.kinds) if kind == "text"],
        )
    else:
        cells = [(c, r, cell) for c in range(len(data.table.columns)) for r, cell in enumerate(data.text(c))]
    plural = (
        " " + " ".join(stem(w) for w in _TOKEN.findall(text)) + " "
    )  # the question with plurals taken off
    named: list[tuple[int, int, str, list[tuple[int, int]]]] = []  # column, row, cell, where the question names it
    for c, r, cell in cells:
        v = cell.lower().strip()
        if not v or not words_of(v) or len(v) > 80 or v in compared:
            continue
        spans = [(m.start(), m.end()) for m in re.finditer(rf"(?<![\w]){re.escape(v)}(?![\w])", text)]
        if not spans and data.whole and len(v) > 3:  # "democratic gains" names the cells "Democratic gain"
            singular = " ".join(stem(w) for w in _TOKEN.findall(v))
            at = re.search(rf"(?<![\w]){re.escape(singular.split()[0][:4])}", text) if singular else None
            if singular and f" {singular} " in plural and at is not None:  # where its first word stands
                spans = [(at.start(), at.start() + len(singular))]
        if spans:
            named.append((c, r, v, spans))
    if data.whole:
        named += _dates_named(intent.text, data)
    everywhere = [span for *_, spans in named for span in spans]
    for c, r, v, spans in named:
        if all(_inside(span, everywhere) for span in spans):
            continue  # "professional" said only inside "senior professional", another cell the question names
        start = spans[0][0]
        key = found.setdefault(c, Key(set(), v, start=start))
        key.rows.add(r)
        if len(v) > len(key.phrase):
            key.phrase, key.start = v, start
    ends = sorted(k.start + len(k.phrase) for k in found.values())
    for key in found.values():  # a negation covers the keys up to the next key: "außer Lyon in Belgrade"
        since = max((e for e in ends if e <= key.start), default=0)
        key.negated = negated(text[since:], key.start - since, key.start - since + len(key.phrase))
    if not found and data.whole and intent.names:
        found.update(_catch_all(intent, data))
    return found


_BOUND_BEFORE = re.compile(r"\b(before|after|since|until|till|by|from|to|between|and|prior to|vor|nach|seit|bis|"
                           r"avant|après|depuis|jusqu'au|jusqu)\s*$")


def _dates_named(text: str, data: TableData) -> list[tuple[int, int, str, list[tuple[int, int]]]]:
    """The cells of date columns holding a date the question writes another way ("12 June" names 2026-06-12; a
    year it writes must be the cell's), not one it gives as a bound ("after 12 June"): (column, row, cell, where
    the question writes it)."""
    asked = []
    for written, readings in dates_in(text):
        at = text.find(written)
        if at >= 0 and not _BOUND_BEFORE.search(text[:at]):
            asked.append((at, at + len(written), readings))
    out: list[tuple[int, int, str, list[tuple[int, int]]]] = []
    for c, kind in enumerate(data.table.kinds if asked else ()):
        if kind != "date":
            continue
        for r, (cell, number) in enumerate(zip(data.text(c), data.number(c), strict=True)):
            if number is None or not data.is_data(r):
                continue
            day = day_of(number)  # a date cell's number is its day number, as stored
            if day is None:
                continue
            out += [(c, r, cell.lower().strip(), [(s, e)]) for s, e, readings in asked
                    if any(d == day.day and mo == day.month and y in (None, day.year) for d, mo, y in readings)]
    return out


def day_of(number: float | None) -> dt.date | None:
    """The date of a date cell's stored day number (``date.toordinal``); None for no number or one that is no day
    (a cell of a date column that is not a date: "(1914)" is stored as -1914)."""
    if number is None or not 1 <= number <= dt.date.max.toordinal():
        return None
    return dt.date.fromordinal(int(number))


def _inside(span: tuple[int, int], spans: Sequence[tuple[int, int]]) -> bool:
    """Whether ``span`` of the question lies within a longer one of ``spans``."""
    return any(s <= span[0] and span[1] <= e and e - s > span[1] - span[0] for s, e in spans)


_CATCH_ALL = re.compile(r"^(all |any )?(other|others|the rest|rest of|remaining|elsewhere|everywhere else|alle "
                        r"anderen|andere|übrige|sonstige|autres|toutes les autres|tous les autres)\b")


def catch_all_row(data: TableData) -> tuple[int, int] | None:
    """(column, row) of the one data cell of a text column that stands for every one not listed ("All other
    cities", "Sonstige"), or None."""
    for c, kind in enumerate(data.table.kinds):
        rows = [r for r, t in enumerate(data.text(c)) if kind == "text" and _CATCH_ALL.match(t.lower().strip())]
        if len(rows) == 1 and data.is_data(rows[0]):
            return c, rows[0]
    return None


def _catch_all(intent: TableIntent, data: TableData) -> dict[int, Key]:
    """The row that stands for every one not listed (:func:`catch_all_row`) as the key of a question naming one
    the table does not list by a capitalised name ("the hotel cap in Paris"): the name in no cell and no column
    name of the table."""
    cells = {w for c in range(len(data.table.names)) for t in data.text(c) for w in _TOKEN.findall(t.lower())}
    cells |= {w for n in data.table.names for w in _TOKEN.findall(n.lower())}
    unread = [n for n in intent.names if n not in cells]
    found = catch_all_row(data) if unread else None
    if found is None:
        return {}
    for name in unread:  # "Singapour" is Singapore's row, not "All other cities"
        near = _spelled_near(name, data)
        if near is not None:
            return {near[0]: Key({near[1]}, name, start=max(0, intent.text.find(name)))}
    return {found[0]: Key({found[1]}, unread[0], start=max(0, intent.text.find(unread[0])))}


def _spelled_near(name: str, data: TableData) -> tuple[int, int] | None:
    """(column, row) of a one-word cell of a text column that spells ``name`` nearly ("singapour" and "Singapore",
    "lisboa" and "Lisbon": the same first four letters, at least 0.8 of their letters alike, as a name is written
    in another language), where all such cells are in one row; else None."""
    hits = []
    for c, kind in enumerate(data.table.kinds):
        if kind != "text":
            continue
        for r, cell in enumerate(data.text(c)):
            v = cell.lower().strip()
            if (len(v) >= 5 and v.isalpha() and v[:4] == name[:4] and data.is_data(r)
                    and difflib.SequenceMatcher(None, v, name).ratio() >= 0.8):
                hits.append((c, r))
    return hits[0] if len({r for _, r in hits}) == 1 else None  # one row (its city and its country alike)


def _same_word(q: str, w: str) -> bool:
    """A question's word and a cell's word are the same word: equal, the same without a plural, or one the other
    with a short ending ("ethiopian" / "ethiopia", "korean" / "korea")."""
    if q == w or stem(q) == stem(w):
        return True
    short, long_ = sorted((q, w), key=len)
    return len(short) >= 5 and long_.startswith(short) and len(long_) - len(short) <= 3


def _phrases(intent: TableIntent, skip: set[str]) -> list[tuple[str, int]]:
    """The question's phrases of up to :data:`PART_MAX_WORDS` words that may name a part of a cell, longest
    first, each with where it stands: no stop word at either end, no word of ``skip`` (column names, operation
    words), not after "per" / "each" (a rate), a one-word phrase of at least 4 letters or a number."""
    spans = [(m.group(0), m.start()) for m in _TOKEN.finditer(intent.text)]
    out = []
    for n in range(PART_MAX_WORDS, 0, -1):
        for i in range(len(spans) - n + 1):
            words = [w for w, _ in spans[i : i + n]]
            if words[0] in STOP or words[-1] in STOP or any(stem(w) in skip or w in skip for w in words):
                continue
            if n == 1 and len(words[0]) < 4 and not words[0].isdigit():
                continue
            if i > 0 and spans[i - 1][0] in _RATE:  # "per year": a rate, not a filter
                continue
            out.append((" ".join(words), spans[i][1]))
    return out


def _cell_words(text: str) -> list[str]:
    words = _TOKEN.findall(text.lower())
    return words if len(words) <= PART_CELL_WORDS else []


def part_key(intent: TableIntent, data: TableData, skip: set[str], taken: set[int]) -> tuple[int, Key] | None:
    """The question's longest phrase that is a part of some (not all) filled cells of at most
    :data:`PART_CELL_WORDS` words of one text column that holds no whole-cell key (``taken``): (that column, the
    rows whose cell holds it: "belgrade" in "Belgrade, Serbia"); None when there is none."""
    if not data.whole:
        return None
    cols = [c for c, kind in enumerate(data.table.kinds) if kind == "text" and c not in taken]
    cell_words = {c: [_cell_words(t) for t in data.text(c)] for c in cols}
    for phrase, start in _phrases(intent, skip):
        want = phrase.split()
        for c in cols:
            rows = {r for r, ws in enumerate(cell_words[c]) if _holds(ws, want)}
            filled = sum(1 for ws in cell_words[c] if ws)
            if rows and len(rows) < filled:
                share = min(len(want) / max(1, len(_content(cell_words[c][r]))) for r in rows)
                key = Key(rows, phrase, exact=False, start=start, share=min(1.0, share))
                key.negated = negated(intent.text, start, start + len(phrase))
                return c, key
    return None


def _content(words: list[str]) -> list[str]:
    """A cell's words that say what it is: no stop words, no bare numbers."""
    return [w for w in words if w not in STOP and not w.isdigit()]


def _holds(cell: list[str], want: list[str]) -> bool:
    """Whether the cell's words hold the phrase's, and the phrase is more than a third of the cell's words (stop
    words and numbers not counted): "belgrade" in "Belgrade, Serbia", not "working" in "Everyone working in the
    office"."""
    n = len(want)
    if n * PART_SHARE <= len(_content(cell)):
        return False
    return any(
        all(_same_word(q, w) for q, w in zip(want, cell[i : i + n], strict=True))
        for i in range(len(cell) - n + 1)
    )


class HeaderEncoder:
    """Column names matched to the question's words by the encoder's vectors: each of the question's words that
    no column name has names the column whose name is most alike (cosine) when it is at least :attr:`threshold`
    alike and :attr:`margin` more alike than the next column's; a column so named counts as named half-way (0.5),
    as a name sharing half its words would. Vectors are kept in process by their text (a table's names are
    embedded once)."""

    KEEP = 50_000  # vectors kept; all are dropped when full

    def __init__(self, embedder: Embedder, threshold: float, margin: float, cell_threshold: float = 1.0) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.margin = margin
        self.cell_threshold = cell_threshold
        self._vectors: dict[str, np.ndarray] = {}
        self.store: Store | None = None  # the library whose vector cache keeps a table's vectors (table_answer)

    def forget(self) -> None:
        """Drop the vectors kept in process (the library's cache keeps its own)."""
        self._vectors.clear()

    def vectors(self, texts: Sequence[str], keep: bool = False) -> np.ndarray:
        """The vectors of ``texts``: kept in process; with ``keep`` (a table's column names and label cells) also
        read from and written to the library's text-vector cache (:attr:`store`), so a table's are embedded once
        for every later process, not once a session."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if todo:
            if len(self._vectors) + len(todo) > self.KEEP:
                self._vectors.clear()
            store, model = self.store, f"table:{self.embedder.model_id}"
            shas = {t: text_sha(self.embedder, t) for t in todo} if keep and store is not None else {}
            if shas and store is not None:
                have: dict[str, np.ndarray] = {}
                with contextlib.suppress(sqlite3.Error):  # a library closed or busy: embedded as without a cache
                    have = store.cached_vectors(model, list(shas.values()), touch=False)
                for t in todo:
                    if shas[t] in have:
                        self._vectors[t] = have[shas[t]]
                todo = [t for t in todo if t not in self._vectors]
            made = list(zip(todo, self.embedder.embed(todo), strict=True)) if todo else []
            for t, v in made:
                self._vectors[t] = np.asarray(v, dtype=np.float32)
            if shas and made and store is not None and not store.read_only:
                with contextlib.suppress(sqlite3.Error):  # a library busy with a writer: kept in process only
                    store.cache_vectors(model, [(shas[t], self._vectors[t]) for t, _v in made])
        return np.stack([self._vectors[t] for t in texts])

    def scores(self, intent: TableIntent, names: Sequence[str], exact: Sequence[float]) -> list[float]:
        """``exact`` with each column not named by its words raised to 0.5 when the encoder finds it named."""
        clean = [" ".join(words_of(re.sub(r"\(.*?\)", " ", n))) or n.lower() for n in names]
        said = {stem(w) for c in clean for w in c.split()}
        units = [w for w in dict.fromkeys(intent.words) if not w.isdigit() and stem(w) not in said]  # unread words
        if not units or len(names) < 2:
            return list(exact)
        sims = self.vectors(units) @ self.vectors([c or "-" for c in clean], keep=True).T  # units x columns
        out = list(exact)
        for row in sims:
            order = np.argsort(-row)
            best, second = int(order[0]), int(order[1])
            if row[best] >= self.threshold and row[best] - row[second] >= self.margin and clean[best]:
                out[best] = max(out[best], 0.5)
        return out

    def cell_key(self, intent: TableIntent, data: TableData, col: int, skip: set[str]) -> Key | None:
        """The cells of column ``col`` that a phrase of the question (up to :data:`CELL_PHRASE_WORDS` words, words of
        ``skip`` left out) names in other words than the cell's ("the Soviet Union" for "USSR"): the cell most
        alike a phrase when at least :attr:`cell_threshold` alike and :attr:`margin` more alike than the next
        cell; None when no phrase names one."""
        if not data.whole:
            return None
        cells = data.text(col)
        texts = sorted({t for t in cells if t and len(t) <= 80})
        phrases = [(p, s) for p, s in _phrases(intent, skip) if p.count(" ") < CELL_PHRASE_WORDS]
        if len(texts) < 2 or not phrases:
            return None
        sims = self.vectors([p for p, _s in phrases]) @ self.vectors(texts, keep=True).T
        best_key: tuple[float, Key] | None = None
        for (phrase, start), row in zip(phrases, sims, strict=True):
            order = np.argsort(-row)
            top, second = int(order[0]), int(order[1])
            if row[top] >= self.cell_threshold and row[top] - row[second] >= self.margin:
                if best_key is None or row[top] > best_key[0]:
                    rows = {r for r, t in enumerate(cells) if t == texts[top]}
                    best_key = (float(row[top]), Key(rows, phrase, exact=False, negated=negated(intent.text, start),
                                                     start=start, share=0.0))  # not the cell's own words
        return best_key[1] if best_key is not None else None


@dataclass
class TableMatch:
    """The question matched to one table: the column scores, the operations it asks, its keys, the rows that pass
    its filters (and the filters in words), the key column, the measure (a numeric column) and the answer column."""

    intent: TableIntent
    data: TableData
    scores: list[float]
    ops: list[str]
    keys: dict[int, Key]
    rows: list[int]
    filters: list[str] = field(default_factory=list)
    key_col: int | None = None
    numeric: list[int] = field(default_factory=list)
    measure: int | None = None
    answer_col: int | None = None
    label_col: int = 0
    parts: bool = False  # a part of a cell may be a key (the looser matching)
    given_key: tuple[int, Key] | None = None  # a key found otherwise (the encoder's), in a part of a cell's stead

    def beside_key(self) -> list[float]:
        """The column scores with a column named only by the words of the key cell set to 0: in "When is King's
        Day?" the cell "King's Day" is the key and "Day" is not the column asked for."""
        key = self.keys.get(self.key_col) if self.key_col is not None else None
        if key is None or not key.exact:
            return list(self.scores)
        gone, text, names = set(words_of(key.phrase)), self.intent.text, self.data.table.names
        rest = replace(self.intent, text=text[:key.start] + " " + text[key.start + len(key.phrase):],
                       words=[w for w in self.intent.words if w not in gone])
        return [0.0 if whole > 0 and bare == 0 else s for s, whole, bare in
                zip(self.scores, col_scores(self.intent, names), col_scores(rest, names), strict=True)]

    def plan(self, op: str, rows: list[int] | None = None, measure: int | None = None, answer: int | None = None,
             other: int | None = None, value: str = "") -> Plan:
        return Plan(op, self.rows if rows is None else rows, measure, answer, self.key_col, other,
                    list(self.filters), value)


def names_measure_after(m: TableMatch, op: str) -> bool:
    """Whether the word right after the question's superlative ("highest", "most") is a word of the measure's
    column name: "what is the highest maximum salary" asks for a Maximum, "what is the highest ranked team" for a
    team."""
    said = next((w for o, w in m.intent.ops if o == op), "")
    after = m.intent.text.split(said, 1)[1].split() if said and said in m.intent.text else []
    assert m.measure is not None
    return bool(after) and stem(after[0].strip("?.,!")) in {stem(w) for w in words_of(m.data.table.names[m.measure])}
