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
_SPAN_CELL = re.compile(r"^\s*((?:[a-zäéû.]+\s*|\d{1,2}(?:st|nd|rd|th|\.)?,?\s*)*(1[5-9]\d\d|20\d\d))\s*"
                        r"(?:[-–—]|\bto\b)\s*(.*?)\s*$", re.IGNORECASE)  # a day and a month may come first
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_OPEN = re.compile(r"(?i)present|incumbent|current|today|now|heute|aujourd")


def _span_years(text: str) -> tuple[int, int] | None:
    """The first and last years of a cell written as a span: "1871–97" (1871, 1897), "1989 – 1991", "March 28,
    1991 - January 20, 1993"; None for an open end or no span."""
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


def plan_span(m: TableMatch) -> Plan | None:
    """The years the one named row lasted (see the module docstring), or None."""
    text = m.intent.text
    if not ASKS_SPAN.search(text) or not _LASTS.search(text) or m.key_col is None or len(m.rows) != 1 or \
            re.search(r"\b(same|gleiche\w*|même)\b", text):  # "served the same number of years as X"
        return None
    r = m.rows[0]
    data, names, kinds = m.data, m.data.table.names, m.data.table.kinds
    life = bool(_LIFE.search(text))
    cols = [c for c in range(len(names)) if c != m.key_col and bool(_LIFE_COL.search(names[c])) == life]
    counted = [c for c in cols if _COUNT_COL.match(names[c]) and data.number(c)[r] is not None]
    if len(counted) == 1:  # the table's own count (Years, Seasons)
        c = counted[0]
        return _plan(m, float(data.number(c)[r] or 0), c, None, f"{names[c]} for the row")
    spans = [(c, s) for c in cols if kinds[c] in ("text", "date") and (s := _span_years(data.text(c)[r]))]
    starts = [c for c in cols if _START.search(names[c]) and not _END.search(names[c])]
    ends = [c for c in cols if _END.search(names[c]) and not _START.search(names[c])]
    pairs = []
    if len(starts) == 1 and len(ends) == 1 and starts[0] < ends[0]:
        a, b = starts[0], ends[0]
        if not _OPEN.search(data.text(b)[r]):
            y0 = _year_of(data.number(a)[r], kinds[a], data.text(a)[r])
            y1 = _year_of(data.number(b)[r], kinds[b], data.text(b)[r])
            if y0 is not None and y1 is not None and y1 >= y0:
                pairs.append((a, b, y0, y1))
    if len(spans) + len(pairs) != 1:
        return None
    if spans:
        c, (y0, y1) = spans[0]
        return _plan(m, float(y1 - y0), c, None, f"{names[c]}: {y0} to {y1}")
    a, b, y0, y1 = pairs[0]
    return _plan(m, float(y1 - y0), a, b, f"{names[a]} {y0} to {names[b]} {y1}")


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
