"""Which column a comparison in a table question is on when no column is named by its words (issue 49;
docs/tables.md): the unit written after the bound ("longer than thirty *miles*" -> Length (miles), "under 50 square
*km*" -> Land area (km²), "over 6 *minutes*" -> the column of times, the bound read in that column's minutes), or the
comparison's adjective ("taller than" -> Height). Pure: :mod:`shelfwise.core.answers.table_plan` asks it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from shelfwise.core.answers.table_intent import NUMBER_WORDS, Comparison, TableIntent, stem
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
