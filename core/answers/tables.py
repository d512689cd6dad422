"""Table questions answered exactly from the stored tables (issue 49; docs/tables.md): the question is read by rules
(:mod:`shelfwise.core.answers.table_intent`), its words matched to a table's column names and its cells (exact
words: "L5", "lisbon"), and the operation computed over the table's cells as stored: a lookup (the row whose key
cell the question names, the column it names), a count, sum, average, minimum, maximum, arg-max/arg-min, a
difference, each over the rows that pass the question's filters (a key value, above / below / between a number or
a date). The result is a :class:`ShortAnswer` whose cells are cited; no model writes any of it. A question the
table cannot answer gives None, and the answer stays the walk's sentence.
"""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from shelfwise.core.answers.table_intent import TableIntent, read_intent, stem, words_of
from shelfwise.core.answers.table_rows import read_cells
from shelfwise.core.answers.types import Answer, CellRef, Citation, ShortAnswer
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

MAX_CELLS = 400_000  # a bigger table is not read whole for a question
NUMERIC = ("number", "money", "percent", "date", "time")
LABEL_SAMPLE = 2000  # rows read to tell a column of names (all different) in a big table
MAX_TABLES = 8  # tables tried for one question
MAX_READ_COLUMNS = 30  # a row wider than this is not read out in words (its cells are cited instead)
MAX_CITED = 60  # cells cited for one computation (the rest are counted in the explanation)


_ASKED = {  # a question word and the column names it asks for when the question names no column
    "when": {"when", "date", "day", "wann", "datum", "quand"}, "wann": {"when", "date", "datum", "wann"},
    "quand": {"date", "quand", "jour"}, "who": {"who", "name", "provider", "person", "owner", "contact"},
    "wer": {"name", "anbieter", "wer"}, "where": {"where", "location", "place", "city", "office", "venue"},
}


@dataclass
class Plan:
    """What will be computed: the operation, the columns, the rows that pass the filters, how they were chosen."""

    op: str
    rows: list[int]
    measure: int | None = None
    answer_col: int | None = None
    key_col: int | None = None
    other: int | None = None  # the second column of a difference or a range
    filters: list[str] = field(default_factory=list)  # the filters in words


def _col_scores(intent: TableIntent, names: Sequence[str]) -> list[float]:
    """How well each column's name is named by the question: the share of its words the question has (light
    stems), 1.0 when the whole name is in the question."""
    qstems = {stem(w) for w in intent.words}
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


_TOKEN = re.compile(r"[\w$€£%]+", re.UNICODE)


def _key_cells(intent: TableIntent, data: TableData) -> dict[int, set[int]]:
    """Cells whose whole text the question names (as words): column -> rows. A cell that is only a stop word, or
    a number the question compares with, is not a key."""
    text = intent.text
    compared = " ".join(c.words for c in intent.comparisons)
    found: dict[int, set[int]] = {}
    if not data.whole:  # a big table: the cells equal to a phrase of the question, found by SQLite
        tokens = [t.strip("?!.,;:\"'()") for t in text.split()]
        phrases = {" ".join(tokens[i:j]) for i in range(len(tokens)) for j in range(i + 1, min(len(tokens), i + 8) + 1)}
        cells = data.find_cells({p for p in phrases if p and words_of(p) and p not in compared},
                                [c for c, kind in enumerate(data.table.kinds) if kind == "text"])
    else:
        cells = [(c, r, cell) for c in range(len(data.table.columns)) for r, cell in enumerate(data.text(c))]
    plural = " " + " ".join(stem(w) for w in _TOKEN.findall(text)) + " "  # the question with plurals taken off
    for c, r, cell in cells:
        v = cell.lower().strip()
        if not v or not words_of(v) or len(v) > 80 or v in compared:
            continue
        if re.search(rf"(?<![\w]){re.escape(v)}(?![\w])", text):
            found.setdefault(c, set()).add(r)
        elif data.whole and len(v) > 3:  # "democratic gains" names the cells "Democratic gain"
            singular = " ".join(stem(w) for w in _TOKEN.findall(v))
            if singular and f" {singular} " in plural:
                found.setdefault(c, set()).add(r)
    return found


def _best(scores: Sequence[float], allowed: Sequence[int]) -> int | None:
    best = max(allowed, key=lambda c: (scores[c], -c), default=None)
    return best if best is not None and scores[best] > 0 else None


_ASKS_VALUE = re.compile(r"^(what|which|wie|was|quel\w*) (is|was|are|were|ist|war|est|était) (the|der|die|das|le|la)\b")
_LISTED = re.compile(r"\b(listed|in the list|on the list|in the table|on the chart|on the record|on the album)\b")
_IMPLIED = [  # a superlative's column when the question names none: (the question's word, words of the column name)
    (r"tallest|shortest|height", ("height", "ht")), (r"heaviest|lightest|weight", ("weight", "wt")),
    (r"oldest|youngest|\bage\b", ("age",)), (r"most populous|populat", ("population", "pop")),
    (r"fastest|slowest|quickest|time", ("time",)), (r"longest|length", ("length", "duration")),
    (r"medals?", ("total",)), (r"votes?", ("votes", "total")), (r"points?|scor", ("points", "pts", "score")),
    (r"goals?", ("goals",)), (r"attend", ("attendance",)), (r"capacity|seats", ("capacity",)),
]


def _implied_measure(intent: TableIntent, names: Sequence[str], numeric: Sequence[int]) -> int | None:
    """The column a superlative or a sum means when the question names none: "tallest" -> Height, "the most
    medals" -> Total; None when no word says which."""
    for pattern, words in _IMPLIED:
        if re.search(pattern, intent.text):
            for c in numeric:
                if set(words_of(names[c])) & set(words):
                    return c
    return None


def _mostly_numbers(numbers: Sequence[float | None], texts: Sequence[str]) -> bool:
    """A text column whose filled cells mostly start with a number ("12 km", "1st", "3:45.2")."""
    filled = [n for n, t in zip(numbers, texts, strict=True) if t]
    return bool(filled) and sum(1 for n in filled if n is not None) >= 0.8 * len(filled)


_MORE = re.compile(r"\b(more|most|higher|highest|larger|largest|bigger|greater|longer|later|latest|taller|heavier|"
                   r"older|better|mehr|höher|größer|plus)\b")
_LESS = re.compile(r"\b(less|fewer|lower|smaller|shorter|earlier|faster|quicker|younger|weniger|kleiner|früher|"
                   r"moins)\b")
_NEXT = re.compile(r"\b(after|next|following|succeeded|nach|danach|après|suivant)\b")
_PREVIOUS = re.compile(r"\b(before|previous|preceding|prior to|preceded|vor|davor|avant|précédent)\b")


def _between_rows(intent: TableIntent, data: TableData, keyed: set[int], key_col: int, measure: int | None,
                  scores: Sequence[float], filters: list[str]) -> Plan | None:
    """Questions about the rows the question names by their key cells: "which had more X, A or B" (two rows
    compared on the named column, or on their order for earlier / later) and "what came after / before A"
    (the next or previous row)."""
    names = data.table.names
    text = intent.text
    rows = sorted(keyed)
    if len(rows) == 2 and re.search(r"\b(or|oder|ou)\b", text):
        more, less = _MORE.search(text), _LESS.search(text)
        if more or less:
            word = (more or less).group(0)  # type: ignore[union-attr]
            larger = bool(more) and not (less and less.start() < more.start())  # type: ignore[union-attr]
            if measure is not None:
                values = [data.number(measure)[r] for r in rows]
                if None not in values:
                    pick = max if larger else min
                    best = pick(rows, key=lambda r: float(data.number(measure)[r] or 0))
                    return Plan("choice", [best, *(r for r in rows if r != best)], measure, key_col, key_col, None,
                                [*filters, f"{word} {names[measure]}"])
            if word in ("earlier", "later", "früher", "before", "after"):
                best = rows[0] if word in ("earlier", "früher") else rows[-1]
                return Plan("choice", [best, *(r for r in rows if r != best)], None, key_col, key_col, None,
                            [*filters, f"{word} in the table's order"])
    if intent.comparisons or len(rows) != 1:
        return None
    step = 1 if _NEXT.search(text) else -1 if _PREVIOUS.search(text) else 0
    r = rows[0] + step
    if not step or not 0 <= r < data.n_rows:
        return None
    named = [c for c in range(len(names)) if scores[c] >= 0.5]
    col = max(named, key=lambda c: (c != key_col, scores[c])) if named else key_col
    return Plan("next" if step > 0 else "previous", [r, rows[0]], None, col, key_col, None, filters)


def _label_column(data: TableData) -> int:
    """The column that names a row: the first text column whose filled cells are all different, else the first
    text column."""
    kinds = data.table.kinds
    text_cols = [c for c in range(len(kinds)) if kinds[c] == "text"] or [0]
    for c in text_cols:
        values = [v for v in data.text(c)[:LABEL_SAMPLE] if v]
        if values and len(set(values)) == len(values):
            return c
    return text_cols[0]


def _fmt(value: float) -> str:
    if abs(value - round(value)) < 1e-9:
        return str(round(value))
    return f"{round(value, 2):.2f}".rstrip("0").rstrip(".") if abs(value) >= 1 else f"{value:.4g}"


def plan_question(intent: TableIntent, data: TableData) -> Plan | None:
    """The operation over ``data`` that ``intent`` asks for, or None (see the module docstring)."""
    table = data.table
    names, kinds = table.names, table.kinds
    width = len(names)
    if width < 2 or not data.n_rows:
        return None
    scores = _col_scores(intent, names)
    named = {c for c in range(width) if scores[c] >= 0.5}
    header_words = {w for c in named for w in words_of(names[c])}
    ops = [op for op, said in intent.ops if not set(said.split()) <= header_words]
    keys = _key_cells(intent, data)
    data_rows = [r for r in range(data.n_rows) if data.is_data(r)]
    rows = list(data_rows)
    filters: list[str] = []
    key_col = None
    # a key value filters its column; the column whose cells the question names with most words is the key
    for col in sorted(keys, key=lambda c: -max(len(data.text(c)[r]) for r in keys[c])):
        allowed = keys[col]
        label = sorted({data.text(col)[r] for r in allowed})
        col_text = data.text(col)
        everyone = {r for r in data_rows if col_text[r][:3].lower() in ("all", "eve", "tou")
                    and re.match(r"(?i)^(all|every|alle|tous|toutes)\b", col_text[r])}
        rows = [r for r in rows if r in allowed or (r in everyone and "count" in ops)]
        filters.append(f"{names[col]} = {' or '.join(label)}")
        key_col = col if key_col is None else key_col
    # comparisons on the numeric (or date) column they name, else the only one of that kind
    for comp in intent.comparisons:
        cands = [c for c in range(width) if kinds[c] in NUMERIC and (kinds[c] == "date") == (comp.kind == "date")]
        on = _best(scores, cands) if len(cands) > 1 else (cands[0] if cands else None)
        if on is None:
            return None
        rows = [r for r in rows if data.number(on)[r] is not None and comp.admits(float(data.number(on)[r] or 0))]
        filters.append(f"{names[on]} {comp.words}")
    year = re.search(r"\b(1[5-9]\d\d|20\d\d)\b", intent.text)
    dates = [c for c in range(width) if kinds[c] == "date"]
    if year and dates and not any(year.group(0) in data.text(c)[r].lower() for c in keys for r in keys[c]):
        on, wanted = dates[0], int(year.group(0))  # "in 1987" over a column of dates: that year's rows
        col_numbers = data.number(on)
        rows = [r for r in rows if col_numbers[r] is not None
                and dt.date.fromordinal(int(col_numbers[r] or 1)).year == wanted]
        filters.append(f"{names[on]} in {wanted}")
    numeric = [c for c in range(width) if c != key_col and (kinds[c] in NUMERIC or (
        data.whole and _mostly_numbers(data.number(c), data.text(c))))]
    measure = _best(scores, numeric)
    if measure is None and any(op in ops for op in ("max", "min", "difference", "sum", "average")):
        measure = _implied_measure(intent, names, numeric)
    text_cols = [c for c in range(width) if c != key_col and c != measure]
    answer_col = _best(scores, text_cols)
    label_col = _label_column(data)
    if not rows:
        return None
    if key_col is not None:
        plan = _between_rows(intent, data, keys[key_col], key_col, measure, scores, filters)
        if plan is not None:
            return plan
    if "count" in ops and intent.asks_row and any(op in ops for op in ("max", "min")):  # "which ... most number of"
        ops = [op for op in ops if op != "count"]
    if "range" in ops:
        lo = next((c for c in numeric if re.search(r"(?i)\b(min|minimum|low|from|von|de)\b", names[c])), None)
        hi = next((c for c in numeric if re.search(r"(?i)\b(max|maximum|high|to|bis|à)\b", names[c])), None)
        if lo is not None and hi is not None:
            op = "argmin_range" if re.search(r"narrow|small|kleinst|petit", intent.text) else "argmax_range"
            return Plan(op, rows, hi, label_col if answer_col is None else answer_col, key_col, lo, filters)
    if "difference" in ops:
        if key_col is not None and measure is not None and len(rows) == 2:
            return Plan("difference", rows, measure, None, key_col, None, filters)
        two = sorted((c for c in numeric if scores[c] > 0), key=lambda c: -scores[c])[:2]
        if len(rows) == 1 and len(two) == 2:
            return Plan("difference", rows, two[0], None, key_col, two[1], filters)
    if "average" in ops and measure is not None:
        return Plan("average", rows, measure, None, key_col, None, filters)
    if "count" in ops:
        noun = stem(intent.counted) if intent.counted else ""
        counted_col = next((c for c in numeric if noun and noun in {stem(w) for w in words_of(names[c])}), None)
        if counted_col is not None and kinds[counted_col] != "date":  # "how many days ...": a column of numbers
            if len(rows) == 1 and key_col is not None:
                return Plan("lookup", rows, counted_col, None, key_col, None, filters)
            if "sum" in ops and not intent.comparisons:  # "how many points in total ..."
                return Plan("sum", rows, counted_col, None, key_col, None, filters)
        if key_col is not None and measure is not None and scores[measure] >= 0.5 and len(rows) == 1:
            return Plan("lookup", rows, measure, None, key_col, None, filters)
        caption = table.title if not table.title.startswith(names[0]) else ""  # a caption, not the column list
        title_words = {stem(w) for w in words_of(f"{caption} {table.sheet} {names[label_col]}")}
        if filters or (noun and noun in title_words):
            return Plan("count", rows, None, label_col, key_col, None, filters)
    if "sum" in ops and measure is not None and kinds[measure] != "date":
        return Plan("sum", rows, measure, None, key_col, None, filters)
    for op in ("max", "min"):
        if op in ops and measure is None and intent.asks_row and answer_col is not None and scores[answer_col] >= 0.5:
            return Plan("most_often" if op == "max" else "least_often", rows, None, answer_col, key_col, None, filters)
        if op in ops and measure is not None:
            if intent.asks_row or answer_col is not None:
                col = answer_col if answer_col is not None else label_col
                return Plan("arg" + op, rows, measure, col, key_col, None, filters)
            if _ASKS_VALUE.match(intent.text):  # "what is the highest ...": the value itself
                return Plan(op, rows, measure, None, key_col, None, filters)
    for op in ("first", "last"):
        if (op in ops and intent.asks_row and answer_col is not None and scores[answer_col] >= 0.5
                and stem(intent.asked) in {stem(w) for w in words_of(names[answer_col])}):  # "which school ... first"
            return Plan(op, rows, None, answer_col, key_col, None, filters)
        if op in ops and _LISTED.search(intent.text):  # "the last country listed": the table's own order
            col = answer_col if answer_col is not None and scores[answer_col] >= 0.5 else label_col
            return Plan(op, rows, None, col, key_col, None, filters)
    if key_col is not None and len(rows) >= 1:
        target = max((c for c in range(width) if c != key_col), key=lambda c: (scores[c], -c))
        asked = _ASKED.get(intent.text.split(" ", 1)[0])
        if scores[target] <= 0 and asked is not None:  # "when ...": the column of dates or named When
            target = next((c for c in range(width) if c != key_col and (
                set(words_of(names[c])) & asked or (kinds[c] in ("date", "time") and "date" in asked))), target)
            scores = [*scores[:target], 1.0, *scores[target + 1:]] if target != key_col else scores
        if scores[target] >= 0.5:
            return Plan("lookup", rows[:1], target, None, key_col, None, filters)
    return None


def _cell(data: TableData, r: int, c: int) -> CellRef:
    t = data.table
    return CellRef(t.id, r, c, t.address(r, c, data.sheet_row(r)),
                   data.text(c)[r])


def compute(plan: Plan, data: TableData, question: str) -> ShortAnswer | None:
    """Run ``plan`` over ``data``: the value, the operation in words and every cell it used."""
    names, kinds = data.table.names, data.table.kinds
    rows, m = plan.rows, plan.measure
    where = f" where {'; '.join(plan.filters)}" if plan.filters else ""

    labels = data.text(plan.key_col if plan.key_col is not None else _label_column(data))

    def label(r: int) -> str:
        return labels[r]

    if plan.op == "lookup" and m is not None:
        r = rows[0]
        value = data.text(m)[r]
        if not value:
            return None
        kind = kinds[m] if kinds[m] in NUMERIC[:4] else "span"
        return ShortAnswer(value, kind, operation="lookup", explanation=f"{names[m]} for {label(r)}: {value}",
                           cells=[_cell(data, r, m)] + ([_cell(data, r, plan.key_col)] if plan.key_col is not None
                                                        else []))
    if plan.op == "count":
        n = len(rows)
        col = plan.key_col
        parts = ""
        if col is not None:
            groups = Counter(data.text(col)[r] for r in rows)
            parts = ": " + ", ".join(f"{k} for {v}" for v, k in groups.items())
        cells = [_cell(data, r, col if col is not None else (plan.answer_col or 0)) for r in rows[:MAX_CITED]]
        return ShortAnswer(str(n), "computed", operation="count",
                           explanation=f"{n} rows of {data.table.title}{where}{parts}", cells=cells)
    if plan.op in ("next", "previous") and plan.answer_col is not None:
        r, key = rows
        value = data.text(plan.answer_col)[r]
        return ShortAnswer(value, "span", operation=plan.op,
                           explanation=f"the row {'after' if plan.op == 'next' else 'before'} {label(key)}: "
                                       f"{names[plan.answer_col]} {value}",
                           cells=[_cell(data, r, plan.answer_col), _cell(data, key, plan.key_col or 0)]) if value \
            else None
    if plan.op == "choice" and plan.answer_col is not None:
        value = data.text(plan.answer_col)[rows[0]]
        used = [_cell(data, r, m if m is not None else plan.answer_col) for r in rows]
        said = ", ".join(f"{data.text(m)[r]} ({label(r)})" for r in rows) if m is not None else ""
        return ShortAnswer(value, "computed", operation="choice",
                           explanation=f"{plan.filters[-1]}: {value}" + (f" ({said})" if said else ""), cells=used)
    if plan.op in ("most_often", "least_often") and plan.answer_col is not None:
        counts = Counter(data.text(plan.answer_col)[r] for r in rows if data.text(plan.answer_col)[r])
        if not counts:
            return None
        ranked = counts.most_common()
        value, n = ranked[0] if plan.op == "most_often" else ranked[-1]
        if sum(1 for _v, k in ranked if k == n) > 1:  # a tie: no single answer
            return None
        used = [_cell(data, r, plan.answer_col) for r in rows if data.text(plan.answer_col)[r] == value]
        return ShortAnswer(value, "computed", operation=plan.op,
                           explanation=f"{value} appears {n} times in {names[plan.answer_col]} "
                                       f"({'most' if plan.op == 'most_often' else 'least'} often){where}",
                           cells=used[:MAX_CITED])
    if m is None:
        if plan.op in ("first", "last") and plan.answer_col is not None:
            r = rows[0] if plan.op == "first" else rows[-1]
            value = data.text(plan.answer_col)[r]
            return ShortAnswer(value, "span", operation=plan.op,
                               explanation=f"the {plan.op} row{where}: {names[plan.answer_col]} {value}",
                               cells=[_cell(data, r, plan.answer_col)]) if value else None
        return None
    have = [r for r in rows if data.number(m)[r] is not None]
    if not have:
        return None
    values = [float(data.number(m)[r] or 0) for r in have]
    shown = names[m]
    if plan.op in ("sum", "average", "max", "min"):
        if plan.op == "sum":
            result = sum(values)
        elif plan.op == "average":
            result = sum(values) / len(values)
        else:
            result = max(values) if plan.op == "max" else min(values)
        if plan.op in ("max", "min"):
            r = have[values.index(result)]
            text = data.text(m)[r]
            return ShortAnswer(text, "computed", operation=plan.op,
                               explanation=f"the {'highest' if plan.op == 'max' else 'lowest'} {shown} of "
                                           f"{len(have)} rows{where}: {text} ({label(r)})",
                               cells=[_cell(data, r, m)])
        words = {"sum": "sum", "average": "average"}[plan.op]
        listed = ", ".join(f"{data.text(m)[r]} ({label(r)})" for r in have[:12]) + (" ..." if len(have) > 12 else "")
        return ShortAnswer(_fmt(result), "computed", operation=plan.op,
                           explanation=f"{words} of {shown} over {len(have)} rows{where}: {listed}",
                           cells=[_cell(data, r, m) for r in have[:MAX_CITED]])
    if plan.op in ("argmax", "argmin") and plan.answer_col is not None:
        best = max(values) if plan.op == "argmax" else min(values)
        r = have[values.index(best)]
        value = data.text(plan.answer_col)[r]
        return ShortAnswer(value, "computed", operation=plan.op,
                           explanation=f"{'highest' if plan.op == 'argmax' else 'lowest'} {shown} of {len(have)} "
                                       f"rows{where}: {data.text(m)[r]} ({value})",
                           cells=[_cell(data, r, plan.answer_col), _cell(data, r, m)]) if value else None
    if plan.op in ("argmax_range", "argmin_range") and plan.other is not None and plan.answer_col is not None:
        o = plan.other
        spans = [(float(data.number(m)[r] or 0) - float(data.number(o)[r] or 0), r) for r in have
                 if data.number(o)[r] is not None]
        if not spans:
            return None
        span, r = max(spans) if plan.op == "argmax_range" else min(spans)
        value = data.text(plan.answer_col)[r]
        return ShortAnswer(value, "computed", operation=plan.op.split("_")[0],
                           explanation=f"{'widest' if plan.op == 'argmax_range' else 'narrowest'} range "
                                       f"{names[o]} to {shown}: {data.text(o)[r]} to {data.text(m)[r]} = "
                                       f"{_fmt(span)} ({value})",
                           cells=[_cell(data, r, plan.answer_col), _cell(data, r, o), _cell(data, r, m)])
    if plan.op == "difference":
        if plan.other is not None and len(rows) == 1 and data.number(plan.other)[rows[0]] is not None:
            r, o = rows[0], plan.other
            if float(data.number(o)[r] or 0) > float(data.number(m)[r] or 0):
                m, o, shown = o, m, names[o]
            delta = float(data.number(m)[r] or 0) - float(data.number(o)[r] or 0)
            return ShortAnswer(_fmt(abs(delta)), "computed", operation="difference",
                               explanation=f"{shown} {data.text(m)[r]} minus {names[o]} {data.text(o)[r]} "
                                           f"({label(r)})", cells=[_cell(data, r, m), _cell(data, r, o)])
        if len(have) == 2:
            a, b = sorted(have, key=lambda r: -float(data.number(m)[r] or 0))
            delta = float(data.number(m)[a] or 0) - float(data.number(m)[b] or 0)
            return ShortAnswer(_fmt(abs(delta)), "computed", operation="difference",
                               explanation=f"{shown}: {data.text(m)[a]} ({label(a)}) minus {data.text(m)[b]} "
                                           f"({label(b)})", cells=[_cell(data, a, m), _cell(data, b, m)])
    return None


def answer_from_tables(tables: Sequence[tuple[StoredTable, TableData | None]], question: str) -> ShortAnswer | None:
    """The first of ``tables`` (in the order given: the walk's) that answers ``question``, as a short answer."""
    intent = read_intent(question)
    for _table, data in tables:
        if data is None:
            continue
        plan = plan_question(intent, data)
        if plan is None:
            continue
        short = compute(plan, data, question)
        if short is not None:
            short.sentence = rows_read(data, short)
            return short
    return None


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
        cells = [data.text(c)[r] for c in range(len(names))]
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


def table_answer(store: Store, question: str, hits: Sequence[Hit], scope: ResolvedScope | None) -> ShortAnswer | None:
    """The short answer computed from the tables of :func:`candidate_tables`, or None."""
    tables = candidate_tables(store, hits, scope)
    if not tables:
        return None
    return answer_from_tables(load_tables(store.conn, tables), question)


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
