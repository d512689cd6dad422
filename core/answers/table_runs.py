"""Table questions about rows alike (issue 49; docs/tables.md): "the same X as A" (the other rows whose X
equals A's), "how many consecutive ..." / "the longest streak" (the longest run of adjacent rows that pass the
question's filters, or the value of a column repeated over the most adjacent rows), and the rows a result word
names ("wins", "losses", "draws": the rows of a column of results, W / L / D). A question of these kinds that the
rules here cannot read gets no table answer (the walk's sentence is shown), never another operation's value.
Pure: :mod:`shelfwise.core.answers.table_plan` calls these with its match of the question to one table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from shelfwise.core.answers.table_compute import Plan, value_of
from shelfwise.core.answers.table_intent import TableIntent, stem, words_of
from shelfwise.core.answers.table_match import TableMatch, col_scores
from shelfwise.core.store.tables import TableData

SAME = re.compile(r"\bsame\b(?!-)")
_SAME_AS = re.compile(r"\bthe same\b(?P<what>(?:\s+[^\s]+){0,10}?)\s+as\b")
_ONE = re.compile(r"^(name|tell me|give me|list) (a|an|one)\b|\b(a|an|one) (other )?\w+ (that|which|with|who|from)\b")
_ASKED_NOUN = re.compile(r"\b(?:what|which) (?:other )?([a-z]+)")
RUN = re.compile(r"\b(consecutive\w*|consective|in a row|streaks?|straight (wins|losses|games|years|seasons|"
                 r"victories|defeats|titles|weeks|times))\b")
_LONGEST = re.compile(r"\b(most|longest|highest|largest|greatest|maximum|max|biggest)\b")
MAX_LISTED = 20  # a "same as" answer of more rows than this is no answer (a list nobody reads)

# a column of results: its cells open with a result's letter or word ("W 3-1", "L", "Won", "Draw")
_RESULT_CELL = re.compile(r"(?i)^\s*(w|l|d|t|won|win|lost|loss|lose|draw|drawn|drew|tie|tied)\b")
_RESULT_OF = {"w": "w", "won": "w", "win": "w", "l": "l", "lost": "l", "loss": "l", "lose": "l", "d": "d",
              "draw": "d", "drawn": "d", "drew": "d", "t": "d", "tie": "d", "tied": "d"}
_RESULT_WORD = re.compile(r"\b(?:(?P<w>wins?|won|winning|victor(?:y|ies))|(?P<l>loss(?:es)?|lost|lose|losing|"
                          r"defeats?|defeated)|(?P<d>draws?|drew|drawn|ties|tied games))\b")
RESULT_SHARE = 0.6  # a column of results: at least this share of its filled cells open with a result


def result_column(data: TableData) -> int | None:
    """The first text column whose filled cells mostly (:data:`RESULT_SHARE`) open with a result (W / L / D, won,
    lost, draw) and hold both wins and losses; None when the table has none (a table of winners has no such
    column: "how many races did X win" is a count of X's rows there)."""
    for c, kind in enumerate(data.table.kinds):
        if kind != "text" or not data.whole:
            continue
        filled = [t for t in data.text(c) if t.strip()]
        said = [_result(t) for t in filled]
        if filled and sum(1 for s in said if s) >= RESULT_SHARE * len(filled) and {"w", "l"} <= set(said):
            return c
    return None


def _result(cell: str) -> str:
    m = _RESULT_CELL.match(cell)
    return _RESULT_OF[m.group(1).lower()] if m else ""


def filter_results(m: TableMatch) -> None:
    """The rows a result word of the question names ("how many losses", "consecutive wins"): the rows whose cell in
    the table's column of results (:func:`result_column`) opens with that result; the first such word counts,
    not one after "without" / "no" ("wins without a loss")."""
    word = next((w for w in _RESULT_WORD.finditer(m.intent.text)
                 if not re.search(r"\b(without|no|not|never)\s+(a\s+|any\s+)?$", m.intent.text[:w.start()])), None)
    if word is None:
        return
    names = m.data.table.names
    if any(_RESULT_WORD.search(n.lower()) or n.strip().lower() in ("w", "l", "d") for n in names):
        return  # a column of wins or losses ("Wins", "W"): the question names it, its numbers answer
    col = result_column(m.data)
    if col is None or col in m.keys:
        return
    want = next(k for k, v in word.groupdict().items() if v)
    cells = m.data.text(col)
    m.rows = [r for r in m.rows if _result(cells[r]) == want]
    said = {"w": "a win", "l": "a loss", "d": "a draw"}[want]
    m.filters.append(f"{names[col]} is {said}")


def plan_same_as(m: TableMatch, implied: Callable[[TableIntent, Sequence[str], Sequence[int]], int | None]
                 ) -> Plan | None:
    """"Which X has the same Y as A" / "how many X have the same Y as A": the rows other than A's whose cell in
    column Y (named by the words between "same" and "as", else by the question's other words) equals A's; their
    cells in the column asked for (else A's own column): one is the answer, several a list, "how many" their
    count (0 when none). A is the row the question names by a cell after "as" (else before "same"); None when
    that is not one row, or no column Y is named."""
    data, names, text = m.data, m.data.table.names, m.intent.text
    s = _SAME_AS.search(text)
    if s is None:
        return None
    keys = sorted(((c, k) for c, k in m.keys.items() if not k.negated), key=lambda ck: ck[1].start)
    anchor = next(((c, k) for c, k in keys if k.start >= s.end()), None) or \
        next(((c, k) for c, k in keys if k.start < s.start()), None)
    if anchor is None:
        return None
    key_col, key = anchor
    phrase = s.group("what").strip()
    said = TableIntent(phrase, words_of(phrase))
    scores = col_scores(said, names) if phrase else [0.0] * len(names)
    cols = [c for c in range(len(names)) if c != key_col and c not in m.keys]
    same_col = max(cols, key=lambda c: (scores[c], -c), default=None)
    if same_col is None or scores[same_col] <= 0:
        same_col = implied(said, names, [c for c in cols if c in m.numeric]) if phrase else None
    if same_col is None:
        return None
    anchors = [r for r in m.rows if r in key.rows] or sorted(key.rows)
    values = {_same_value(data, same_col, r) for r in anchors}
    if not anchors or len(values) != 1 or "" in values:
        return None
    value = values.pop()
    peers = [r for r in range(data.n_rows) if data.is_data(r) and r not in key.rows
             and _same_value(data, same_col, r) == value]
    answer = key_col
    noun = _ASKED_NOUN.search(text)
    asked = stem(noun.group(1)) if noun else stem(m.intent.asked) if m.intent.asked else ""
    named = [c for c in cols if c != same_col and asked and asked in {stem(w) for w in words_of(names[c])}]
    if named:
        answer = named[0]
    said_as = f"{names[same_col]} = {data.text(same_col)[anchors[0]]}, as for {data.text(key_col)[anchors[0]]}"
    if re.search(r"\bhow many\b", text) or re.search(r"\bnumber of\b", text[:s.start()]):
        return Plan("count", peers, same_col, answer, answer, None, [said_as])
    if not peers or len(peers) > MAX_LISTED:
        return None
    if _ONE.search(text):  # "name a city from the same country as Bangalore": one of them, the first listed
        peers = peers[:1]
    return Plan("same_as", [anchors[0], *peers], same_col, answer, key_col, None, [said_as])


def _same_value(data: TableData, col: int, r: int) -> str:
    """A cell as compared for "the same": its number when it has one, else its text in lower case ("" for none)."""
    n = data.number(col)[r]
    if n is not None:
        return repr(float(n))
    return value_of(data.text(col)[r]).strip().lower()


def plan_run(m: TableMatch, data_rows: Sequence[int]) -> Plan | None:
    """"How many consecutive ...", "the most consecutive wins", "the longest streak": the longest run of adjacent
    rows (in the table's order) that pass the question's filters, as its length; "which / who ... the most
    consecutive ...": the value of the column asked for that the most adjacent rows repeat. None for any other
    question of runs ("which driver had four consecutive wins"), and when no filter chose the rows."""
    text = m.intent.text
    counts = "count" in m.ops or bool(_LONGEST.search(text))
    if not counts:
        return None
    chosen = set(m.rows)
    if not m.filters and re.search(r"\bhow many\b.*\blisted\b", text):  # "how many consecutive numbers are listed"
        return Plan("streak", list(data_rows), None, m.label_col, m.key_col, None, [])
    if m.filters and len(chosen) < len(data_rows) and (not m.intent.asks_row or re.match(r"^what (is|was)\b", text)):
        runs = _runs([r in chosen for r in data_rows])
        if not runs:
            return None
        start, length = max(runs, key=lambda s: (s[1], -s[0]))
        rows = [data_rows[i] for i in range(start, start + length)]
        return Plan("streak", rows, None, m.label_col, m.key_col, None, list(m.filters))
    if m.intent.asks_row and not m.filters and m.answer_col is not None and m.scores[m.answer_col] >= 0.5:
        cells = [value_of(m.data.text(m.answer_col)[r]).strip().lower() for r in data_rows]
        best: list[tuple[int, int]] = []
        i = 0
        while i < len(cells):
            j = i
            while j + 1 < len(cells) and cells[j + 1] == cells[i]:
                j += 1
            if cells[i]:
                best.append((i, j - i + 1))
            i = j + 1
        if not best:
            return None
        top = max(length for _s, length in best)
        winners = {cells[s] for s, length in best if length == top}
        if top < 2 or len(winners) != 1:
            return None
        start = next(s for s, length in best if length == top)
        rows = [data_rows[i] for i in range(start, start + top)]
        return Plan("streak_value", rows, None, m.answer_col, m.answer_col, None, [])
    return None


def _runs(flags: Sequence[bool]) -> list[tuple[int, int]]:
    """(start, length) of each run of True in ``flags``."""
    out: list[tuple[int, int]] = []
    start = None
    for i, f in enumerate([*flags, False]):
        if f and start is None:
            start = i
        elif not f and start is not None:
            out.append((start, i - start))
            start = None
    return out


_PLURAL_ASK = re.compile(r"^(?:which|what) (?:two|three|four|five|six|\d+)\b|^(?:list|name) (?:all|each|every)\b|"
                         r"^(?:what|which) (?:are|were) the\b")
_COMPUTES = ("count", "sum", "average", "max", "min", "first", "last", "difference", "range")


def plan_list(m: TableMatch, asked: int | None) -> Plan | None:
    """"Which countries won at least 3 silver medals", "list all ... not ...": the cells of the column asked for
    (``asked``) of every row that passes the question's filters, as a list, when the
    question asks for several (a plural: "which countries", "which two", "list all"), its noun names a text column
    and 2 to :data:`MAX_LISTED` rows pass; None otherwise."""
    intent, data = m.intent, m.data
    word = intent.asked
    plural = bool(word) and stem(word) != word and len(word) > 3
    if not intent.asks_row or not (plural or _PLURAL_ASK.search(intent.text)) or not m.filters:
        return None
    if any(op in m.ops for op in _COMPUTES) or not 2 <= len(m.rows) <= MAX_LISTED:
        return None
    if asked is None or m.data.table.kinds[asked] != "text":
        return None  # the column asked for is named by the question's noun ("which countries": Country)
    col = asked
    key = m.keys.get(col)
    if key is not None and not key.negated:
        return None  # the column the filter names: every row says the same
    values = list(dict.fromkeys(v for r in m.rows if (v := value_of(data.text(col)[r]))))
    if len(values) < 2:
        return None
    return Plan("list", list(m.rows), None, col, m.key_col, None, list(m.filters))


def plan_only(m: TableMatch, asked: int | None) -> Plan | None:
    """The one row a comparison or "the only" keeps, when no column named by the question answered it ("which
    u-boat had more than 54 casualties", "who is the only driver from Japan"): its cell in the column asked for
    (``asked``), else its label; None when the filters keep more rows, or the answer would be the key's own cell."""
    intent = m.intent
    only = bool(re.search(r"\b(the only|der einzige|die einzige|le seul|la seule)\b", intent.text)) and bool(m.filters)
    if intent.asks_row and (intent.comparisons or only) and len(m.rows) == 1 and \
            not any(op in m.ops for op in _COMPUTES):
        # "which u-boat had more than 54 casualties", "who is the only driver from Japan": the one row kept
        col = asked if asked is not None else m.label_col
        key = m.keys.get(col)
        if key is not None and not key.negated:
            return None  # the cell the question names itself
        return Plan("lookup", list(m.rows), col, None, None, None, list(m.filters))
    return None


THAN_ROW = re.compile(r"\b(?P<word>more|less|fewer|greater|higher|lower|larger|smaller|bigger|longer|shorter|taller|"
                      r"heavier|lighter|older|younger|faster|slower|earlier|later)\b(?:\s+[a-z]+){0,3}?\s+than\s+"
                      r"(?!\d|that\b|any\b|all\b|the (?:other|rest|average)\b)")
_SMALLER = frozenset({"less", "fewer", "lower", "smaller", "shorter", "lighter", "younger", "faster", "earlier"})


def plan_than(m: TableMatch, implied: Callable[[TableIntent, Sequence[str], Sequence[int]], int | None],
              data_rows: Sequence[int], asked: int | None) -> Plan | None:
    """"How many players weigh more than Michael Baumer", "which stadium is larger than Nanjing Olympic Stadium":
    the rows other than A's (A: the one row a cell after "than" names) whose value in the column the question
    names (or implies: "taller" -> Height) is above (below: "less", "faster", "earlier") A's; how many, or their
    cells in the column asked for (else their labels), one or a list. None for anything else (a yes/no, "A or B",
    "how many more", a second filter)."""
    text = m.intent.text
    said = THAN_ROW.search(text)
    if said is None or m.intent.comparisons or re.search(r"\b(or|than any|each)\b", text) or len(m.filters) != 1:
        return None
    if any(op in m.ops for op in ("difference", "sum", "average")) or re.match(r"^(is|are|was|were|did|does|do)\b",
                                                                             text):
        return None
    after = [(c, k) for c, k in m.keys.items() if not k.negated and k.start >= said.end() - 1]
    if len(after) != 1 or len(after[0][1].rows) != 1:
        return None
    key_col, key = after[0]
    measure = m.measure if m.measure is not None and m.scores[m.measure] >= 0.5 else \
        implied(m.intent, m.data.table.names, m.numeric)
    if measure is None:
        return None
    numbers = m.data.number(measure)
    anchor = next(iter(key.rows))
    if numbers[anchor] is None:
        return None
    pivot = float(numbers[anchor] or 0)
    smaller = said.group("word") in _SMALLER
    rows = [r for r in data_rows if r != anchor and numbers[r] is not None
            and (float(numbers[r] or 0) < pivot if smaller else float(numbers[r] or 0) > pivot)]
    names = m.data.table.names
    filters = [f"{names[measure]} {'below' if smaller else 'above'} {m.data.text(measure)[anchor]} "
               f"({m.data.text(key_col)[anchor]})"]
    if re.search(r"\b(how many|number of)\b", text):
        return Plan("count", rows, measure, key_col, key_col, None, filters)
    if not m.intent.asks_row or not rows or len(rows) > MAX_LISTED:
        return None
    col = asked if asked is not None and asked != measure else key_col
    if len(rows) == 1:
        return Plan("lookup", rows, col, None, key_col, None, filters)
    return Plan("list", rows, None, col, key_col, None, filters)
