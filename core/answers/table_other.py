"""The other rows (issue 49; docs/tables.md): "what stadium other than anz stadium did the auckland warriors play
in", "besides tikamgarth, what is the other district", "clivio piccione and what other driver", "außer Lyon,
welcher Gegner ...", "quel autre adversaire que Lyon ...": the question names a row (A) it sets aside and asks for
another of the same kind. The answer is the cells of A's column (or the column asked for) in the rows that pass the
question's other filters, A's rows left out: the one value there is; the first for "name a / one"; every one for
a plural ("what other languages"); else no answer. And "name a / tell me a X that ..." with no row set aside:
the first row the filters keep (:func:`plan_one`). Planned over one matched table for
:mod:`shelfwise.core.answers.table_plan`.
"""

from __future__ import annotations

import re

from shelfwise.core.answers.table_compute import Plan, value_of
from shelfwise.core.answers.table_intent import stem
from shelfwise.core.answers.table_match import TableMatch

MAX_OTHERS = 20  # a plural's list of more values than this is no answer
# asks for one of several: "name a ...", "name one ...", "tell me a ...", "nenne ein...", "citez un..."
_ONE = re.compile(r"\b(?:name|tell me|give|nenne\w*|citez?|donnez?)\s+(?:a|an|one|another|ein\w*|un|une)\b")
_ASKS = re.compile(r"\b(?:what|which|who|name|tell me|welche\w*|wer|nenne\w*|quel\w*|qui|citez?)\b")
# the words that set a row aside ("not" only with "the only": "the only wager that is not hair")
_ASIDE = re.compile(r"\b(?:other than|besides|beside|except|excluding|apart from|aside from|(?:and|und|et) "
                    r"(?:what|which|welche[rsn]?|quel(?:le)?s?) (?:other|another|andere\w*|autres?)|außer|ausser|"
                    r"andere[rsn]? als|sauf|hormis|autres? que)\b|\bthe only\b.*\bnot\b")
_NOUN = re.compile(r"\b(?:which|what|quel(?:le)?s?) (?:other |autres? )?(\w+)")
_COUNTS = ("count", "sum", "average", "max", "min", "first", "last", "difference", "range")


def sets_aside(m: TableMatch) -> bool:
    """Whether the question sets one row aside by a cell it names and asks for another ("other than A, which
    ...", "A and what other ..."), counting or computing nothing."""
    aside = [k for k in m.keys.values() if k.negated]
    return (len(aside) == 1 and not any(op in m.ops for op in _COUNTS) and bool(_ASKS.search(m.intent.text))
            and bool(_ASIDE.search(m.intent.text)))


def plan_other(m: TableMatch, asked: int | None) -> Plan | None:
    """The other row(s) of A's kind (see the module docstring), or None: the question does not set a row aside
    (:func:`sets_aside`), or the other filters leave several values where one is asked for."""
    if not sets_aside(m):
        return None
    aside = [(c, k) for c, k in m.keys.items() if k.negated]
    col, key = aside[0]
    if asked is not None and asked != col and m.data.table.kinds[asked] == "text":
        col = asked  # "other than kurt busch, name a driver ...": the column asked for
    cells = m.data.text(col)
    rows = [r for r in m.rows if value_of(cells[r]).strip() and r not in key.rows]
    values = list(dict.fromkeys(cells[r].strip() for r in rows))
    said = [*m.filters]
    if len(values) == 1 or (values and _ONE.search(m.intent.text) and len(m.filters) > 1):
        first = next(r for r in rows if cells[r].strip() == values[0])
        return Plan("lookup", [first], col, None, None, None, said)
    noun = _NOUN.search(m.intent.text)  # "besides ajax, which opponents ...": the noun asked for
    word = noun.group(1) if noun else ""
    plural = bool(word) and stem(word) != word and len(word) > 3
    if plural and 2 <= len(values) <= MAX_OTHERS:
        return Plan("list", rows, None, col, None, None, said)
    return None


def plan_one(m: TableMatch) -> Plan | None:
    """"Name one title not developed by melbourne house", "nenne ein ...", "citez un ...": one of the rows the
    question's filters keep (the first listed), its cell in the column the noun after "a" names (else its label);
    a bound is a filter where the question names its column ("a district that did not have a population over
    600,000": at most 600,000); None without a filter, when it would be the filter's own cell, or for a
    computation."""
    said = _ONE.search(m.intent.text)
    if said is None or not m.filters or not m.rows or any(op in m.ops for op in _COUNTS):
        return None
    if m.intent.comparisons and (m.measure is None or m.scores[m.measure] < 0.5):
        return None  # "name a game won by at least 3 goals": not a bound on Attendance, the one column of numbers
    noun = re.match(r"\s*(\w+)", m.intent.text[said.end():])
    names, kinds = m.data.table.names, m.data.table.kinds
    word = stem(noun.group(1)) if noun else ""
    named = [c for c in range(len(names)) if kinds[c] == "text"
             and word in {stem(w) for w in re.findall(r"\w+", names[c].lower())}]
    col = named[0] if named else m.label_col
    key = m.keys.get(col)
    if key is not None and not key.negated:
        return None  # the cell the question names itself
    cells = m.data.text(col)
    first = next((r for r in m.rows if value_of(cells[r]).strip()), None)
    return Plan("lookup", [first], col, None, None, None, list(m.filters)) if first is not None else None
