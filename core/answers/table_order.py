"""First and last (issue 49; docs/tables.md): "the first album released", "what was neha's last film", "when was
the last battle", "who was the last japanese player to finish": the earliest or latest row in time when the question
names (or asks for) a column of dates or years, else the first or last row in the table's own order (read from its
end when the table lists its rows newest first), among the rows the question's filters keep. Planned over one
matched table (:class:`~shelfwise.core.answers.table_match.TableMatch`) for
:mod:`shelfwise.core.answers.table_plan`, which passes the two readings it owns (the column a "which X" asks for;
whether the question has words the table lacks).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise

from shelfwise.core.answers.table_bounds import years
from shelfwise.core.answers.table_compute import Plan
from shelfwise.core.answers.table_intent import MONTHS, stem, words_of
from shelfwise.core.answers.table_match import TableMatch, col_scores
from shelfwise.core.store.tables import TableData

ASKED = {  # a question word and the column names it asks for when the question names no column
    "when": {"when", "date", "day", "wann", "datum", "quand"}, "wann": {"when", "date", "datum", "wann"},
    "quand": {"date", "quand", "jour"},
    "who": {"who", "name", "provider", "person", "owner", "contact", "player", "athlete", "candidate", "driver",
            "rider", "artist", "winner", "member", "representative", "incumbent", "cyclist", "swimmer", "author"},
    "wer": {"name", "anbieter", "wer"}, "where": {"where", "location", "place", "city", "office", "venue"},
    "wo": {"ort", "stadt", "wo", "standort"}, "où": {"lieu", "ville", "où"},
}
_LISTED = re.compile(r"\b(listed|in the list|on the list|in the table|on the chart|on the record|on the album)\b")
# "ranked first", "first place": a place (table_plan's _plan_top), not the first row
_RANKED_FIRST = re.compile(r"\b(?:rank(?:ed)?|placed?|finish(?:ed)?|came|come|position) (?:in )?first\b|"
                           r"\bfirst (?:place|position)\b|\b(?:erste[rn]?|premi(?:er|ère)) (?:platz|place)\b")
# the question asks for a time: "when", "in what year", "on which date" (German, French: "wann", "quand", ...)
ASKS_TIME = re.compile(r"^(?:when|wann|quand|(?:in |on |during )?(?:what|which) (?:year|date|day|season)s?|"
                       r"(?:in )?welchem jahr|an welchem (?:tag|datum)|(?:en )?quelle (?:année|date))\b")
_WHICH_X = re.compile(r"^(?:which|what|welche[rsn]?|quel(?:le)?s?) (\w+)")
UNREAD_ALLOWED = 1  # words of the question the table lacks that a first / last in the table's order tolerates


def descending_time(data: TableData) -> bool:
    """Whether the table lists its rows newest first: its first column of dates or years falls more often than
    it rises from one row to the next."""
    col = next((c for c, kind in enumerate(data.table.kinds) if kind == "date" or years(data, c)), None)
    if col is None:
        return False
    values = [v for r, v in enumerate(data.number(col)) if v is not None and data.is_data(r)]
    falls = sum(1 for a, b in pairwise(values) if b < a)
    rises = sum(1 for a, b in pairwise(values) if b > a)
    return falls >= 2 and falls > rises


def _same_stem(a: str, b: str) -> bool:
    """Two words of one stem: "released" / "release", "incorporated" / "incorporation" (a common start of at
    least five letters that leaves at most three letters of the shorter word)."""
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return n >= 5 and n >= min(len(a), len(b)) - 3


def _time_column(m: TableMatch) -> int | None:
    """A column of dates or years that the question names, by its words or by a word of the same stem ("the
    first album released" -> Release date)."""
    names, words = m.data.table.names, [w for w in m.intent.words if len(w) >= 5]
    for c in range(len(names)):
        if m.data.table.kinds[c] != "date" and not years(m.data, c):
            continue
        by_words = col_scores(m.intent, names)[c] >= 0.5  # not the encoder's: "the first day" is not a Date
        if by_words or any(_same_stem(w, n) for w in words for n in words_of(names[c]) if len(n) >= 5):
            return c
    return None


AskedColumn = Callable[[TableMatch], "int | None"]
Unread = Callable[[TableMatch, "set[str]"], "set[str]"]
Later = Callable[[TableMatch], bool]


def plan_first_last(m: TableMatch, asked_column: AskedColumn, unread: Unread, later: Later) -> Plan | None:
    """"first" / "last": in time when the question names a column of dates or years (the row with the earliest
    or latest; that column's value itself when the question asks a time: "on what date was the first episode
    broadcast"), else in the table's own order (the row first or last listed). ``asked_column``: the column a
    "which X" asks for; ``unread``: how many of the question's words (less those given) the table lacks;
    ``later``: whether a looser pass will filter by a phrase that is a part of some cells ("the last match in
    Belgrade": then not yet, the last of all the matches)."""
    names, scores, col = m.data.table.names, m.scores, m.answer_col
    for op in ("first", "last"):
        if op not in m.ops:
            continue
        if later(m):
            return None
        when = _time_column(m) if not _LISTED.search(m.intent.text) else None
        if when is not None and (stem(m.intent.asked) in {stem(w) for w in words_of(names[when])}  # "what year"
                                 or ASKS_TIME.match(m.intent.text)):
            return m.plan("min" if op == "first" else "max", measure=when)
        target = col if col is not None and col != when and scores[col] >= 0.5 else m.label_col
        if when is not None and target != when:
            return m.plan("argmin" if op == "first" else "argmax", measure=when, answer=target)
        if (m.intent.asks_row and col is not None and scores[col] >= 0.5
                and stem(m.intent.asked) in {stem(w) for w in words_of(names[col])}):  # "which school ... first"
            return m.plan(op, answer=col)
        if _LISTED.search(m.intent.text):  # "the last country listed", "the last year listed": the table's order
            asked = asked_column(m) if m.intent.asked else None
            if asked is None and m.measure is not None and m.intent.asked and \
                    stem(m.intent.asked) in {stem(w) for w in words_of(names[m.measure])}:
                asked = m.measure  # "the last year listed": Year, a column of numbers
            named = col if col is not None and scores[col] >= 0.5 else None
            return m.plan(op, answer=next((c for c in (asked, named) if c is not None), m.label_col))
        if when is None and (m.intent.asks_row or m.intent.text.split(" ", 1)[0] in ASKED):
            return _in_order(m, op, asked_column, unread)
    return None


def _tolerated(m: TableMatch, missing: set[str], op: str) -> bool:
    """Whether the words of the question the table lacks (``missing``, light stems) still leave the table what it
    asks about: at most :data:`UNREAD_ALLOWED`, each said after the first / last word (the rows' kind: "the last
    *draftee*", "the first *loan*"), not before it (what is asked of them: "the *referee* of the final")."""
    if not missing:
        return True
    said = next((w for o, w in m.intent.ops if o == op), "")
    at = m.intent.text.find(said) if said else -1
    after = {stem(w) for w in words_of(m.intent.text[at + len(said):])} if at >= 0 else set()
    kind = _WHICH_X.match(m.intent.text)  # "which country is last": the rows' kind too
    after |= {stem(kind.group(1))} if kind else set()
    return len(missing) <= UNREAD_ALLOWED and missing <= after


def _in_order(m: TableMatch, op: str, asked_column: AskedColumn, unread: Unread) -> Plan | None:
    """"which leg was the last leg", "when was the last battle", "who was the last japanese player to finish":
    the first or last row in the table's order (in time: a table listed newest first is read from its end) of
    the rows the filters keep; its cell in the column the question asks for ("which X", "when" -> a date,
    "who" -> a person, "what year" -> the row's year), else the column it names, else the row's label.
    Only when the table has the question's words (:func:`_tolerated`: "draftee" in "who was the last draftee"
    may be missing), an owner's name before the first / last word not counted ("neha's last film": whose
    the table is); with a filter that is not the asked noun itself,
    the table is what the question is about. None for "ranked first" (a place) and where the answer
    would be a row's date that the question does not ask for."""
    names, kinds, col = m.data.table.names, m.data.table.kinds, m.answer_col
    if op == "first" and _RANKED_FIRST.search(m.intent.text):
        return None
    filtered = bool(m.filters) and not any(stem(k.phrase) == stem(m.intent.asked) for k in m.keys.values())
    said = next((w for o, w in m.intent.ops if o == op), "")
    owners = {stem(w) for found in re.finditer(rf"\b((?:\w+ )?\w+'s) {re.escape(said)}\b", m.intent.text)
              for w in found.group(1).split()} if said else set()
    if not filtered and not _tolerated(m, unread(m, owners), op):  # "what time should a new starter arrive on
        return None  # the first day", "who was the referee of the final": not this table's rows
    named = col if col is not None and m.scores[col] >= 0.5 else None
    asked = ASKED.get(m.intent.text.split(" ", 1)[0])
    by_word = None if asked is None else next((c for c in range(len(names)) if set(
        re.findall(r"\w+", names[c].lower())) & asked or (kinds[c] in ("date", "time") and "date" in asked)), None)
    if asked is not None and by_word is None and named is None:
        return None
    target = asked_column(m) if m.intent.asked else None
    if target is None and (m.intent.asked in ("year", "date") or ASKS_TIME.match(m.intent.text)):
        target = next((c for c in range(len(names)) if kinds[c] == "date" or years(m.data, c)), None)
        if target is None:  # "what was the year of the last title": the row's date or year, else no answer
            return None
    target = next((c for c in (target, by_word, named) if c is not None), None)
    if target is None and re.search(rf"\b(?:{'|'.join(MONTHS)})\b", " ".join(m.data.text(m.label_col)[:3]).lower()):
        return None  # "which team was the first one the black hawks lost to": not a row's date
    if descending_time(m.data):
        op = "first" if op == "last" else "last"
    return m.plan(op, answer=target if target is not None else m.label_col)
