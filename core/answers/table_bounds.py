"""The numbers of a table question and the columns they are on (issue 49; docs/tables.md): its comparisons filter
the column they name (:func:`filter_comparisons`: above / below / between a number, a date or a year); a number
that is a cell of several columns keys the one the words next to it name (:func:`one_number_column`); a column
named after "no" keeps its 0 rows (:func:`filter_zero`); a comparison no column is named for is on the column the
unit written after its bound names ("longer than thirty *miles*" -> Length (miles), "under 50 square *km*" -> Land
area (km²), "over 6 *minutes*" -> the column of times, the bound read in that column's minutes), or its adjective
implies ("taller than" -> Height) (:func:`bound_column`). Pure: :mod:`shelfwise.core.answers.table_plan` asks them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from shelfwise.core.answers.table_choice import rank_column
from shelfwise.core.answers.table_compute import NUMERIC, value_of
from shelfwise.core.answers.table_intent import (
    NUMBER_WORDS,
    STOP,
    Comparison,
    TableIntent,
    month_in,
    stem,
    words_of,
)
from shelfwise.core.answers.table_match import TableMatch, day_of
from shelfwise.core.store.tables import TableData

_NUMBER_WORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b")
_TIME_UNITS = {"second": 1.0, "sec": 1.0, "minute": 60.0, "min": 60.0, "hour": 3600.0, "hr": 3600.0}
_SAME_UNIT = {"feet": "ft", "foot": "ft", "meter": "m", "metre": "m", "kilometer": "km", "kilometre": "km",
              "square": "", "cubic": "", "of": "", "per": ""}


def _unit_words(intent: TableIntent, comp: Comparison) -> list[str]:
    """The words written just after the comparison's bound ("30 miles", "50 square km"): up to two."""
    text = _NUMBER_WORD.sub(lambda w: str(NUMBER_WORDS[w.group(1)]), intent.text)
    at = text.find(comp.words)
    if at < 0:
        return []
    return re.findall(r"[^\W\d_][\w²³]*", text[at + len(comp.words):])[:2]


def _name_words(name: str) -> list[str]:
    return re.findall(r"[^\W\d_]+", name.lower())


def _seconds_per_unit(texts: Sequence[str]) -> float:
    """How a column of times reads its first field: hours ("1:02:03", "14:30") or minutes ("3:45", a song's
    length, stored as if hours and minutes). The factor a bound in seconds is multiplied by to compare."""
    filled = [t for t in texts if ":" in t]
    if not filled:
        return 1.0
    three = sum(1 for t in filled if t.count(":") >= 2)
    return 1.0 if three >= len(filled) / 2 else 60.0  # "3:45" is stored as 3 h 45 min: a minute counts 60 times


def bound_column(intent: TableIntent, comp: Comparison, data: TableData, cands: Sequence[int],
                 implied: Callable[[TableIntent, Sequence[str], Sequence[int]], int | None]
                 ) -> tuple[int, float] | None:
    """(the column, the factor the bound is multiplied by) for a comparison no column is named for, or None."""
    names, kinds = data.table.names, data.table.kinds
    for word in _unit_words(intent, comp):
        unit = _SAME_UNIT.get(stem(word), stem(word))
        if not unit:
            continue
        if unit in _TIME_UNITS:
            times = [c for c in cands if kinds[c] == "time"]
            if len(times) == 1:
                return times[0], _TIME_UNITS[unit] * _seconds_per_unit(data.text(times[0]))
            return None
        said = [c for c in cands if kinds[c] != "time" and any(
            w == unit or (len(unit) >= 2 and w.startswith(unit) and len(w) - len(unit) <= 2) or stem(w) == unit
            for w in _name_words(names[c]))]
        if len(said) == 1:
            return said[0], 1.0
        if said:
            return None
        break  # the first word after the bound is the unit, or there is none
    by_word = implied(TableIntent(comp.words, comp.words.split()), names, list(cands))
    return (by_word, 1.0) if by_word is not None else None


_BARE_NUMBER = re.compile(r"-?\d[\d,.]*")


def one_number_column(m: TableMatch, implied: Callable[[TableIntent, Sequence[str], Sequence[int]], int | None]
                      ) -> None:
    """A number the question says ("played 18 games", "received 1 medal") that is a whole cell of several columns
    keys the one the words next to it name ("played" -> Played; "medal" -> Total): it does not filter every
    column it is found in (the rows with 18 in Played and in For)."""
    names = m.data.table.names
    by_number: dict[str, list[int]] = {}
    for c, key in m.keys.items():
        if _BARE_NUMBER.fullmatch(key.phrase):
            by_number.setdefault(key.phrase, []).append(c)
    for number, cols in by_number.items():
        if len(cols) < 2:
            continue
        at = re.search(rf"(?<![\w.,]){re.escape(number)}(?![\w]|[.,]\d)", m.intent.text)
        near = re.findall(r"[a-z]+", m.intent.text[max(0, at.start() - 30):at.end() + 30]) if at else []
        before = [w for w in re.findall(r"[a-z]+", m.intent.text[:at.start()])[-1:]] if at else []
        after = [w for w in re.findall(r"[a-z]+", m.intent.text[at.end():])[:1]] if at else []
        said = {stem(w) for w in before + after if w not in STOP}
        pick = [c for c in cols if said & {stem(w) for w in words_of(names[c])}]
        if not pick and near:
            found = implied(TableIntent(" ".join(after), after), names, cols)
            pick = [found] if found is not None else []
        if len(pick) == 1:  # else the keys stay, and their rows (the same number in each column) are few or none
            for c in cols:
                if c != pick[0]:
                    del m.keys[c]


_NONE_OF = re.compile(r"(\b(no|zero|without)|\bn(?:o|')t\b.*\bany)\s+(\w+\s+)?$")


def filter_zero(m: TableMatch) -> None:
    """A column of numbers the question names after "no" / "zero" / "not ... any" keeps the rows where it is 0 or
    empty ("how many countries earned no bronze medals": Bronze = 0)."""
    data, names, text, kinds = m.data, m.data.table.names, m.intent.text, m.data.table.kinds
    for c in range(len(names)):
        if m.scores[c] < 1.0 or c in m.keys or kinds[c] not in ("number", "money", "percent") or \
                names[c].strip().lower().rstrip(".") in ("no", "#", "number", "nr"):
            continue
        found = re.search(rf"\b{re.escape(names[c].lower())}\b", text)
        if found is None or not _NONE_OF.search(text[:found.start()]):
            continue
        numbers, cells = data.number(c), data.text(c)
        m.rows = [r for r in m.rows if numbers[r] == 0 or (numbers[r] is None and not value_of(cells[r]))]
        m.filters.append(f"{names[c]} is 0")


def best(scores: Sequence[float], allowed: Sequence[int]) -> int | None:
    best = max(allowed, key=lambda c: (scores[c], -c), default=None)
    return best if best is not None and scores[best] > 0 else None


_ORDINAL = re.compile(r"\b\d+(st|nd|rd|th)\b")
_SCORE = re.compile(r"^\s*\d+\s*[-–—:]\s*\d+")


def _scores(texts: Sequence[str]) -> bool:
    """A text column of scores or spans ("5-0", "2–1"): its numbers are not one value each."""
    filled = [t for t in texts if t.strip()]
    return sum(1 for t in filled if _SCORE.match(t)) >= len(filled) / 2


def mostly_numbers(numbers: Sequence[float | None], texts: Sequence[str]) -> bool:
    """A text column whose filled cells mostly start with a number ("12 km", "1st", "3:45.2")."""
    filled = [n for n, t in zip(numbers, texts, strict=True) if t]
    return bool(filled) and sum(1 for n in filled if n is not None) >= 0.8 * len(filled)


def _named_numbers(m: TableMatch, at_least: float = 1.0) -> list[int]:
    """The text columns the question names (at least ``at_least``) whose cells mostly start with a number, not
    scores ("5-0"); none for an ordinal bound ("above 4th": a place, read the other way)."""
    data, kinds = m.data, m.data.table.kinds
    return [c for c in range(len(kinds)) if kinds[c] == "text" and m.scores[c] >= at_least and data.whole
            and mostly_numbers(data.number(c), data.text(c)) and not _scores(data.text(c))
            and not _ORDINAL.search(m.intent.text)]


def filter_comparisons(m: TableMatch, implied: Callable[[TableIntent, Sequence[str], Sequence[int]], int | None]
                       ) -> bool:
    """Comparisons on the numeric (or date) column they name, else the only one of that kind; "in 1987" over a
    column of dates keeps that year's rows. False: a comparison names no column."""
    data, names, kinds, width = m.data, m.data.table.names, m.data.table.kinds, len(m.data.table.names)
    for comp in m.intent.comparisons:
        if comp.kind == "year":  # a date column (its dates' years) or a column of years
            cands = [c for c in range(width) if kinds[c] == "date" or years(data, c)]
        elif comp.kind == "monthday":
            cands = [c for c in range(width) if kinds[c] == "date"]
        elif comp.kind == "place":  # the column of places (Rank, Pos., Finish), whose numbers may be "4th"
            place = rank_column(data, m.scores, [c for c in range(width) if kinds[c] in NUMERIC or (
                data.whole and mostly_numbers(data.number(c), data.text(c)))])
            cands = [place] if place is not None else []
        else:
            cands = [c for c in range(width) if kinds[c] in NUMERIC and (kinds[c] == "date") == (comp.kind == "date")]
        on = best(m.scores, cands) if len(cands) > 1 else (cands[0] if cands else None)
        if comp.kind == "number" and on is not None and m.scores[on] == 0:  # "a weight of at least 45": the named
            named = _named_numbers(m)  # column of numbers written as text ("49.8 te"), not the one number column
            on = named[0] if len(named) == 1 else on
        if comp.kind == "year" and comp.low is not None and comp.high is not None and len(cands) > 1 and \
                sorted((m.scores[c] for c in cands), reverse=True)[1] == m.scores[on if on is not None else cands[0]]:
            return False  # a decade over "Term start" and "Term end": which one is not said
        if on is None and comp.kind == "year" and cands:
            on = cands[0]
        scale = 1.0
        if on is None and comp.kind == "number":  # the unit after the bound, a named column of numbers as text
            found = bound_column(m.intent, comp, data, cands, implied)
            texts = _named_numbers(m, 0.5)
            on, scale = found if found is not None else (texts[0], 1.0) if len(texts) == 1 else (None, 1.0)
        if on is None:
            return False
        if scale != 1.0:
            comp = Comparison(None if comp.low is None else comp.low * scale,
                              None if comp.high is None else comp.high * scale, comp.strict, comp.kind, comp.words)
        values = data.number(on)
        if comp.kind == "year" and kinds[on] == "date":
            values = [float(d.year) if (d := day_of(v)) is not None else None for v in values]
        elif comp.kind == "monthday":
            days = [day_of(v) for v in values]
            values = [float(d.month * 100 + d.day) if d is not None else None for d in days]
        m.rows = [r for r in m.rows if values[r] is not None and comp.admits(float(values[r] or 0))]
        m.filters.append(f"{names[on]} {comp.words}")
    year = re.search(r"\b(1[5-9]\d\d|20\d\d)\b", m.intent.text)
    dates = [c for c in range(width) if kinds[c] == "date"]
    if year and dates and not any(year.group(0) in c.words for c in m.intent.comparisons) and \
            not any(year.group(0) in data.text(c)[r].lower() for c in m.keys for r in m.keys[c].rows):
        on, wanted = dates[0], int(year.group(0))
        col_numbers = data.number(on)
        m.rows = [r for r in m.rows if (d := day_of(col_numbers[r])) is not None and d.year == wanted]
        m.filters.append(f"{names[on]} in {wanted}")
    month = month_in(m.intent.text)
    if month and dates and not any(month[1] in c.words for c in m.intent.comparisons) and \
            not any(month[1] in data.text(c)[r].lower() for c in m.keys for r in m.keys[c].rows):
        on = dates[0]
        col_numbers = data.number(on)
        m.rows = [r for r in m.rows if (d := day_of(col_numbers[r])) is not None and d.month == month[0]]
        m.filters.append(f"{names[on]} in {month[1]}")
    return True


_YEAR_NAME = re.compile(r"(?i)year|season|jahr|saison|ann[ée]e")


def years(data: TableData, c: int) -> bool:
    """A column of years: its filled cells are mostly numbers from 1500 to 2100 (or start with one: "2001-02"). A
    big table's column is read for it only when its name says so (Year, Season)."""
    if not data.whole and not _YEAR_NAME.search(data.table.names[c]):
        return False
    numbers = [n for n, t in zip(data.number(c), data.text(c), strict=True) if t]
    return bool(numbers) and sum(1 for n in numbers if n is not None and 1500 <= n <= 2100 and n == int(n)) \
        >= 0.8 * len(numbers)
