"""What a table question asks of one stored table (issue 49; docs/tables.md): the question read by rules
(:mod:`shelfwise.core.answers.table_intent`) and matched to the table's columns and cells
(:mod:`shelfwise.core.answers.table_match`) becomes a :class:`Plan`: the rows that pass its filters (a key or its
negation, a part of a cell, above / below / between a number, a date or a year, an empty or a yes cell) and the
operation over them (a lookup, count, sum, average, extreme, arg-max/arg-min, first/last, difference, range, the
next or previous row, a choice between two rows, a yes/no comparison), or None when the table does not answer.
:mod:`shelfwise.core.answers.table_compute` computes it; :mod:`shelfwise.core.answers.tables` tries the tables.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from shelfwise.core.answers.table_bounds import (
    best,
    filter_comparisons,
    filter_zero,
    mostly_numbers,
    one_number_column,
    years,
)
from shelfwise.core.answers.table_choice import offers_choice, plan_either, rank_column
from shelfwise.core.answers.table_compute import NUMERIC, Plan, caption, label_column
from shelfwise.core.answers.table_intent import (
    TableIntent,
    asks_yes_no,
    stem,
    words_of,
)
from shelfwise.core.answers.table_match import (
    Key,
    TableMatch,
    col_scores,
    key_cells,
    names_measure_after,
    negated,
    part_key,
)
from shelfwise.core.answers.table_order import ASKED, ASKS_TIME, descending_time, plan_first_last
from shelfwise.core.answers.table_other import plan_one, plan_other, sets_aside
from shelfwise.core.answers.table_runs import (
    RUN,
    SAME,
    THAN_ROW,
    filter_results,
    plan_list,
    plan_only,
    plan_run,
    plan_same_as,
    plan_than,
)
from shelfwise.core.answers.table_span import ASKS_SPAN, plan_span, plan_span_extreme
from shelfwise.core.answers.table_versus import asks_versus, plan_count_difference, plan_versus
from shelfwise.core.store.tables import TableData

_HOW_LONG = {"time", "duration", "length", "runtime", "running"}  # "how long did X take": the row's time
_ASKS_VALUE = re.compile(r"^(what|which|wie|was|quel\w*) (is|was|are|were|ist|war|est|était) (the|der|die|das|le|la)\b")
_AMOUNT = re.compile(_ASKS_VALUE.pattern + r" (most|least|highest|lowest|largest|smallest|fewest|greatest|maximum|"
                     r"minimum|biggest|höchste|niedrigste|größte|kleinste|plus grand|plus petit) (number|amount|"
                     r"total|count|anzahl|zahl|menge|nombre|quantité)\b")  # "what was the least number of laps"
_ALL_ROWS = re.compile(r"\b(listed|in the (list|table|chart)|on the (list|table|chart)|in total|altogether|"
                       r"total number of|insgesamt|au total)\b")
_YES_NO = re.compile(r"^(is|are|was|were|did|does|do|has|have|had|ist|sind|war|hat|est-ce)\b")
_YES = frozenset({"yes", "y", "✓", "✔", "x", "ja", "oui", "true"})
_NO = frozenset({"no", "n", "nein", "non", "false", "-", "—"})
YES_NO_SHARE = 0.6  # a column of yes/no cells: at least this share of its filled cells say yes or no
_IMPLIED = [  # a superlative's column when the question names none: (the question's word, words of the column name)
    (r"tallest|taller|shortest|shorter|height", ("height", "ht")),
    (r"heaviest|heavier|lightest|lighter|weight", ("weight", "wt")),
    (r"oldest|older|youngest|younger|\bage\b", ("age",)),
    (r"most populous|populat", ("population", "pop")),
    (r"fastest|slowest|quickest|time", ("time",)), (r"longest|longer|length", ("length", "duration")),
    (r"medals?", ("total",)), (r"votes?", ("votes", "total")), (r"points?|scor", ("points", "pts", "score")),
    (r"goals?", ("goals",)), (r"attend", ("attendance",)), (r"capacity|seats", ("capacity",)),
    (r"\b(losses|defeats)\b", ("lost", "losses", "l")), (r"\b(wins|victories)\b", ("won", "wins", "w")),
    (r"\bdraws\b", ("drawn", "draws", "drew", "d")),  # "the most losses" -> Lost (a superlative only)
]
_RESULTS = 3  # the last entries of _IMPLIED: results, read for "the most / least" alone (not "the total of wins")


def _implied_measure(intent: TableIntent, names: Sequence[str], numeric: Sequence[int]) -> int | None:
    """The column a superlative or a sum means when the question names none: "tallest" -> Height, "the most
    medals" -> Total; None when no word says which."""
    ops = {op for op, _said in intent.ops}
    extreme = bool(ops & {"max", "min"}) and not ops & {"sum", "average", "count", "difference"}
    for pattern, words in _IMPLIED if extreme else _IMPLIED[:-_RESULTS]:
        if re.search(pattern, intent.text):
            for c in numeric:
                if set(re.findall(r"\w+", names[c].lower())) & set(words):  # "Total" is a stop word of words_of
                    return c
    return None


_MORE = re.compile(r"\b(more|most|higher|highest|larger|largest|bigger|greater|longer|later|latest|taller|heavier|"
                   r"older|better|mehr|höher|größer|plus)\b")
_LESS = re.compile(r"\b(less|fewer|lower|smaller|shorter|earlier|faster|quicker|younger|weniger|kleiner|früher|"
                   r"moins)\b")
_EITHER = re.compile(r"\b(more|higher|greater|larger|longer|older|taller|earlier) or (less|fewer|lower|smaller|"
                     r"shorter|younger|later)\b")
_OR = re.compile(r"\b(or|oder|ou)\b")
_NEXT = re.compile(r"\b(after|next|following|succeeded|nach|danach|après|suivant)\b")
_PLACED = re.compile(r"\b(above|below)\s+(?!\d)(?!the (?:average|rest|others?)\b)")
_PREVIOUS = re.compile(r"\b(before|previous|preceding|prior to|preceded|vor|davor|avant|précédent)\b")


def _between_rows(m: TableMatch) -> Plan | None:
    """Questions about the rows the question names by their key cells: "which had more X, A or B" (two rows
    compared on the named column, or on their order for earlier / later), "is A higher than B" (yes or no) and
    "what came after / before A" (the next or previous row)."""
    assert m.key_col is not None
    data, text, names = m.data, m.intent.text, m.data.table.names
    measure = m.measure if m.measure is not None else _implied_measure(m.intent, names, m.numeric)
    key = m.keys[m.key_col]
    rows = sorted(key.rows)
    either = _EITHER.search(text)  # "more or less": the answer is one of the two words
    yes_no = bool(_YES_NO.match(text)) and (either is not None or not re.search(r"\b(or|oder|ou)\b", text))
    if len(rows) == 2 and (yes_no or re.search(r"\b(or|oder|ou)\b", text)):
        more, less = _MORE.search(text), _LESS.search(text)
        if more or less:
            word = (more or less).group(0)  # type: ignore[union-attr]
            larger = bool(more) and not (less and less.start() < more.start())  # type: ignore[union-attr]
            best: int | None = None
            said = f"{word} {names[measure]}" if measure is not None else ""
            if measure is not None and None not in [data.number(measure)[r] for r in rows]:
                best = (max if larger else min)(rows, key=lambda r: float(data.number(measure)[r] or 0))
            elif word in ("earlier", "later", "früher", "before", "after"):
                best, said = (rows[0] if word in ("earlier", "früher") else rows[-1]), f"{word} in the table's order"
            if best is not None:
                order = [best, *(r for r in rows if r != best)]
                labels = data.text(m.key_col)
                first = min(rows, key=lambda r: text.find(labels[r].lower()))  # the row the question names first
                wins = first == best  # "is A higher than B": yes when the row named first wins
                value = ((either.group(1 if wins == larger else 2) if either else ("yes" if wins else "no"))
                         if yes_no else "")
                return Plan("compare" if yes_no else "choice", order, measure, m.key_col, m.key_col, None,
                            [*m.filters, said], value)
    block = len(rows) > 1 and rows == list(range(rows[0], rows[-1] + 1))  # "next after the cardinals": a series
    if m.intent.comparisons or (len(rows) != 1 and not block) or key.negated:
        return None
    step = 1 if _NEXT.search(text) else -1 if _PREVIOUS.search(text) else 0
    forward = step  # "after" (1) / "before" (-1) as the question says it (in time)
    if descending_time(data):  # the newest row first: "after" (in time) is the row above
        step = -step
    placed = _PLACED.search(text) if not step else None  # "who is (directly) above X": the table's own order
    if placed is not None:
        step = forward = -1 if placed.group(1) == "above" else 1
    if block:  # the row after (before) the rows of one series, in the key's column, not another of the series
        if not step or "count" in m.ops or data.table.kinds[m.key_col] != "text" or _OR.search(text) or \
                not re.search(r"\b(what|which|who|wer|welche\w*|quel\w*|qui)\b", text):
            return None
        rows = [rows[-1]] if step > 0 else [rows[0]]
    if step and "count" in m.ops:  # "how many athletes finished before X": the rows above X's (below: after)
        counted = [r for r in range(data.n_rows) if data.is_data(r) and (r - rows[0]) * step > 0]
        side = f"{'after' if forward > 0 else 'before'} {data.text(m.key_col)[rows[0]]}"
        return Plan("count", counted, None, m.key_col, m.key_col, None, [side]) if counted else None
    r = rows[0] + step
    if not step or not 0 <= r < data.n_rows:
        return None
    named = [c for c in range(len(names)) if m.scores[c] >= 0.5]
    col = max(named, key=lambda c: (c != m.key_col, m.scores[c])) if named else m.key_col
    if text.startswith("who") or stem(m.intent.asked) in {stem(w) for w in words_of(names[m.key_col])}:
        col = m.key_col  # "who won after Arazi", "which team ... after Ballymore": the key's own column
    if data.table.kinds[m.key_col] == "date" and col == m.key_col and not ASKS_TIME.match(text):
        # "who won the game the day before the january 5, 1994 game": not the date, the column asked for
        asked = _asked_column(m)
        others = [c for c in named if c != m.key_col]
        col = asked if asked is not None and asked != m.key_col else max(others, key=lambda c: m.scores[c]) \
            if others else m.label_col if data.table.kinds[m.label_col] == "text" and not text.startswith("who") \
            else m.key_col  # "who did they play": a column of people or teams named, not the label (a venue)
        if col == m.key_col:
            return None
    return m.plan("next" if forward > 0 else "previous", [r, rows[0]], answer=col)


def _filter_keys(m: TableMatch, data_rows: list[int], parts: bool) -> None:
    """Each key filters its column (a negated key leaves its rows out); the column whose cells the question names
    with most words is the key column. Without a whole-cell key (and ``parts``), a phrase that is a part of some
    cells filters."""
    data, names = m.data, m.data.table.names
    one_number_column(m, _implied_measure)
    for col in sorted(m.keys, key=lambda c: -max(len(data.text(c)[r]) for r in m.keys[c].rows)):
        key = m.keys[col]
        label = " or ".join(sorted({data.text(col)[r] for r in key.rows}))
        if key.negated:  # "other than Lisbon"
            m.rows = [r for r in m.rows if r not in key.rows]
            m.filters.append(f"{names[col]} is not {label}")
            continue
        col_text = data.text(col)
        everyone = {r for r in data_rows if col_text[r][:3].lower() in ("all", "eve", "tou")
                    and re.match(r"(?i)^(all|every|alle|tous|toutes)\b", col_text[r])}
        m.rows = [r for r in m.rows if r in key.rows or (r in everyone and "count" in m.ops)]
        m.filters.append(f"{names[col]} = {label}")
        m.key_col = col if m.key_col is None else m.key_col
    if not parts or any(not k.negated for k in m.keys.values()):  # "other than Lyon, ... in Belgrade": a part
        return  # of a cell may filter beside a key set aside
    found = m.given_key if m.given_key is not None else _part_key(m, set(m.keys))
    if found is not None and found[0] not in m.keys:
        col, key = found
        m.keys[col] = key
        m.rows = [r for r in m.rows if (r in key.rows) != key.negated]
        m.filters.append(f"{names[col]} {'does not hold' if key.negated else 'holds'} \"{key.phrase}\"")
        if not key.negated:
            m.key_col = col


def _part_key(m: TableMatch, taken: set[int] | None = None) -> tuple[int, Key] | None:
    """The phrase of the question that is a part of some cells (:func:`part_key`; not of the columns ``taken``),
    words of the columns it names and of its operations left out."""
    names = m.data.table.names
    named = {stem(w) for c in range(len(names)) if m.scores[c] >= 0.5 for w in words_of(names[c])}
    return part_key(m.intent, m.data, named | {stem(w) for w in m.intent.op_words()}, taken or set())


def _filter_named_columns(m: TableMatch) -> None:
    """A text column the question names with a negation keeps the rows where it is empty ("wrestlers who do not
    have any notes"); a named column of yes/no cells keeps its yes rows ("how many rides are portable"), its
    other rows when negated."""
    data, names, text = m.data, m.data.table.names, m.intent.text
    for c in range(len(names)):
        if m.scores[c] < 1.0 or c in m.keys or data.table.kinds[c] != "text":
            continue
        found = re.search(rf"\b{re.escape(names[c].lower())}\b", text)
        if found is None:
            continue
        no = negated(text, found.start()) or bool(re.search(r"\b(no|without|ohne|sans)\s+(\w+\s+)?$",
                                                            text[:found.start()]))
        if not no and not data.whole:  # a big table's column is read for yes / no cells only when negated
            continue
        cells = data.text(c)
        filled = [cells[r].strip().lower() for r in m.rows if cells[r].strip()]
        said = sum(1 for v in filled if v in _YES or v in _NO)
        if filled and said >= YES_NO_SHARE * len(filled) and any(v in _YES for v in filled):
            m.rows = [r for r in m.rows if (cells[r].strip().lower() in _YES) != no]
            m.filters.append(f"{names[c]} {'is not' if no else 'is'} yes")
        elif no:
            m.rows = [r for r in m.rows if not cells[r].strip()]
            m.filters.append(f"{names[c]} is empty")


def _asked_column(m: TableMatch) -> int | None:
    """The column a "which X" / "what X" / "who" question asks for: the one whose name has the word X (not the
    measure); for "who" without one, a column of people's names (Name, Player, Candidate ...)."""
    names, asked = m.data.table.names, stem(m.intent.asked) if m.intent.asked else ""
    cands = [c for c in range(len(names)) if c != m.measure]
    if asked:
        found = [c for c in cands if asked in {stem(w) for w in words_of(names[c])}]
        heads = [c for c in found if [stem(w) for w in words_of(re.sub(r"\(.*?\)", " ", names[c]))][-1:] == [asked]]
        # "which company provides ...": not "Company contribution" (its head word is not X) over "Provider", named whole
        if heads or (found and not any(m.scores[c] >= 1.0 for c in cands if c not in found and c != m.key_col)):
            return (heads or found)[0]
    if re.match(r"(who|wer|qui)\b", m.intent.text) and (m.answer_col is None or m.scores[m.answer_col] < 0.5):
        people = ASKED["who"] | ASKED["wer"] | {"nom"}
        return next((c for c in cands if c != m.key_col and {stem(w) for w in re.findall(r"\w+", names[c].lower())}
                     & people), None)  # "Name" too, a stop word of words_of
    return None


def _match(intent: TableIntent, data: TableData, scores: list[float], parts: bool,
           given_key: tuple[int, Key] | None = None) -> TableMatch | None:
    """``intent`` matched to ``data`` (:class:`TableMatch`; ``parts``: a part of a cell may be a key), or None when a
    comparison names no column of the table."""
    names, kinds, width = data.table.names, data.table.kinds, len(data.table.names)
    header_words = {w for c in range(width) if scores[c] >= 0.5 for w in words_of(names[c])}
    ops = [op for op, said in intent.ops if not set(said.split()) <= header_words]
    data_rows = [r for r in range(data.n_rows) if data.is_data(r)]
    m = TableMatch(intent, data, scores, ops, key_cells(intent, data), list(data_rows), parts=parts,
               given_key=given_key)
    _filter_keys(m, data_rows, parts)
    _filter_named_columns(m)
    filter_zero(m)
    filter_results(m)
    if not filter_comparisons(m, _implied_measure):
        return None
    m.numeric = [c for c in range(width) if c != m.key_col and (kinds[c] in NUMERIC or (
        data.whole and mostly_numbers(data.number(c), data.text(c))))]
    asked = _asked_column(m)  # "what year had the most X": Year is asked for, X is the measure
    m.measure = best(scores, [c for c in m.numeric if c != asked])
    if m.measure is None and any(op in ops for op in ("max", "min", "difference", "sum", "average")):
        m.measure = _implied_measure(intent, names, [c for c in m.numeric if c != asked])
    if m.measure is None:
        m.measure = best(scores, m.numeric)
    m.answer_col = best(scores, [c for c in range(width) if c != m.key_col and c != m.measure])
    if asked is not None and asked != m.measure:
        m.answer_col = asked
    m.label_col = label_column(data)
    return m


def _part_later(m: TableMatch) -> bool:
    """Whether no key filters yet (but one that sets a row aside) and the looser pass will find a name the question
    writes with a capital that is a part of some cells ("the last match in Belgrade": the rows whose City holds
    Belgrade, not every match)."""
    if m.parts or any(not k.negated for k in m.keys.values()) or not m.intent.names:
        return False
    found = _part_key(m, set(m.keys))
    return found is not None and set(words_of(found[1].phrase)) <= set(m.intent.names)


def _plan_count(m: TableMatch) -> Plan | None:
    """"How many ...": the rows that pass the filters, or a column of numbers the counted noun names ("how many
    days ..." is that column's value or sum); without a filter, only when the noun is what the table's caption,
    sheet or label column names, or the question says it counts the table's rows ("listed", "in total") and no
    part of a cell filters them."""
    intent, data, names, kinds = m.intent, m.data, m.data.table.names, m.data.table.kinds
    noun = stem(intent.counted) if intent.counted else ""
    counted_col = next((c for c in m.numeric if noun and noun in {stem(w) for w in words_of(names[c])}
                        and not years(data, c)), None)  # "the total number of seasons": not a sum of years
    if counted_col is None and noun and len(m.rows) == 1 and m.key_col is not None:
        counted_col = _implied_measure(TableIntent(noun, [noun]), names, m.numeric)  # "medals" -> Total
    if counted_col is not None and kinds[counted_col] != "date":
        if len(m.rows) == 1 and m.key_col is not None:
            return m.plan("lookup", measure=counted_col)
        if "sum" in m.ops and not intent.comparisons:  # "how many points in total ..."
            return m.plan("sum", measure=counted_col)
    if m.key_col is not None and m.measure is not None and m.scores[m.measure] >= 0.5 and len(m.rows) == 1:
        return m.plan("lookup", measure=m.measure)
    table = data.table
    sheet = table.sheet if _first_on_sheet(data) else ""  # a sheet's name names its first table's rows
    title_words = {stem(w) for w in words_of(f"{caption(table)} {sheet} {names[m.label_col]}")} | {
        stem(w) for c in range(len(names)) if kinds[c] == "text" for w in words_of(names[c])}
    loose = [k for k in m.keys.values() if not k.exact]
    if loose and not _counts_rows(m, noun) and (noun in _UNITS or any(k.share < NAMED_SHARE for k in loose)):
        return None  # "how many days of paid annual leave": not the rows a word of their cells names
    if noun not in _GENERIC_COUNTED and _names_one_thing(m):  # "how many goals does Zoltán Kiss have": a value
        # of his row, not a count of rows
        measure = m.measure if m.measure is not None else _implied_measure(intent, names, m.numeric)
        has_number = measure is not None and m.data.number(measure)[m.rows[0]] is not None
        return m.plan("lookup", measure=measure) if has_number else None
    if m.filters:  # not "how many days of paternity leave in Lisbon" in a table that has no paternity leave
        have = _words_of_table(m) if noun in _UNITS and intent.counted_of else None
        absent = have is not None and not {stem(w) for w in intent.counted_of} & have
        return None if absent else m.plan("count", answer=m.label_col)
    # every row ("how many bands", "how many ... listed"), unless a phrase of the question is a part of some cells:
    # that is a filter the looser pass reads ("how many matches in Belgrade")
    if ((noun and noun in title_words and not _unread_words(m, noun)) or (_ALL_ROWS.search(intent.text) and m.parts)
            ) and (m.parts or _part_key(m) is None):
        return m.plan("count", answer=m.label_col)
    return None


def _count(m: TableMatch | None) -> Plan | None:
    return _plan_count(m) if m is not None and m.rows and "count" in m.ops else None


def _counts_text(m: TableMatch) -> bool:
    """Whether "how many" / "the number of" counts what a text column (or a column of years) names: "the total
    number of teams that played" counts Team rows, "the number of seasons" counts Season rows."""
    noun = stem(m.intent.counted) if m.intent.counted else ""
    names, kinds = m.data.table.names, m.data.table.kinds
    return bool(noun) and any(noun in {stem(w) for w in words_of(names[c])}
                              and (kinds[c] == "text" or years(m.data, c)) for c in range(len(names)))


def _first_on_sheet(data: TableData) -> bool:
    """Whether the table is the first of its sheet (or not in a sheet)."""
    t = data.table
    if not t.sheet:
        return True
    return data.conn.execute("SELECT 1 FROM doc_tables WHERE document_id = ? AND sheet = ? AND ordinal < ?",
                             (t.document_id, t.sheet, t.ordinal)).fetchone() is None


def _words_of_table(m: TableMatch) -> set[str] | None:
    """The light stems of a table's title, sheet, column names and text cells; None for a table too big to read
    for them (:data:`WORDS_READ` cells)."""
    t = m.data.table
    if not m.data.whole or t.n_rows * len(t.names) > WORDS_READ:
        return None
    out = {stem(w) for w in words_of(f"{t.title} {t.sheet} {' '.join(t.names)}")}
    return out | {stem(w) for c in range(len(t.names)) if t.kinds[c] == "text" for v in set(m.data.text(c))
                  for w in words_of(v)}


def _unread_words(m: TableMatch, noun: str) -> bool:
    """Whether the question has a word, other than the counted noun and its operation, that the table does not have
    and no filter read: "how many holidays does the Berlin office have" is not every holiday."""
    return bool(_unread(m, {noun}))


def _unread(m: TableMatch, skip: set[str]) -> set[str]:
    """The question's words (light stems; not numbers, not the operation's, not those in ``skip``) the table does
    not have (none for a table too big to read for its words)."""
    said = {stem(w) for w in m.intent.words if not w.isdigit() and len(w) > 2} - skip
    said -= {stem(w) for w in m.intent.op_words()} | _QUESTION_WORDS
    have = _words_of_table(m)
    return set() if have is None else said - have


_QUESTION_WORDS = frozenset({"how", "wie", "viele", "combien", "there", "exist", "altogether", "total", "listed",
                             "list", "table", "chart", "da", "gibt", "y", "have", "got", "get", "wann", "wer", "wo",
                             "quand", "où"})


WORDS_READ = 20_000  # a table of more cells is not read whole for its words (a count's noun, unread words)
NAMED_SHARE = 0.5  # a part of a cell that is at least this share of its words names the cell ("russian": "Russia")
_UNITS = frozenset({"day", "week", "month", "year", "hour", "minute", "second", "km", "mile", "meter", "metre",
                    "euro", "dollar", "eur", "usd", "tag", "jour", "woche", "monat", "jahr", "semaine", "mois", "an"})
_GENERIC_COUNTED = frozenset({"time", "occasion", "row", "entry", "one", "mal"})


def _names_one_thing(m: TableMatch) -> bool:
    """Whether the question's only filter names one cell (whole, or most of it) of a column whose cells are all
    different (one row, a name: "Zoltán Kiss", "Harvard University"; a year or a date: "in 2013", "on 2013-05-21"):
    "how many ..." then asks for a value of that row, not how many rows there are (a count of 1 was seldom right
    there: docs/eval/tables.md)."""
    if len(m.rows) != 1 or m.key_col is None or len(m.filters) != 1 or m.intent.comparisons:
        return False
    key = m.keys.get(m.key_col)
    if key is None or key.negated or key.share < NAMED_SHARE:
        return False
    values = [v.strip().lower() for r, v in enumerate(m.data.text(m.key_col)) if v.strip() and m.data.is_data(r)]
    return len(values) > 2 and len(set(values)) == len(values)


def _counts_rows(m: TableMatch, noun: str) -> bool:
    """Whether the counted noun is what the table's rows are: a word of its caption, sheet or column names, or
    a word for "rows" ("how many times"). A count filtered by a part of cells needs it when the part is small or
    the noun is a unit: "how many days of paid annual leave" counts no row of a pay-items table that has "Annual
    salary review", nor the benefits whose name has "employee"."""
    t = m.data.table
    return noun in _GENERIC_COUNTED or noun in {stem(w) for w in words_of(f"{t.title} {t.sheet} {' '.join(t.names)}")}


_MOST_OF = re.compile(r"\b(most|least|fewest)\s+(?!recent)(?:\w+\s+){0,2}?\w+s\b|"
                      r"\b(meisten|wenigsten|le plus de|le moins de)\s+\w+")


def _plan_extreme(m: TableMatch) -> Plan | None:
    """max / min: the row with the highest value of the measure ("which ... the most X"), the value itself ("what
    is the highest X"), or the value of a named column seen most / least often."""
    year_cols = [c for c in range(len(m.data.table.names)) if years(m.data, c)]
    asked = year_cols[0] if len(year_cols) == 1 and m.intent.asked in ("year", "years", "jahr", "année") else None
    most = _MOST_OF.search(m.intent.text)
    if most and asked is not None and (m.measure is None or m.measure == asked) and \
            not any(m.scores[c] > 0 for c in m.numeric if c != asked) and not ({"sum", "average"} & set(m.ops)):
        # "what year had the most singles": the year the most rows have (not the latest year)
        fewest = (most.group(1) or most.group(2)) in ("least", "fewest", "wenigsten", "le moins de")
        return m.plan("least_often" if fewest else "most_often", answer=asked)
    for op in ("max", "min"):
        if op not in m.ops:
            continue
        if (m.measure is None and m.intent.asks_row and m.answer_col is not None
                and m.scores[m.answer_col] >= 0.5):
            return m.plan("most_often" if op == "max" else "least_often", answer=m.answer_col)
        if m.measure is not None:
            amount = _AMOUNT.match(m.intent.text) and (m.answer_col is None or m.scores[m.answer_col] < 0.5)
            if _ASKS_VALUE.match(m.intent.text) and (amount or (m.answer_col is None and (
                    not m.intent.asks_row or names_measure_after(m, op)))):
                return m.plan(op, measure=m.measure)  # "what is the highest maximum salary": the value itself
            if m.intent.asks_row or m.answer_col is not None:
                col = m.answer_col if m.answer_col is not None else m.label_col
                return m.plan("arg" + op, measure=m.measure, answer=col)
    return None


def _plan_lookup(m: TableMatch) -> Plan | None:
    """The key row's cell in the column the question names (or a question word's column: "when" -> a date)."""
    if m.key_col is None or not m.rows:
        return None
    names, kinds, width, scores = m.data.table.names, m.data.table.kinds, len(m.data.table.names), m.beside_key()
    target = max((c for c in range(width) if c != m.key_col), key=lambda c: (scores[c], -c))
    asked = _HOW_LONG if m.intent.text.startswith("how long") else ASKED.get(m.intent.text.split(" ", 1)[0])
    if scores[target] <= 0 and asked is not None:  # "when ...": the column of dates or named When
        found = next((c for c in range(width) if c != m.key_col and (
            set(words_of(names[c])) & asked or (kinds[c] in ("date", "time") and "date" in asked)
            or (kinds[c] == "time" and "time" in asked))), None)
        if found is None and "date" in asked:
            found = target  # "when ...": none such, the row's first other column
        return m.plan("lookup", m.rows[:1], measure=found) if found is not None else None  # "who": not a date
    if scores[target] >= 0.5 and (m.given_key is None or col_scores(m.intent, names)[target] >= 0.5):
        return m.plan("lookup", m.rows[:1], measure=target)  # an encoder's key: the column named by words
    return None


_TOP = re.compile(r"^(?:who|which \w+)\b.*(?:\b(?:placed|finished|came|ranked|was ranked|is ranked) (?:in )?"
                  r"(?:first|1st|the top spot|the top|top)\b|\b(?:first|top|highest)[- ](?:ranked|ranking|place|placed|"
                  r"spot)\b|\bthe highest rank\b|\b(?:first|1st) place\b|\bnumber one\b)")


def _plan_top(m: TableMatch, asked: int | None) -> Plan | None:
    """"Who placed first", "who is the top ranked swimmer", "who has the highest rank": the one row with the
    lowest value of the table's column of places (Rank, Place, Pos.); its cell in the column asked for (for "who":
    a column of people), else its label. None without such a column, or when several rows share the place."""
    if not _TOP.search(m.intent.text) or m.intent.comparisons:
        return None
    rank = rank_column(m.data, m.scores, [c for c in range(len(m.data.table.names))
                                          if m.data.table.kinds[c] == "number"])
    if rank is None:
        return None
    numbers = m.data.number(rank)
    have = [r for r in m.rows if numbers[r] is not None]
    if not have:
        return None
    low = min(float(numbers[r] or 0) for r in have)
    rows = [r for r in have if numbers[r] == low]
    if low > 1:  # the medal places left empty ("", "", "", 4, 5 ...): the first row listed is the top, else none is
        first = next((r for r in range(m.data.n_rows) if m.data.is_data(r)), None)
        rows = [first] if first is not None and first in m.rows and numbers[first] is None and \
            not m.data.text(rank)[first].strip() else []
    col = asked if asked is not None and asked != rank else m.label_col
    if len(rows) != 1 or col == rank:
        return None
    return Plan("lookup", rows, col, None, rank, None, [*m.filters, f"the top {m.data.table.names[rank]}"])


def _plan(m: TableMatch) -> Plan | None:
    """The operation over the matched table, tried in order: the rows the keys name, a range, a difference, an
    average, a count, a sum, an extreme, first / last, a lookup. A question of rows alike ("the same X as A",
    "consecutive") is answered by :mod:`shelfwise.core.answers.table_runs` or not at all."""
    longest = plan_span_extreme(m, _asked_column(m))  # "who served longer, A or B", "served the longest"
    if longest is not None:
        return longest
    chose, either = plan_either(m, _implied_measure, years)
    if chose:  # "which had more X, A or B": one of the two, or no answer
        return either
    if ASKS_SPAN.search(m.intent.text):  # "how long did X serve": the years of X's row, else as before
        span = plan_span(m)
        if span is not None:
            return span
    if sets_aside(m):  # "what stadium other than X did they play in": that, or no answer (not X's row, nor
        return None if _part_later(m) else plan_other(m, _asked_column(m))  # the first of several)
    if SAME.search(m.intent.text):
        return plan_same_as(m, _implied_measure)
    if RUN.search(m.intent.text):
        return plan_run(m, [r for r in range(m.data.n_rows) if m.data.is_data(r)])
    if THAN_ROW.search(m.intent.text):
        rows = [r for r in range(m.data.n_rows) if m.data.is_data(r)]
        than = plan_than(m, _implied_measure, rows, _asked_column(m))
        if than is not None:
            return than
    if m.key_col is not None:
        plan = _between_rows(m)
        if plan is not None:
            return plan
    if "count" in m.ops and m.intent.asks_row and any(op in m.ops for op in ("max", "min")):
        m.ops = [op for op in m.ops if op != "count"]  # "which ... the most number of"
    if "range" in m.ops:
        lo = next((c for c in m.numeric if re.search(r"(?i)\b(min|minimum|low|from|von|de)\b", m.data.table.names[c])),
                  None)
        hi = next((c for c in m.numeric if re.search(r"(?i)\b(max|maximum|high|to|bis|à)\b", m.data.table.names[c])),
                  None)
        if lo is not None and hi is not None:
            op = "argmin_range" if re.search(r"narrow|small|kleinst|petit", m.intent.text) else "argmax_range"
            return m.plan(op, measure=hi, answer=m.label_col if m.answer_col is None else m.answer_col, other=lo)
    if "difference" in m.ops:
        if m.key_col is not None and m.measure is not None and len(m.rows) == 2:
            return m.plan("difference", measure=m.measure)
        two = sorted((c for c in m.numeric if m.scores[c] > 0), key=lambda c: -m.scores[c])[:2]
        if len(m.rows) == 1 and len(two) == 2:
            return m.plan("difference", measure=two[0], other=two[1])
    if "average" in m.ops and m.measure is not None:
        return m.plan("average", measure=m.measure)
    if "count" in m.ops:
        plan = _plan_count(m)
        if plan is not None:  # "how many more episodes did A direct than B": A's rows less B's
            return plan_count_difference(m, plan) if "difference" in m.ops else plan
        if m.measure is None or m.scores[m.measure] < 0.5 or _counts_text(m):  # "the total number of teams":
            m.ops = [op for op in m.ops if op != "sum"]  # not a sum of a column the question does not name, nor of
            # another column than the one of what it counts ("teams that played": not the sum of Played)
    if "sum" in m.ops and any(op in m.ops for op in ("max", "min")) and m.intent.asks_row:
        m.ops = [op for op in m.ops if op != "sum"]  # "which department has the most total deputies"
    if "sum" in m.ops and m.measure is not None and m.data.table.kinds[m.measure] != "date":
        return m.plan("sum", measure=m.measure)
    asked = _asked_column(m)
    top = _plan_top(m, asked)
    if top is not None:
        return top
    only = plan_only(m, asked) if asked is not None and re.match(r"(who|wer|qui)\b", m.intent.text) else None
    return (_plan_extreme(m) or plan_first_last(m, _asked_column, _unread, _part_later) or plan_list(m, asked)
            or only or _plan_lookup(m) or plan_only(m, asked) or plan_one(m))


def plan_question(intent: TableIntent, data: TableData, scores: Sequence[float] | None = None,
                  parts: bool = False, given_key: tuple[int, Key] | None = None) -> Plan | None:
    """The operation over ``data`` that ``intent`` asks for, or None (see the module docstring). ``scores``: how
    well each column is named, when not the exact words' (:func:`col_scores`); ``parts``: a phrase that is a part
    of some cells may filter them (when no cell is named whole); ``given_key``: (column, rows) found otherwise
    (the encoder's) that filter in its stead."""
    names = data.table.names
    if len(names) < 2 or not data.n_rows:
        return None
    scores = list(scores) if scores is not None else col_scores(intent, names)
    versus = asks_versus(intent.text)  # "are there more or less than 24 titles": a count against the number
    if versus is not None:
        return plan_versus(intent, data, versus, lambda it: _count(_match(it, data, scores, parts, given_key)))
    m = _match(intent, data, scores, parts, given_key)
    if m is None or not m.rows:
        return None
    plan = _plan(m)
    if plan is not None and plan.op != "compare" and asks_yes_no(intent.text):
        return None  # "did X win more than Y?" answered by a row's value is no answer to it
    if plan is not None and plan.op not in ("compare", "choice", "span") and offers_choice(intent.text):
        return None  # "which model has a larger drive: model 01 or model 02?" is not answered by a drive's size
    return plan
