"""A table question's plan computed over the stored cells (issue 49; docs/tables.md): the value, the operation in
words and every cell it used, as a :class:`ShortAnswer`. :func:`compute` runs a :class:`Plan` that
:func:`shelfwise.core.answers.tables.plan_question` made; each operation is one function here. No model writes
any of it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shelfwise.core.answers.types import CellRef, ShortAnswer
from shelfwise.core.store.tables import StoredTable, TableData

NUMERIC = ("number", "money", "percent", "date", "time")
LABEL_SAMPLE = 2000  # rows read to tell a column of names (all different) in a big table
MAX_TIED = 4  # rows sharing an arg-max's value that are all given (more: the first)
MAX_CITED = 60  # cells cited for one computation (the rest are counted in the explanation)
_PLACEHOLDER = re.compile(r"^[\s\-\u2010-\u2015\u2212?*/.]*$|^(n/?a|none|tbd|tba|unknown)$", re.IGNORECASE)


def value_of(text: str) -> str:
    """A cell's text as an answer: "" for an empty cell or a placeholder ("-", "—", "n/a", "?"), which says there
    is no value."""
    return "" if _PLACEHOLDER.match(text.strip()) else text


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
    value: str = ""  # a value the plan decided already (a yes/no comparison's "yes")


def label_column(data: TableData) -> int:
    """The column that names a row: the first text column whose filled cells are all different, else the first
    text column."""
    kinds = data.table.kinds
    text_cols = [c for c in range(len(kinds)) if kinds[c] == "text"] or [0]
    for c in text_cols:
        values = [v for v in data.text(c)[:LABEL_SAMPLE] if v]
        if values and len(set(values)) == len(values):
            return c
    return text_cols[0]


def fmt(value: float, places: int = 2, like: Sequence[str] = ()) -> str:
    """A computed number as shown: whole numbers without decimals, else at most ``places`` decimals (at least
    two; the most its cells have for a sum or a difference: 111.476, not 111.48); thousands grouped when the cells
    it comes from (``like``) are written so ("77,571.43" from "89,000" ...)."""
    grouped = any(_GROUPED.search(t) for t in like)
    if abs(value - round(value)) < 1e-9:
        return f"{round(value):,}" if grouped else str(round(value))
    places = max(2, places)
    if abs(value) < 1:
        return f"{value:.4g}"
    return f"{round(value, places):{',' if grouped else ''}.{places}f}".rstrip("0").rstrip(".")


_GROUPED = re.compile(r"\d,\d{3}(?!\d)")


_DECIMALS = re.compile(r"\d\.(\d+)")


def decimals(texts: list[str]) -> int:
    """The most decimals a number in ``texts`` is written with ("111.476" -> 3)."""
    return max((len(m.group(1)) for t in texts for m in [_DECIMALS.search(t)] if m), default=0)


def cell(data: TableData, r: int, c: int) -> CellRef:
    t = data.table
    return CellRef(t.id, r, c, t.address(r, c, data.sheet_row(r)), data.text(c)[r])


class _Run:
    """One plan over one table: the shared pieces every operation reads."""

    def __init__(self, plan: Plan, data: TableData) -> None:
        self.plan, self.data = plan, data
        self.names, self.kinds = data.table.names, data.table.kinds
        self.where = f" where {'; '.join(plan.filters)}" if plan.filters else ""
        self.labels = data.text(plan.key_col if plan.key_col is not None else label_column(data))

    def label(self, r: int) -> str:
        return self.labels[r]

    def num(self, c: int, r: int) -> float:
        return float(self.data.number(c)[r] or 0)


def _lookup(run: _Run) -> ShortAnswer | None:
    plan, data, m = run.plan, run.data, run.plan.measure
    if m is None:
        return None
    r = plan.rows[0]
    value = value_of(data.text(m)[r])
    if not value:
        return None
    kind = run.kinds[m] if run.kinds[m] in NUMERIC[:4] else "span"
    keyed = [cell(data, r, plan.key_col)] if plan.key_col is not None else []
    return ShortAnswer(value, kind, operation="lookup", explanation=f"{run.names[m]} for {run.label(r)}: {value}",
                       cells=[cell(data, r, m), *keyed])


def _count(run: _Run) -> ShortAnswer:
    plan, data = run.plan, run.data
    n, col = len(plan.rows), plan.key_col
    parts = ""
    if col is not None:
        groups = Counter(data.text(col)[r] for r in plan.rows)
        parts = ": " + ", ".join(f"{k} for {v}" for v, k in groups.items())
    # each row counted named by its label cell (a holiday's name, not only the "Lisbon" it was kept for), then the
    # cell it was kept by
    named = label_column(data) if col is not None else None
    if col is None:
        per_row = [plan.answer_col or 0]
    else:
        per_row = [named, col] if named is not None and named != col else [col]
    cells = [cell(data, r, c) for r in plan.rows[:MAX_CITED // len(per_row)] for c in per_row]
    return ShortAnswer(str(n), "computed", operation="count",
                       explanation=f"{n} rows of {table_name(data)}{run.where}{parts}", cells=cells)


def _count_difference(run: _Run) -> ShortAnswer | None:
    """"How many more episodes did A direct than B": the rows of the key column's one value less the rows of its
    other (the larger count first), as a number of rows; None unless the rows hold exactly two values there, or
    when each is one row ("how many more people live in A than B" asks for a column of numbers not found)."""
    plan, data, col = run.plan, run.data, run.plan.key_col
    if col is None:
        return None
    groups = Counter(data.text(col)[r] for r in plan.rows)
    if len(groups) != 2:
        return None
    (a, n_a), (b, n_b) = groups.most_common()
    if n_a == 1:  # one row each: the question sets two rows' values apart, not their counts
        return None
    cells = [cell(data, r, col) for r in plan.rows[:MAX_CITED]]
    return ShortAnswer(str(abs(n_a - n_b)), "computed", operation="count_difference",
                       explanation=f"{n_a} rows for {a} minus {n_b} for {b} ({table_name(data)}{run.where})",
                       cells=cells)


def caption(table: StoredTable) -> str:
    """A table's caption: its title, unless that is only its column names ("Band, Level name, Example roles, ...",
    the title ingest gives a table without one); else ""."""
    return table.title if table.names and not table.title.startswith(table.names[0]) else ""


def table_name(data: TableData) -> str:
    """How an explanation names a table: its caption, else its sheet, else "the table"."""
    return caption(data.table) or data.table.sheet or "the table"


def _next_previous(run: _Run) -> ShortAnswer | None:
    plan, data, col = run.plan, run.data, run.plan.answer_col
    if col is None:
        return None
    r, key = plan.rows
    value = value_of(data.text(col)[r])
    if not value:
        return None
    side = "after" if plan.op == "next" else "before"
    return ShortAnswer(value, "span", operation=plan.op,
                       explanation=f"the row {side} {run.label(key)}: {run.names[col]} {value}",
                       cells=[cell(data, r, col), cell(data, key, plan.key_col or 0)])


def _choice(run: _Run) -> ShortAnswer | None:
    plan, data, m = run.plan, run.data, run.plan.measure
    if plan.answer_col is None:
        return None
    value = plan.value or data.text(plan.answer_col)[plan.rows[0]]
    used = [cell(data, r, m if m is not None else plan.answer_col) for r in plan.rows]
    said = ", ".join(f"{data.text(m)[r]} ({run.label(r)})" for r in plan.rows) if m is not None else ""
    return ShortAnswer(value, "yes_no" if plan.op == "compare" else "computed", operation=plan.op,
                       explanation=f"{plan.filters[-1]}: {data.text(plan.answer_col)[plan.rows[0]]}"
                                   + (f" ({said})" if said else ""), cells=used)


def _often(run: _Run) -> ShortAnswer | None:
    plan, data, col = run.plan, run.data, run.plan.answer_col
    if col is None:
        return None
    counts = Counter(data.text(col)[r] for r in plan.rows if value_of(data.text(col)[r]))
    if not counts:
        return None
    ranked = counts.most_common()
    value, n = ranked[0] if plan.op == "most_often" else ranked[-1]
    if sum(1 for _v, k in ranked if k == n) > 1:  # a tie: no single answer
        return None
    used = [cell(data, r, col) for r in plan.rows if data.text(col)[r] == value]
    return ShortAnswer(value, "computed", operation=plan.op,
                       explanation=f"{value} appears {n} times in {run.names[col]} "
                                   f"({'most' if plan.op == 'most_often' else 'least'} often){run.where}",
                       cells=used[:MAX_CITED])


def _first_last(run: _Run) -> ShortAnswer | None:
    plan, data, col = run.plan, run.data, run.plan.answer_col
    if col is None or not plan.rows:
        return None
    r = plan.rows[0] if plan.op == "first" else plan.rows[-1]
    value = value_of(data.text(col)[r])
    return ShortAnswer(value, "span", operation=plan.op,
                       explanation=f"the {plan.op} row{run.where}: {run.names[col]} {value}",
                       cells=[cell(data, r, col)]) if value else None


def _measured(run: _Run) -> list[int]:
    m = run.plan.measure
    if m is None:
        return []
    numbers = run.data.number(m)
    return [r for r in run.plan.rows if numbers[r] is not None]


def _aggregate(run: _Run) -> ShortAnswer | None:
    plan, data, m, have = run.plan, run.data, run.plan.measure, _measured(run)
    if m is None or not have:
        return None
    values = [run.num(m, r) for r in have]
    if plan.op in ("max", "min"):
        result = max(values) if plan.op == "max" else min(values)
        r = have[values.index(result)]
        text = data.text(m)[r]
        return ShortAnswer(text, "computed", operation=plan.op,
                           explanation=f"the {'highest' if plan.op == 'max' else 'lowest'} {run.names[m]} of "
                                       f"{len(have)} rows{run.where}: {text} ({run.label(r)})",
                           cells=[cell(data, r, m)])
    if len(have) == 1:  # the sum or average of one row is its cell, as written ("244 km (152 mi)", "14.0%")
        r = have[0]
        return ShortAnswer(data.text(m)[r], "computed", operation=plan.op,
                           explanation=f"{plan.op} of {run.names[m]} over 1 row{run.where}: {run.label(r)}",
                           cells=[cell(data, r, m)])
    result = sum(values) / (len(values) if plan.op == "average" else 1)
    listed = ", ".join(f"{data.text(m)[r]} ({run.label(r)})" for r in have[:12]) + (" ..." if len(have) > 12 else "")
    places = decimals([data.text(m)[r] for r in have]) if plan.op == "sum" else 2
    return ShortAnswer(fmt(result, places, [data.text(m)[r] for r in have]), "computed", operation=plan.op,
                       explanation=f"{plan.op} of {run.names[m]} over {len(have)} rows{run.where}: {listed}",
                       cells=[cell(data, r, m) for r in have[:MAX_CITED]])


def _argextreme(run: _Run) -> ShortAnswer | None:
    plan, data, m, have = run.plan, run.data, run.plan.measure, _measured(run)
    if m is None or not have or plan.answer_col is None:
        return None
    values = [run.num(m, r) for r in have]
    best = max(values) if plan.op == "argmax" else min(values)
    r = have[values.index(best)]
    value = value_of(data.text(plan.answer_col)[r])
    tied = [t for t, v in zip(have, values, strict=True) if v == best]
    names = list(dict.fromkeys(v for t in tied if (v := value_of(data.text(plan.answer_col)[t]))))
    if 1 < len(names) <= MAX_TIED:  # rows that share the highest value: each of them
        return ShortAnswer("; ".join(names), "list", operation=plan.op,
                           explanation=f"{'highest' if plan.op == 'argmax' else 'lowest'} {run.names[m]} of "
                                       f"{len(have)} rows{run.where}: {data.text(m)[r]} ({', '.join(names)})",
                           cells=[c for t in tied for c in (cell(data, t, plan.answer_col), cell(data, t, m))])
    return ShortAnswer(value, "computed", operation=plan.op,
                       explanation=f"{'highest' if plan.op == 'argmax' else 'lowest'} {run.names[m]} of {len(have)} "
                                   f"rows{run.where}: {data.text(m)[r]} ({value})",
                       cells=[cell(data, r, plan.answer_col), cell(data, r, m)]) if value else None


def _range(run: _Run) -> ShortAnswer | None:
    plan, data, m, o, have = run.plan, run.data, run.plan.measure, run.plan.other, _measured(run)
    if m is None or o is None or plan.answer_col is None:
        return None
    spans = [(run.num(m, r) - run.num(o, r), r) for r in have if data.number(o)[r] is not None]
    if not spans:
        return None
    span, r = max(spans) if plan.op == "argmax_range" else min(spans)
    value = data.text(plan.answer_col)[r]
    return ShortAnswer(value, "computed", operation=plan.op.split("_")[0],
                       explanation=f"{'widest' if plan.op == 'argmax_range' else 'narrowest'} range "
                                   f"{run.names[o]} to {run.names[m]}: {data.text(o)[r]} to {data.text(m)[r]} = "
                                   f"{fmt(span)} ({value})",
                       cells=[cell(data, r, plan.answer_col), cell(data, r, o), cell(data, r, m)])


def _difference(run: _Run) -> ShortAnswer | None:
    plan, data, m, have = run.plan, run.data, run.plan.measure, _measured(run)
    if m is None or not have:
        return None
    o = plan.other
    if o is not None and len(plan.rows) == 1 and data.number(o)[plan.rows[0]] is not None:
        r = plan.rows[0]
        if run.num(o, r) > run.num(m, r):
            m, o = o, m
        places = decimals([data.text(m)[r], data.text(o)[r]])
        return ShortAnswer(fmt(abs(run.num(m, r) - run.num(o, r)), places, [data.text(m)[r]]), "computed",
                           operation="difference",
                           explanation=f"{run.names[m]} {data.text(m)[r]} minus {run.names[o]} {data.text(o)[r]} "
                                       f"({run.label(r)})", cells=[cell(data, r, m), cell(data, r, o)])
    if len(have) == 2:
        a, b = sorted(have, key=lambda r: -run.num(m, r))
        places = decimals([data.text(m)[a], data.text(m)[b]])
        return ShortAnswer(fmt(abs(run.num(m, a) - run.num(m, b)), places, [data.text(m)[a]]), "computed",
                           operation="difference",
                           explanation=f"{run.names[m]}: {data.text(m)[a]} ({run.label(a)}) minus "
                                       f"{data.text(m)[b]} ({run.label(b)})",
                           cells=[cell(data, a, m), cell(data, b, m)])
    return None


def _same_as(run: _Run) -> ShortAnswer | None:
    plan, data, col = run.plan, run.data, run.plan.answer_col
    if col is None or len(plan.rows) < 2:
        return None
    anchor, peers = plan.rows[0], plan.rows[1:]
    values = list(dict.fromkeys(v for r in peers if (v := value_of(data.text(col)[r]))))
    if not values:
        return None
    used = [cell(data, r, col) for r in peers] + [cell(data, anchor, plan.measure if plan.measure is not None else col)]
    return ShortAnswer("; ".join(values), "list" if len(values) > 1 else "span", operation="same_as",
                       explanation=f"the rows where {plan.filters[0]}: {', '.join(values)}", cells=used[:MAX_CITED])


def _list(run: _Run) -> ShortAnswer | None:
    plan, data, col = run.plan, run.data, run.plan.answer_col
    if col is None:
        return None
    values = list(dict.fromkeys(v for r in plan.rows if (v := value_of(data.text(col)[r]))))
    if len(values) < 2:
        return None
    return ShortAnswer("; ".join(values), "list", operation="list",
                       explanation=f"{len(plan.rows)} rows{run.where}: {run.names[col]} {', '.join(values)}",
                       cells=[cell(data, r, col) for r in plan.rows[:MAX_CITED]])


def _streak(run: _Run) -> ShortAnswer | None:
    plan, data, col = run.plan, run.data, run.plan.answer_col
    if not plan.rows or col is None:
        return None
    first, last = run.label(plan.rows[0]), run.label(plan.rows[-1])
    cells = [cell(data, r, col) for r in plan.rows[:MAX_CITED]]
    if plan.op == "streak_value":
        value = value_of(data.text(col)[plan.rows[0]])
        return ShortAnswer(value, "computed", operation="streak",
                           explanation=f"{value} in {len(plan.rows)} rows in a row ({run.names[col]}), the most",
                           cells=cells) if value else None
    return ShortAnswer(str(len(plan.rows)), "computed", operation="streak",
                       explanation=f"the longest run of rows in a row{run.where}: {len(plan.rows)} ({first} to {last})",
                       cells=cells)


def _span(run: _Run) -> ShortAnswer | None:
    plan, data = run.plan, run.data
    if not plan.rows or plan.measure is None or not plan.value:
        return None
    r = plan.rows[0]
    used = list(dict.fromkeys(c for c in (plan.answer_col, plan.measure, plan.other, plan.key_col) if c is not None))
    return ShortAnswer(plan.value, "computed", operation="span",
                       explanation=f"{run.label(r)}: {plan.filters[-1]}, {plan.value}",
                       cells=[cell(data, r, c) for c in used])


_OPERATIONS: dict[str, Callable[[_Run], ShortAnswer | None]] = {
    "lookup": _lookup, "count": _count, "next": _next_previous, "previous": _next_previous, "choice": _choice,
    "compare": _choice, "most_often": _often, "least_often": _often, "first": _first_last, "last": _first_last,
    "sum": _aggregate, "average": _aggregate, "max": _aggregate, "min": _aggregate, "argmax": _argextreme,
    "argmin": _argextreme, "argmax_range": _range, "argmin_range": _range, "difference": _difference,
    "count_difference": _count_difference,
    "same_as": _same_as, "streak": _streak, "streak_value": _streak, "list": _list, "span": _span,
}


def compute(plan: Plan, data: TableData) -> ShortAnswer | None:
    """Run ``plan`` over ``data``: the value, the operation in words and every cell it used (None: the cells
    give no value)."""
    op = _OPERATIONS.get(plan.op)
    return op(_Run(plan, data)) if op is not None else None
