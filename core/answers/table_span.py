"""How long a row lasted (issue 49; docs/tables.md): "how long did cap anson play", "for how many years did X serve
as bishop", "how long did the X station operate", "wie lange war X im Amt", "pendant combien d'années X a-t-il
régné": the one row the question names, and the years between its start and its end, read from a cell written as
a span ("1871–97", "1989 – 1991", "March 28, 1991 - January 20, 1993") or from a pair of columns that say a start
and an end (Office started / Office ended, Opened / Closed, Took office / Left office, Born / Died). A column that
counts them already (Years, Seasons) is read as it is. "How long" is answered with its unit ("26 years", "26
Jahre", "26 ans"), "how many years" with the number. No row, several rows, an open end ("1995–present"), or no
span or pair of columns (or more than one): no answer. Planned over one matched table for
:mod:`shelfwise.core.answers.table_plan`.
"""

from __future__ import annotations

import re

from shelfwise.core.answers.table_choice import find_options
from shelfwise.core.answers.table_compute import Plan, value_of
from shelfwise.core.answers.table_match import TableMatch, day_of

# the question asks how long (with the unit said) or how many years (the number)
ASKS_SPAN = re.compile(r"^(?:for )?how long\b|\bhow many years\b|\b(?:total )?number of years\b|^wie lange\b|"
                       r"\bwie viele jahre\b|\bcombien de temps\b|\bcombien d'ann[ée]es\b|\bpendant combien\b")
_HOW_LONG = re.compile(r"^(?:for )?how long\b|^wie lange\b|\bcombien de temps\b")
_GERMAN = re.compile(r"^wie\b")
_FRENCH = re.compile(r"\bcombien\b")
# the question's verb says a span of a row's life ("did X serve / play / live"), not a length or a time taken
_LASTS = re.compile(r"\b(serve[ds]?|serving|play(?:ed|s)?|live[ds]?|operate[ds]?|reign(?:ed|s)?|rule[ds]?|coach(?:ed)?|"
                    r"active|in office|in service|in power|tenure|term|career|exist(?:ed)?|run|ran|last(?:ed)?|"
                    r"hold|held|war\w*|amt|regiert\w*|gelebt|lebte|régn\w*|vécu|servi|exercé)\b")
_LIFE = re.compile(r"\b(live[ds]?|alive|lifetime|life|gelebt|lebte|vécu)\b")
_LIFE_COL = re.compile(r"(?i)\b(born|birth|died|death|lifetime|life|geboren|gestorben|naissance|décès)\b|b\.|d\.")
_COUNT_COL = re.compile(r"(?i)^\s*(?:no\.? of |number of |total )?(years?|seasons?)(?: in office| served| active)?"
                        r"\s*$|^\s*jahre\s*$|^\s*ann[ée]es\s*$")
_START = re.compile(r"(?i)\b(start\w*|began|begin\w*|from|opened|took office|first|born|birth|entered|since|"
                    r"introduced|in service|assumed office|von|beginn|début)\b")
_END = re.compile(r"(?i)\b(end\w*|to|until|closed|left office|last|died|death|retired|withdrawn|out of service|"
                  r"bis|ende|fin)\b")
_SPAN_CELL = re.compile(r"^\s*((?:[a-zäéû.]+,?\s+|\d{1,2}(?:st|nd|rd|th|\.)?,?\s+){0,3}(1[5-9]\d\d|20\d\d))\s*"
                        r"(?:[-–—]|\bto\b)\s*(.*?)\s*$", re.IGNORECASE)  # a day and a month may come first
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_OPEN = re.compile(r"(?i)present|incumbent|current|today|now|heute|aujourd")


def _span_years(text: str) -> tuple[int, int] | None:
    """The first and last years of a cell written as a span: "1871–97" (1871, 1897), "1989 – 1991", "March 28,
    1991 - January 20, 1993"; None for an open end or no span."""
    if len(text) > 60:  # a span is a short cell
        return None
    m = _SPAN_CELL.match(text.replace("\n", " "))
    if m is None or _OPEN.search(m.group(3)):
        return None
    start = int(m.group(2))
    end = _YEAR.search(m.group(3))
    if end is not None:
        return start, int(end.group(1))
    short = re.match(r"^(\d{2})\b", m.group(3))
    if short is None:
        return None
    year = start // 100 * 100 + int(short.group(1))
    return start, year if year >= start else year + 100


def _year_of(data_number: float | None, kind: str, text: str) -> int | None:
    if kind == "date":
        day = day_of(data_number)
        return day.year if day is not None else None
    found = _YEAR.search(text)
    return int(found.group(1)) if found is not None else None


def _sources(m: TableMatch, rows: list[int]) -> list[tuple[int, int | None]]:
    """Where the rows' spans are read: each column (not the key's; of lives only when the question says "live") that
    holds a span in every one of ``rows`` (column, None), and the one pair of a start and an end column (start,
    end)."""
    data, names, kinds = m.data, m.data.table.names, m.data.table.kinds
    life = bool(_LIFE.search(m.intent.text))
    cols = [c for c in range(len(names)) if c != m.key_col and bool(_LIFE_COL.search(names[c])) == life]
    found: list[tuple[int, int | None]] = [(c, None) for c in cols if kinds[c] in ("text", "date")
                                           and all(_span_years(data.text(c)[r]) for r in rows)]
    starts = [c for c in cols if _START.search(names[c]) and not _END.search(names[c])]
    ends = [c for c in cols if _END.search(names[c]) and not _START.search(names[c])]
    if len(starts) == 1 and len(ends) == 1 and starts[0] < ends[0]:
        found.append((starts[0], ends[0]))
    return found


def _years(m: TableMatch, r: int, source: tuple[int, int | None]) -> tuple[int, int] | None:
    """Row ``r``'s first and last years from ``source`` (:func:`_sources`); None: an open end or no years."""
    data, kinds = m.data, m.data.table.kinds
    a, b = source
    if b is None:
        return _span_years(data.text(a)[r])
    if _OPEN.search(data.text(b)[r]):
        return None
    y0 = _year_of(data.number(a)[r], kinds[a], data.text(a)[r])
    y1 = _year_of(data.number(b)[r], kinds[b], data.text(b)[r])
    return (y0, y1) if y0 is not None and y1 is not None and y1 >= y0 else None


def _days(m: TableMatch, r: int, source: tuple[int, int | None]) -> float | None:
    """Row ``r``'s length in days when its start and end are date cells (a finer order than years), else None."""
    a, b = source
    if b is None or m.data.table.kinds[a] != "date" or m.data.table.kinds[b] != "date":
        return None
    d0, d1 = day_of(m.data.number(a)[r]), day_of(m.data.number(b)[r])
    return float((d1 - d0).days) if d0 is not None and d1 is not None else None


def plan_span(m: TableMatch) -> Plan | None:
    """The years the one named row lasted (see the module docstring), or None."""
    text = m.intent.text
    if not ASKS_SPAN.search(text) or not _LASTS.search(text) or m.key_col is None or len(m.rows) != 1 or \
            re.search(r"\b(same|gleiche\w*|même)\b", text):  # "served the same number of years as X"
        return None
    r = m.rows[0]
    data, names = m.data, m.data.table.names
    life = bool(_LIFE.search(text))
    counted = [c for c in range(len(names)) if c != m.key_col and bool(_LIFE_COL.search(names[c])) == life
               and _COUNT_COL.match(names[c]) and data.number(c)[r] is not None]
    if len(counted) == 1:  # the table's own count (Years, Seasons)
        c = counted[0]
        return _plan(m, float(data.number(c)[r] or 0), c, None, f"{names[c]} for the row")
    sources = [(src, y) for src in _sources(m, [r]) if (y := _years(m, r, src)) is not None]
    if len(sources) != 1:
        return None
    (a, b), (y0, y1) = sources[0]
    said = f"{names[a]}: {y0} to {y1}" if b is None else f"{names[a]} {y0} to {names[b]} {y1}"
    return _plan(m, float(y1 - y0), a, b, said)


_EXTREME = re.compile(r"\b(longest|longer|most years|shortest|shorter|least (?:number of |amount of )?(?:years|time)|"
                      r"fewest years|am längsten|länger|am kürzesten|kürzer|le plus longtemps|plus longtemps)\b")
_SHORT = re.compile(r"\b(shortest|shorter|least|fewest|am kürzesten|kürzer)\b")


def plan_span_extreme(m: TableMatch, asked: int | None) -> Plan | None:
    """"who served longer, A or B" (one of the two), "which governor served the longest" / "the least number of
    years" (the row, among those the filters keep, whose span is the longest / shortest): its cell in the column
    asked for, else its label (the option's own cell for "A or B"); None on a tie, a row without a span, or no
    one source of spans."""
    text, data = m.intent.text, m.data
    if not _EXTREME.search(text) or not _LASTS.search(text) or _LIFE.search(text):
        return None
    pair = find_options(data, text, [r for r in range(data.n_rows) if data.is_data(r)])
    if pair is not None:
        if pair[0].col < 0 or len(pair[0].rows) != 1 or len(pair[1].rows) != 1:
            return None
        rows, col = [pair[0].rows[0], pair[1].rows[0]], pair[0].col
    else:
        rows, col = list(m.rows), asked if asked is not None else m.label_col
    if len(rows) < 2:
        return None
    sources = _sources(m, rows)
    if len(sources) != 1:
        return None
    spans = {r: y for r in rows if (y := _years(m, r, sources[0])) is not None}
    if len(spans) < 2 or (pair is not None and len(spans) != 2) or 3 * len(spans) < 2 * len(rows):
        return None  # a row still open ("present") is not compared; most rows must have their span
    rows = [r for r in rows if r in spans]
    lengths = {r: _days(m, r, sources[0]) or (y1 - y0) * 365.25 for r, (y0, y1) in spans.items()}
    want = (min if _SHORT.search(text) else max)(lengths.values())
    winners = [r for r in rows if lengths[r] == want]
    if len(winners) != 1 or not value_of(data.text(col)[winners[0]]):
        return None
    r = winners[0]
    a, b = sources[0]
    y0, y1 = spans[r]
    value = data.text(col)[r].strip()
    said = f"the {'shortest' if _SHORT.search(text) else 'longest'} of {len(rows)}: {y0} to {y1}"
    return Plan("span", [r], a, col, m.key_col, b, [*m.filters, said], value)


def _plan(m: TableMatch, years: float, col: int, other: int | None, said: str) -> Plan | None:
    if years < 0 or not value_of(m.data.text(col)[m.rows[0]]):
        return None
    n = round(years)
    value = str(n)
    if _HOW_LONG.search(m.intent.text):
        unit = ("Jahr" if n == 1 else "Jahre") if _GERMAN.search(m.intent.text) else \
            ("an" if n == 1 else "ans") if _FRENCH.search(m.intent.text) else ("year" if n == 1 else "years")
        value = f"{n} {unit}"
    return Plan("span", [m.rows[0]], col, None, m.key_col, other, [*m.filters, said], value)
