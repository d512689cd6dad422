"""A count set against a number the question gives (issue 49; docs/tables.md): "are there more or
less than 24 titles on the chart?", "were there more or fewer than 5 players picked from the united states?",
"gab es mehr oder weniger als 10 Spiele?", "y a-t-il plus ou moins de 10 matchs ?". The rows the question's other
filters keep are counted as "how many <noun>" counts them, and the answer is the word of the two that holds
("less"); none on a tie or when nothing counts them. And a count set against another count: "how many more
episodes did A direct than B" (:func:`plan_count_difference`). Pure: :mod:`shelfwise.core.answers.table_plan`
calls :func:`plan_versus` with its matching and counting steps.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from shelfwise.core.answers.table_compute import Plan
from shelfwise.core.answers.table_intent import NUMBER_WORDS, STOP, TableIntent, read_intent
from shelfwise.core.answers.table_match import TableMatch
from shelfwise.core.store.tables import TableData

_MORE = r"more|greater|over|above|mehr|plus"
_LESS = r"less|fewer|under|below|weniger|moins"
_VERSUS = re.compile(rf"\b(?P<a>{_MORE}|{_LESS}) (?:or|oder|ou) (?P<b>{_MORE}|{_LESS}) (?:than|als|de|que) "
                     rf"(?P<n>\d[\d,]*|{'|'.join(NUMBER_WORDS)})(?P<rest> [\w'-]+)?")


def asks_versus(text: str) -> re.Match[str] | None:
    """The "more or less than N" of a question, when its two words go opposite ways."""
    found = _VERSUS.search(text)
    if found is None or bool(re.fullmatch(_MORE, found.group("a"))) == bool(re.fullmatch(_MORE, found.group("b"))):
        return None
    return found


def plan_versus(intent: TableIntent, data: TableData, found: re.Match[str],
                count: Callable[[TableIntent], Plan | None]) -> Plan | None:
    """The word of "more or less than N" that the count of the rows holds (``count``: the table's count for an
    intent), or None."""
    said = found.group("n").replace(",", "")
    bound = float(NUMBER_WORDS[said]) if said in NUMBER_WORDS else float(said)
    noun = (found.group("rest") or "").strip()
    noun = "" if noun in STOP else noun
    counted = intent.counted or noun
    if not counted:
        return None
    end = found.end() if noun else found.end("n")
    rest = f"{intent.text[:found.start()]} {intent.text[end:]}"  # the number is no cell to look up
    rest = re.sub(r"\b(?:the )?(?:total )?number of [\w'-]+", " ", rest) if intent.counted else rest
    asks = {"mehr": "wie viele", "weniger": "wie viele", "plus": "combien de", "moins": "combien de"}.get(
        found.group("a"), "how many")  # the question's own language
    rest = re.sub(r"^(are|were|where|is|was) there |^(gab|gibt) es |^(wurden|waren|sind) |^y a-t-il |^il y a ", "",
                  rest.strip())
    plan = count(read_intent(f"{asks} {counted} {rest}"))
    if plan is None or plan.op != "count" or not plan.rows:
        return None
    n = len(plan.rows)
    if n == bound:
        return None
    more_first = bool(re.fullmatch(_MORE, found.group("a")))
    word = found.group("a") if (n > bound) == more_first else found.group("b")
    col = plan.answer_col if plan.answer_col is not None else 0
    return Plan("compare", plan.rows, None, col, None, None,
                [*plan.filters, f"{n} rows, {word} than {found.group('n')}"], word)


def plan_count_difference(m: TableMatch, count: Plan) -> Plan:
    """"How many more episodes did shelley jensen direct than madeline cripe", "wie viele Spiele mehr ...": when
    the question's count keeps the rows of two values of one key column and it names no column of numbers to
    subtract, the difference of their rows (``count_difference``); else the count as planned."""
    if count.key_col is None or (m.measure is not None and m.scores[m.measure] >= 0.5):
        return count
    if len({m.data.text(count.key_col)[r] for r in count.rows}) != 2:
        return count
    return Plan("count_difference", count.rows, None, count.answer_col, count.key_col, None, count.filters)
