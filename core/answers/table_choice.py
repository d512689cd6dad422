"""Table questions that offer a choice, "A or B" (issue 49; docs/tables.md): "which nation has more gold medals,
kuwait or india?", "who is older, X or Y?", "was ernst gaedckens a platoon leader or a commander?". The two
options are found in the table's cells, whole or as a part of them ("india" in "India (IND)", "boonen" in "Tom
Boonen"); the answer is one of the two: the one whose row wins on the column the question names (or implies, or
the rows' dates for "earlier"; a rank's column read the other way round: "finished higher" is the lower place),
the one with more rows for "more often", or the one a row named by another cell holds. A question that offers
such a choice and that these rules cannot decide gets no table answer (the walk's sentence), never another
operation's value. Pure: :mod:`shelfwise.core.answers.table_plan` calls :func:`plan_either` with its match.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shelfwise.core.answers.table_compute import Plan, value_of
from shelfwise.core.answers.table_intent import STOP, TableIntent, stem, words_of
from shelfwise.core.answers.table_match import TableMatch, col_scores
from shelfwise.core.store.tables import TableData

_TOKEN = re.compile(r"[\w$€£%'.&/+-]+", re.UNICODE)
_BOUNDARY = re.compile(r"[,:;?!\"“”()]|--|—|–")
_NOT_OPTION = frozenset({"more", "less", "fewer", "greater", "higher", "lower", "above", "below", "over", "under",
                         "after", "before", "later", "earlier", "not", "no", "false", "true", "equal", "so",
                         "older", "younger", "smaller", "larger", "worse", "better", "same"})
_LEAD = frozenset({"the", "a", "an", "by", "in", "on", "at", "for", "to", "of", "from", "with", "did", "does", "do",
                   "was", "were", "is", "are", "has", "have", "had", "which", "who", "what", "whether", "song",
                   "album", "team", "player", "country", "nation", "either", "between", "than"})
OPTION_WORDS = 6  # the longest option looked for on either side of "or"
CELL_WORDS = 8  # a cell of more words (a note, a sentence) is not an option's cell
OPTION_SHARE = 0.25  # an option's words must be at least this share of a cell's words to name it

# the comparison a question's word asks for: (pattern, larger wins, what it compares)
_WORDS: list[tuple[str, bool, str]] = [
    (r"(?:been around|in use|existed|in existence|been open|been active) longer", False, "time"),
    (r"earlier|earliest|first|sooner|before|older than|oldest", False, "time"),
    (r"later|latest|last|more recent|most recent|newer|newest|after", True, "time"),
    (r"older", True, "age"), (r"younger", False, "age"),
    (r"faster|fastest|quicker|quickest", False, "speed"), (r"slower|slowest", True, "speed"),
    (r"closer|closest|nearer|nearest", False, "distance"), (r"farther|further|farthest", True, "distance"),
    (r"ranked higher|rank higher|finished higher|placed higher|finish higher|higher (?:rank|place|position|"
     r"placement|seed)|better (?:rank|place|position|placement|finish)|above", False, "rank"),
    (r"ranked lower|rank lower|finished lower|placed lower|lower (?:rank|place|position|placement|seed)|"
     r"worse (?:rank|place|position|placement|finish)|below", True, "rank"),
    (r"more|most|higher|highest|larger|largest|bigger|biggest|greater|greatest|longer|longest|taller|tallest|"
     r"heavier|heaviest|wider|widest|deeper|deepest|top", True, "value"),
    (r"less|least|fewer|fewest|lower|lowest|smaller|smallest|shorter|shortest|lighter|lightest|narrower", False,
     "value"),
]
_RANK = re.compile(r"(?i)^(rank|rk|place|pos|position|pos\.|finish|finished|standing|seed|#|no\.?|placing|"
                   r"ranking|result)$|\brank\b|\bplace\b|\bposition\b|\bfinish")
_TIME_NAME = re.compile(r"(?i)year|season|date|released?|born|birth|built|founded|established|opened|completed|"
                        r"first|from|began|start|since|when|held|aired|formed|died")
_COUNTS = re.compile(r"^(how many|what is the number of|the number of|number of|what are the number of)\b")
_NEGATIVE = re.compile(r"\b(not|n't|never|neither|nor)\b")
_LISTED = re.compile(r"\b(listed|in the (list|table|chart)|on the (list|table|chart))\b")
# "more" of rows: "who won more races", "who hosted more often", "who was second more" (not "more successful")
_COUNTED = re.compile(r"\b(more|most|fewer|less|least)(?: (?:often|times|\w+s))?$|\b(more|most|fewer|least) "
                      r"(?:often|times|\w+s)\b")
_EVENT_COL = [(r"\b(die|died|death)\b", "death"), (r"\b(born|birth)\b", "birth")]

@dataclass
class Option:
    """One side of "A or B": its words as the question writes them, where it stands, and the rows whose cell of
    ``col`` names it."""

    phrase: str
    start: int
    end: int
    col: int = -1
    rows: tuple[int, ...] = ()


def _holds_phrase(cell: str, phrase: str) -> bool:
    """Whether a cell (of any length) holds the phrase's words in a row."""
    words, want = _cell_words(cell), phrase.split()
    return any(all(_same(q, w) for q, w in zip(want, words[i:i + len(want)], strict=True))
               for i in range(len(words) - len(want) + 1))


def _in_row(data: TableData, r: int, phrase: str, skip: set[int]) -> bool:
    """Whether row ``r`` has a cell, outside the columns ``skip``, that holds the phrase."""
    return any(_holds_phrase(t, phrase) for c, t in enumerate(data.row_texts(r)) if c not in skip)


def _spans(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(0).strip("'.").lower(), m.start(), m.end()) for m in _TOKEN.finditer(text)
            if m.group(0).strip("'.")]


def sides(text: str) -> tuple[list[tuple[str, int, int]], list[tuple[str, int, int]]] | None:
    """The words before and after the one "or" of ``text`` (each up to a comma, a colon, a question mark, a dash
    or :data:`OPTION_WORDS` words), or None when the question has no "or" of a choice ("true or false", "or more",
    "more or less", a list of three)."""
    found = [m for m in re.finditer(r"\bor\b", text)]
    if len(found) != 1 or re.search(r"\btrue or false\b|\beither\b", text):
        return None
    at = found[0]
    left_text, right_text = text[:at.start()], text[at.end():]
    cut = [m.end() for m in _BOUNDARY.finditer(left_text)]
    left_from = cut[-1] if cut else 0
    if left_text[left_from:].strip() == "" and cut:  # "beautiful, or j'adore": the comma before "or"
        cut2 = [m.end() for m in _BOUNDARY.finditer(left_text[:cut[-1] - 1])]
        left_from = cut2[-1] if cut2 else 0
    skip = len(right_text) - len(right_text.lstrip(" \"'“”"))  # 'or "make me feel"': the quote opens it
    stop = _BOUNDARY.search(right_text, skip)
    right_to = at.end() + (stop.start() if stop else len(right_text))
    left = [(w, s + left_from, e + left_from) for w, s, e in _spans(text[left_from:at.start()])][-OPTION_WORDS:]
    right = [(w, s + at.end(), e + at.end()) for w, s, e in _spans(text[at.end():right_to])][:OPTION_WORDS + 4]
    if not left or not right or right[0][0] in _NOT_OPTION or left[-1][0] in _NOT_OPTION:
        return None
    if re.search(r",\s*$", left_text) and re.search(r",", text[:left_from]):  # "king, marquis, or duke": three
        return None
    return left, right


_TWO_WAYS = re.compile(r"\b(more or less|less or more|above or below|below or above|higher or lower|lower or higher|"
                       r"before or after|after or before|earlier or later|later or earlier|older or younger|"
                       r"younger or older|true or false|equal to,? or)\b")
_ASKS_WHICH = re.compile(r"^(did|does|do|was|were|is|are|has|have|had|who|which|what)\b")


def offers_choice(text: str) -> bool:
    """Whether the answer must be one of two things the question names: "..., A or B?", "did A or B ...", or a
    word of two ways ("more or less", "above or below", "true or false"). Any other table value is then no
    answer to it ("model 01 or model 02?" is not "20GB HDD")."""
    if _TWO_WAYS.search(text):
        return True
    split = sides(text)
    if split is None or _COUNTS.match(text) or not _ASKS_WHICH.match(text):
        return False
    left, right = split
    at_end = right[-1][2] >= len(text.rstrip("?!. \"'”")) and _BOUNDARY.search(text[:left[0][1]]) is not None
    return at_end or text.split(" ", 1)[0] in ("did", "does", "do", "was", "were", "is", "are", "has", "have", "had")


def _content(words: Sequence[str]) -> list[str]:
    return [w for w in words if w not in STOP]


def _cell_words(text: str) -> list[str]:
    return [w for w, _s, _e in _spans(text)]


def _same(q: str, w: str) -> bool:
    return q == w or stem(q) == stem(w)


def _names(cell: list[str], want: list[str]) -> bool:
    """Whether a cell's words hold the option's words in a row and the option is a large enough part of it."""
    n = len(want)
    if not cell or len(cell) > CELL_WORDS or n < OPTION_SHARE * len(_content(cell) or cell):
        return False
    return any(all(_same(q, w) for q, w in zip(want, cell[i:i + n], strict=True)) for i in range(len(cell) - n + 1))


def _candidates(words: list[tuple[str, int, int]], left: bool) -> list[Option]:
    """The option phrases one side may be: the words next to "or", longest first; leading articles and question
    words dropped; at least one word that is not a stop word."""
    out = []
    for n in range(len(words), 0, -1):
        part = words[-n:] if left else words[:n]
        while part and part[0][0] in _LEAD:
            part = part[1:]
        if not part or not _content([w for w, _s, _e in part]):
            continue
        out.append(Option(" ".join(w for w, _s, _e in part), part[0][1], part[-1][2]))
    return list({o.phrase: o for o in out}.values())


def find_options(data: TableData, text: str, rows: Sequence[int]) -> tuple[Option, Option] | None:
    """The two options of "A or B": the longest phrase on either side of "or" that names some cells, with the rows
    of the first column where both name cells and not the same ones (no column: ``col`` -1); None when a side names
    no cell."""
    split = sides(text)
    if split is None or not data.whole or _COUNTS.match(text):
        return None
    lefts, rights = _candidates(split[0], True), _candidates(split[1], False)
    if not lefts or not rights:
        return None
    width = len(data.table.names)
    words = {c: [_cell_words(t) for t in data.text(c)] for c in range(width)}
    found: dict[tuple[str, int], tuple[int, ...]] = {}

    def rows_of(o: Option, c: int) -> tuple[int, ...]:
        if (o.phrase, c) not in found:
            want = o.phrase.split()
            found[(o.phrase, c)] = tuple(r for r in rows if _names(words[c][r], want))
        return found[(o.phrase, c)]

    # each side is its longest phrase that names some cells (anywhere): "lake george", not "lake" of "Panther Lake"
    a = next((o for o in lefts if any(rows_of(o, c) for c in range(width))), None)
    b = next((o for o in rights if any(rows_of(o, c) for c in range(width))), None)
    if a is None or b is None:
        return None
    if any(set(rows_of(a, c)) & set(rows_of(b, c)) for c in range(width)):
        return None  # one cell names both ("the hit or miss label": the label Hit or Miss): no choice
    for c in range(width):
        ra, rb = rows_of(a, c), rows_of(b, c)
        if ra and rb:
            return (Option(a.phrase, a.start, a.end, c, ra), Option(b.phrase, b.start, b.end, c, rb))
    return Option(a.phrase, a.start, a.end), Option(b.phrase, b.start, b.end)  # in different columns
    return None


def _direction(text: str) -> tuple[bool, str, str] | None:
    """The comparison asked for: (larger wins, what it compares, the word), the first word the question has."""
    best: tuple[int, bool, str, str] | None = None
    for pattern, larger, what in _WORDS:
        m = re.search(rf"\b(?:{pattern})\b", text)
        if m and (best is None or m.start() < best[0] or (m.start() == best[0] and len(m.group(0)) > len(best[3]))):
            best = (m.start(), larger, what, m.group(0))
    return best[1:] if best is not None else None


def _time_col(data: TableData, text: str, named: Sequence[float], years: Callable[[TableData, int], bool]
              ) -> int | None:
    """The column of dates or years "earlier" / "later" compares: the one the question names, else the only one,
    else the first whose name says a time (Year, Released, Born)."""
    kinds, names = data.table.kinds, data.table.names
    cols = [c for c in range(len(names)) if kinds[c] == "date" or years(data, c)]
    said = [c for c in cols if named[c] >= 0.5]
    if said:
        return said[0]
    if len(cols) == 1:
        return cols[0]
    for pattern, word in _EVENT_COL:  # "who died first": Date of death, not Date of birth
        if re.search(pattern, text):
            return next((c for c in cols if word in names[c].lower()), None)
    return next((c for c in cols if _TIME_NAME.search(names[c])), None)


def rank_column(data: TableData, named: Sequence[float], numeric: Sequence[int]) -> int | None:
    """The column of places (Rank, Place, Pos., Finish) among ``numeric``: the one the question names, else the
    first."""
    names = data.table.names
    cols = [c for c in numeric if _RANK.search(names[c].strip())]
    said = [c for c in cols if named[c] >= 0.5]
    return (said or cols)[0] if cols else None


def plan_either(m: TableMatch, implied: Callable[[TableIntent, Sequence[str], Sequence[int]], int | None],
                years: Callable[[TableData, int], bool]) -> tuple[bool, Plan | None]:
    """"A or B" over the matched table: (whether the question offers a choice between two things the table names,
    the plan that decides it or None). See the module docstring."""
    data, text, names = m.data, m.intent.text, m.data.table.names
    rows = [r for r in range(data.n_rows) if data.is_data(r)]
    pair = find_options(data, text, rows)
    if pair is None:
        return False, None
    a, b = pair
    if a.col < 0:  # the two options are not in one column: a choice the table does not decide
        return True, None
    inside = [(a.start, b.end)]
    # the rest of the question, "A or B" left out: the column it names is not named by an option's words
    rest = " ".join(w for w, s, _e in _spans(text) if not any(lo <= s < hi for lo, hi in inside))
    named = col_scores(TableIntent(rest, words_of(rest)), names)
    anchors = [(c, k) for c, k in m.keys.items() if c != a.col and not k.negated
               and not any(lo <= k.start < hi for lo, hi in inside)]
    if anchors:  # "was johnny williamson or dick mcgowen the coach in 1952": the row 1952 names holds one option
        held = set.intersection(*(set(k.rows) for _c, k in anchors))
        if len(held) == 1:  # the row's own cells, long ones too ("Platoon leader and shock troop leader in ...")
            in_row = [o for o in (a, b) if _in_row(data, next(iter(held)), o.phrase, {c for c, _k in anchors})]
            if len(in_row) == 1:
                r = next(iter(held))
                c, cell = next((c, t) for c, t in enumerate(data.row_texts(r)) if _holds_phrase(t, in_row[0].phrase))
                return True, Plan("choice", [r], None, c, c, None, [*m.filters, f"{names[c]} of that row"],
                                  _as_written(cell, in_row[0].phrase))
        ra, rb = [r for r in a.rows if r in held], [r for r in b.rows if r in held]
        if bool(ra) != bool(rb):
            win = a if ra else b
            return True, _plan(m, win, a, b, ra or rb, None, f"{names[a.col]} of the row of "
                               f"{', '.join(data.text(c)[next(iter(held))] for c, _k in anchors)}")
        if ra and rb:
            a = Option(a.phrase, a.start, a.end, a.col, tuple(ra))
            b = Option(b.phrase, b.start, b.end, b.col, tuple(rb))
        else:
            return True, None
    if _NEGATIVE.search(rest):  # "which nation was not in the top 10, iran or germany"
        return True, None
    if _LISTED.search(rest) and re.search(r"\b(first|earlier|before|last|later|after)\b", rest):
        first = min(a.rows[0], b.rows[0]) == a.rows[0]  # "who is listed first": the table's own order
        early = bool(re.search(r"\b(first|earlier|before)\b", rest))
        win = a if first == early else b
        return True, _plan(m, win, a, b, list(win.rows), None, "listed " + ("first" if early else "last"))
    said = _direction(re.sub(r"\b(more|less) or (less|more)\b", " ", rest))
    if said is None:
        return True, None
    larger, what, word = said
    numeric = [c for c in m.numeric if c != a.col]
    measure = next((c for c in sorted(numeric, key=lambda c: -named[c]) if named[c] >= 0.5), None)
    if measure is None and what in ("value", "age", "distance", "speed"):
        measure = implied(TableIntent(rest, words_of(rest)), names, numeric)
    if what == "rank" or (measure is None and what == "value" and word in ("higher", "lower", "top")):
        rank = rank_column(data, named, numeric)
        if rank is not None and (measure is None or measure == rank):
            measure, larger = rank, (not larger if what == "value" else larger)
    if measure is None and what in ("time", "age"):
        when = _time_col(data, rest, named, years)
        if when is not None and when != a.col:
            measure, larger = when, (larger if what == "time" else not larger)  # older: the earlier year
    if measure is None and what == "speed":
        measure = next((c for c in numeric if data.table.kinds[c] == "time"), None)
    if measure is None:
        if what == "value" and _COUNTED.search(rest) and max(len(a.rows), len(b.rows)) > 1 and \
                len(a.rows) != len(b.rows):
            win = a if (len(a.rows) > len(b.rows)) == larger else b
            return True, _plan(m, win, a, b, list(win.rows), None, f"{word} rows: {len(a.rows)} for {a.phrase}, "
                               f"{len(b.rows)} for {b.phrase}")
        return True, None
    if what == "rank" and len(a.rows) > 1 and len(b.rows) > 1:
        return True, None
    best = _winner(data, a, b, measure, larger, what)
    return True, (_plan(m, best, a, b, list(best.rows), measure, f"{word} {names[measure]}") if best else None)


def _winner(data: TableData, a: Option, b: Option, measure: int, larger: bool, what: str) -> Option | None:
    """The option whose rows win on ``measure`` (``larger``: the larger value wins), or None when it is not clear:
    a tie, a value missing, several rows each (for dates and ages: the earliest / latest of each)."""
    numbers = _numbers(data, measure)
    va = [float(n) for r in a.rows if (n := numbers[r]) is not None]
    vb = [float(n) for r in b.rows if (n := numbers[r]) is not None]
    if not va or not vb:
        return None
    if len(va) > 1 or len(vb) > 1:
        pick = max if larger else min
        if what in ("time", "age"):  # "who won it earlier": the earliest of each one's rows
            sa, sb = pick(va), pick(vb)
        elif len(va) == 1 or len(vb) == 1:  # "alwood or woods": one row against several rows
            one, many = (va[0], vb) if len(va) == 1 else (vb[0], va)
            # the one row wins when it beats the others' sum (more) or each of them (less); the others win when
            # each of them beats it (more) or their sum does (less): so whether their rows add up or not
            if one > sum(many) if larger else one < min(many):
                win = a if len(va) == 1 else b
            elif min(many) > one if larger else sum(many) < one:
                win = b if len(va) == 1 else a
                if len({data.text(win.col)[r] for r in win.rows}) > 1:
                    return None  # "woods": Ralf Woods and Ray Woods, no one answer
            else:
                return None
            return win
        else:
            return None
    else:
        sa, sb = va[0], vb[0]
    if sa == sb:
        return None
    return a if (sa > sb) == larger else b


_FEET = re.compile(r"^\s*(\d)\s*['’′]\s*(\d{1,2})\b")


def _numbers(data: TableData, col: int) -> list[float | None]:
    """A column's numbers as compared: a height in feet and inches ("6'10\"") in inches."""
    texts = data.text(col)
    feet = [_FEET.match(t) for t in texts]
    if sum(1 for f in feet if f) >= 0.8 * max(1, sum(1 for t in texts if t.strip())):
        return [float(int(f.group(1)) * 12 + int(f.group(2))) if f else None for f in feet]
    return data.number(col)


def _plan(m: TableMatch, win: Option, a: Option, b: Option, rows: list[int], measure: int | None,
          said: str) -> Plan:
    """The choice as a plan: the winning option's cell (its most frequent text among its rows; the option's own
    words as the cell writes them when the cell says more than the option and names other things too)."""
    data = m.data
    cells = Counter(value_of(data.text(win.col)[r]) for r in rows)
    value = cells.most_common(1)[0][0] if cells else ""
    if len(cells) > 1:
        value = _as_written(data.text(win.col)[rows[0]], win.phrase)
    lose = b if win is a else a
    order = [*rows, *(r for r in lose.rows if r not in rows)]
    return Plan("choice", order[:60], measure, win.col, win.col, None, [*m.filters, said], value)


def _as_written(cell: str, phrase: str) -> str:
    """The option's words as the cell writes them ("Boonen" in "Tom Boonen (BEL)"), else the option."""
    pattern = r"\W+".join(re.escape(w) for w in phrase.split())
    found = re.search(pattern, cell, re.IGNORECASE)
    return found.group(0) if found else phrase
