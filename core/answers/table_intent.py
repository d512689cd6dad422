"""What a question asks of a table, read by rules (no model): the operation (lookup, count, sum, average, min, max,
argmax, argmin, first, last, difference, range), its comparisons (above / below / between a number or a date) and
the question's words, in English, German and French. Pure: :mod:`shelfwise.core.answers.tables` matches the words
to a stored table's columns and cells and computes the operation with SQL.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from shelfwise.core.answers.facts import dates_in
from shelfwise.core.store.tables import read_cell

_WORD = re.compile(r"[\w$€£%]+(?:[.,'’:/-][\w]+)*", re.UNICODE)

STOP = frozenset("""
a an the of for in on at to by with from is are was were be been do does did what which who whom whose when where how
there their its it this that these those and or as per than then any all each every one ones same many much
give me tell list show name named number total us our your my i we you he she they his her them has have had
der die das den dem des ein eine einer eines einem einen ist sind war waren wie was welche welcher welches wer
für im in am an auf mit von zu und oder es gibt hat haben viele
le la les un une des du de d l est sont était quel quelle quels quelles qui que quoi pour dans en au aux sur avec et
ou a il y combien
""".split())

_OPS: list[tuple[str, re.Pattern[str]]] = [
    ("range", re.compile(r"\b(widest|narrowest|largest|smallest|biggest)\s+(\w+ )?(range|spread|span|gap)\b|"
                         r"\b(breiteste|größte|grösste) \w*(spanne|bandbreite)\b|"
                         r"\b(plus (large|grande)) (fourchette|écart)\b")),
    ("difference", re.compile(r"\b(difference|how (much|many) (more|less|fewer|higher|lower|longer|shorter|"
                              r"taller|older|younger|heavier|lighter|bigger|larger|greater|smaller|faster|slower)|"
                              r"unterschied|differenz|um wie viel|différence|écart)\b")),
    ("average", re.compile(r"\b(average|mean|avg|durchschnitt\w*|mittelwert|mittlere\w*|moyen(?:ne)?s?)\b")),
    ("count", re.compile(r"\b(how many|number of|count|wie ?viele|anzahl|combien|nombre de)\b")),
    ("sum", re.compile(r"\b(total|sum|altogether|combined|in all|insgesamt|summe|gesamt\w*|somme|au total)\b")),
    ("max", re.compile(r"\b(highest|most|largest|biggest|greatest|maximum|max|top|best|longest|latest|oldest|"
                       r"tallest|heaviest|more|höchste\w*|meiste\w*|größte\w*|grösste\w*|längste\w*|"
                       r"plus (élevée?s?|grande?s?|haute?s?|longue?s?)|le plus|la plus|maximale?)\b")),
    ("min", re.compile(r"\b(lowest|least|fewest|smallest|minimum|min|shortest|earliest|youngest|worst|less|fewer|"
                       r"niedrigste\w*|wenigste\w*|kleinste\w*|kürzeste\w*|geringste\w*|"
                       r"plus (basse?s?|petite?s?|courte?s?)|le moins|la moins|minimale?)\b")),
    ("first", re.compile(r"\b(first|erste\w*|premier|première)\b")),
    ("last", re.compile(r"\b(last|final|letzte\w*|dernier|dernière)\b")),
]

MONTHS = {name: i % 12 + 1 for i, name in enumerate(
    "january february march april may june july august september october november december "
    "januar februar märz april mai juni juli august september oktober november dezember "
    "janvier février mars avril mai juin juillet août septembre octobre novembre décembre".split())}
_YES_NO_Q = re.compile(r"^(is|are|was|were|did|does|do|has|have|had|ist|sind|war|hat|est-ce)\b")
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_GERMAN = re.compile(r"\b(wie|ist|sind|das|der|die|den|dem|für|hat|haben|gibt|welche\w*|viele|wer|wann|im|und|oder|"
                     r"wurden?|werden|waren)\b")
_COUNTED = re.compile(r"\b(how many|number of|wie ?viele|anzahl (der|an)|combien de|nombre de)\b")
_ASK_ROW = re.compile(r"^(which|who|what|name|list|welche\w*|wer|quel\w*|qui)\b")
_NUMBER = r"(-?\d[\d,.]*)"
_ABOVE = re.compile(rf"\b((?<!no )(?<!not )more than|over|above|greater than|at least|(?<!no )higher than|"
                    rf"(?<!no )larger than|bigger than|longer than|taller than|heavier than|wider than|deeper than|"
                    rf"no (?:less|fewer) than|not (?:less|fewer) than|mehr als|über|ueber|"
                    rf"mindestens|plus de|au moins|supérieure? à)\s+{_NUMBER}")
_BELOW = re.compile(rf"\b((?<!no )(?<!not )less than|(?<!no )(?<!not )fewer than|under|below|at most|lower than|"
                    rf"smaller than|shorter than|lighter than|no (?:more|higher|larger) than|not more than|"
                    rf"weniger als|unter|höchstens|moins de|au plus|inférieure? à)\s+{_NUMBER}")
# a negation at most four words before a bound, none of them a conjunction: "did not finish with a time less than
# 53", "hat nicht mehr als", "n'a pas plus de" ("not more than" itself is a bound of its own, read above)
_NEGATED_BOUND = re.compile(r"(\bnot|n't|\bnever|\bnicht|\bnie|\bpas|\bjamais)\b"
                            r"(?:\s+(?!(?:and|but|or|und|aber|oder|et|mais|ou)\b)[^\s,;]+){0,4}\s*$")
_OR_MORE = re.compile(rf"{_NUMBER}\s+(?:[a-z]+\s+)?or (more|greater|higher|above|over|less|fewer|lower|under|below)\b")
_INCLUSIVE = frozenset({"at least", "mindestens", "au moins", "at most", "höchstens", "au plus", "no more than",
                        "not more than", "no less than", "not less than", "no fewer than", "not fewer than",
                        "no higher than", "no larger than"})
NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
                                                       "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b")
_BETWEEN = re.compile(r"\b(between|zwischen|entre)\s+(.+?)\s+(and|und|et)\s+(.+?)(?=[?.,;]|$| in\b| for\b)")
_AFTER = re.compile(r"\b(after|since|nach|seit|après|depuis)\s+(.+?)(?=[?.,;]|$)")
_YEAR = re.compile(r"(?:the year )?(1[5-9]\d\d|20\d\d)\b(?!\s*[-/.]\d)")
_BEFORE = re.compile(r"\b(before|until|vor|bis|avant|jusqu'à)\s+(.+?)(?=[?.,;]|$)")
_DECADE = re.compile(r"\b(?:in|during|from|of|im|in den|aus den|der|dans|pendant|durant|des)\s+(?:the |les )?"
                     r"(?:années |jahren |jahrzehnt )?(1[5-9]\d0|20[0-9]0)(?:'?s|er(?:n| jahren?)?)\b|"
                     r"\b(?:dans|pendant|durant) les années (1[5-9]\d0|20[0-9]0)\b")


@dataclass
class Comparison:
    """A filter on a number, money, percent or date column: ``low <= value <= high`` (None: open), strict ends."""

    low: float | None = None
    high: float | None = None
    strict: bool = True
    kind: str = "number"  # "number", "date" (the bound is a day number), "year" (a year: a date's or a number's),
    # "monthday" (a day of any year, month * 100 + day: "after 1 June") or "place" (a rank: 1 is the best)
    words: str = ""  # the question's words it was read from

    def admits(self, value: float) -> bool:
        if self.low is not None and (value <= self.low if self.strict else value < self.low):
            return False
        return not (self.high is not None and (value >= self.high if self.strict else value > self.high))


@dataclass
class TableIntent:
    """The question as the table reader takes it: its words (lower case, stop words out), its operations found
    (in the order of :data:`_OPS`, with the words that said them), whether it asks for a row (which/who), and its
    comparisons."""

    text: str
    words: list[str]
    ops: list[tuple[str, str]] = field(default_factory=list)
    asks_row: bool = False
    counted: str = ""  # what "how many" counts: its next word that is not a stop word ("holidays")
    counted_of: list[str] = field(default_factory=list)  # "how many days of paternity leave": paternity, leave
    asked: str = ""  # what "which / what" asks for: its next word that is neither a stop word nor an operation
    comparisons: list[Comparison] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # words written with a capital inside the question ("Zorya")

    def op_words(self) -> set[str]:
        return {w for _op, said in self.ops for w in said.split()}


_PLACE_BOUND = re.compile(r"\b((?:no|not) (?:higher|lower|better|worse) than|above|below|higher than|lower than|"
                          r"better than|worse than|over|under)\s+(#?)(\d+)(st|nd|rd|th)?(\s+place)?\b(?![:.,]?\d)")
_PLACE_WORD = re.compile(r"\b(rank|ranked|ranking|place|placed|placing|position|finish|finished|finishing|seed|"
                         r"seeded)\b")
_BETTER = ("above", "higher than", "better than", "over", "no lower than", "not lower than", "no worse than",
           "not worse than")


def _place_bounds(text: str) -> list[tuple[Comparison, tuple[int, int]]]:
    """Bounds on a place, where a smaller number is better: "above 4th", "below 8th place", "not lower than #5",
    "ranked higher than 10" (a place word before it); "above 4th" keeps places 1 to 3 ("the top 10" is left alone:
    a chart's top, a count of nations). Each with where the question says it."""
    out = []
    for m in _PLACE_BOUND.finditer(text):
        said, sharp, number, ordinal, place = m.groups()
        before = " ".join(text[: m.start()].split()[-3:])
        if not (sharp or ordinal or place or _PLACE_WORD.search(before)):
            continue
        n = float(number)
        inclusive = said.startswith(("no ", "not "))
        c = Comparison(strict=not inclusive, kind="place", words=m.group(0))
        if said in _BETTER:
            c.high = n  # better than the n-th: a smaller number
        else:
            c.low = n
        out.append((c, (m.start(), m.end())))
    return out


def _bound(text: str) -> tuple[str, float] | None:
    kind, number = read_cell(text.strip())
    if number is None:
        return None
    return ("date" if kind == "date" else "number"), number


def read_intent(question: str) -> TableIntent:
    """The operations, comparisons and words of ``question`` (see the module docstring)."""
    text = " ".join(question.lower().replace("’", "'").split()).rstrip("?!. ")
    intent = TableIntent(text, [w for w in _WORD.findall(text) if w not in STOP])
    if not _GERMAN.search(text):  # German writes every noun with a capital
        intent.names = [w.lower() for w in _WORD.findall(question)[1:] if w[:1].isupper()
                        and w.lower() not in STOP and w.lower() not in MONTHS and w.lower() not in _WEEKDAYS]
    numbered = _NUMBER_WORD.sub(lambda w: str(NUMBER_WORDS[w.group(1)]), text)  # "more than five" -> 5
    plain = re.sub(r"\bat (most|least)\b|\bno (more|less|fewer) than\b", " ", numbered)  # bounds, not superlatives
    plain = re.sub(r"\b(more|less|fewer|greater|higher|lower|larger|bigger|longer|shorter|taller|smaller) than "
                   r"(?=-?\d)", " ", plain)  # "more than 30000": a bound, not "the most"
    for op, pattern in _OPS:
        m = pattern.search(plain)
        if m:
            intent.ops.append((op, m.group(0)))
    found = dict(intent.ops)  # "le plus petit": the least, not "le plus"
    if found.get("max") in ("le plus", "la plus") and found.get("min", "").startswith("plus "):
        intent.ops = [(op, w) for op, w in intent.ops if op != "max"]
    intent.asks_row = bool(_ASK_ROW.match(text))
    if intent.asks_row:
        said = intent.op_words()
        intent.asked = next((w for w in _WORD.findall(text)[1:] if w not in STOP and w not in said
                             and w not in ("only", "einzige", "einzigen", "seul", "seule")), "")  # "the only X": X
    m = _COUNTED.search(text)
    if m:
        intent.counted = next((w for w in _WORD.findall(text[m.end():]) if w not in STOP), "")
        intent.counted_of = _counted_of(text[m.end():], intent.counted)
    places = _place_bounds(text)
    intent.comparisons += [c for c, _span in places]
    for pattern, side in ((_ABOVE, "low"), (_BELOW, "high")):
        for m in pattern.finditer(numbered):
            if any(a < m.end() and m.start() < b for _c, (a, b) in places):
                continue  # "above 4th": a place, read above
            b = _bound(m.group(2).rstrip(".,"))
            if b is not None:
                c = Comparison(strict=m.group(1) not in _INCLUSIVE, kind=b[0], words=m.group(0))
                bound_side = side
                negation = _NEGATED_BOUND.search(numbered[: m.start()])
                if negation:  # "did not make more than 50,000": at most 50,000
                    c.strict, bound_side = not c.strict, "high" if side == "low" else "low"
                    negating = "not" if negation.group(1) == "n't" else negation.group(1)
                    c.words = f"{negating} {c.words}"
                setattr(c, bound_side, b[1])
                intent.comparisons.append(c)
    for m in _OR_MORE.finditer(numbered):  # "20% or greater", "3 strokes or more"
        b = _bound(m.group(1).rstrip(".,"))
        if b is not None:
            c = Comparison(strict=False, kind=b[0], words=m.group(0))
            setattr(c, "low" if m.group(2) in ("more", "greater", "higher", "above", "over") else "high", b[1])
            intent.comparisons.append(c)
    m = _BETWEEN.search(text)
    if m:
        lo, hi = _bound(m.group(2)), _bound(m.group(4))
        if lo is not None and hi is not None:
            intent.comparisons.append(Comparison(lo[1], hi[1], strict=False, kind=lo[0], words=m.group(0)))
    for m in _DECADE.finditer(text):  # "in the 1970s", "in den 1970er Jahren", "dans les années 1970"
        if re.search(r"\b(not|n't|never|nicht|nie|pas|jamais)\b(\s+\S+){0,2}\s*$", text[: m.start()]):
            continue  # "not created in the 1900s": not read
        start = int(m.group(1) or m.group(2))
        span = 100 if start % 100 == 0 and m.group(1) else 10  # "the 1800s": a century
        intent.comparisons.append(Comparison(start, start + span - 1, strict=False, kind="year", words=m.group(0)))
    for pattern, side in ((_AFTER, "low"), (_BEFORE, "high")):
        m = pattern.search(text)
        if m:
            year = _YEAR.match(m.group(2))
            b = _bound(m.group(2)) if year is None else ("year", float(year.group(1)))
            day = _month_day(text[m.end(1):]) if year is None else None
            bound_words = m.group(0)
            if day is not None:  # "after 1 June", "nach dem 1. Juni": a day of any year, compared with the cells'
                b, bound_words = ("monthday", float(day[0])), f"{m.group(1)} {day[1]}"
            elif year is None and (whole := _whole_date(text[m.end(1):])) is not None:  # "after June 1" and a year
                b, bound_words = ("date", float(whole[0])), f"{m.group(1)} {whole[1]}"
            elif year is None and len(m.group(2).split()) == 1 and (month := month_in(m.group(2))):  # "after June"
                b = ("monthday", float(month[0] * 100 + (31 if side == "low" else 1)))
            if b is not None and b[0] in ("date", "year", "monthday"):  # "after 2006": a year, of a date or a number
                c = Comparison(kind=b[0], words=bound_words)
                setattr(c, side, b[1])
                intent.comparisons.append(c)
    return intent


def _counted_of(text: str, counted: str) -> list[str]:
    """What "how many <counted> of X" counts the unit of: X's words up to the next stop word, at most three
    ("days of paternity leave": paternity, leave)."""
    of = re.search(rf"\b{re.escape(counted)}\s+(?:(?:of|de|du|des)\b|d')\s*(.*)", text) if counted else None
    out: list[str] = []
    for w in _WORD.findall(of.group(1)) if of else []:
        if w in STOP or len(w) < 2 or len(out) == 3:
            break
        out.append(w)
    return out


def stem(word: str) -> str:
    """A word's plural taken off for matching column names: "salaries" -> "salary", "holidays" -> "holiday",
    "boxes" -> "box" (plurals, and a noun of -ability / -ibility read as its adjective: "eligibility" ->
    "eligible"; not verbs: "provided" must not meet "provider")."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("ses", "xes", "zes", "ches", "shes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 8 and w.endswith(("ability", "ibility")):  # "eligibility" -> "eligible", as the question says it
        return w[:-5] + "le"
    return w


def words_of(text: str) -> list[str]:
    """A column name's or cell's words, lower case, stop words out."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOP]


_MONTH_WORD = "|".join(sorted(MONTHS, key=len, reverse=True))
_MONTH_DAY = re.compile(rf"^\s*(?:the |dem |den |le |la )?(?:(\d{{1,2}})(?:\.|er|st|nd|rd|th)?\s+({_MONTH_WORD})|"
                        rf"({_MONTH_WORD})\s+(\d{{1,2}})(?:st|nd|rd|th)?)\b(?!\.?,?\s*\d)")


def _month_day(text: str) -> tuple[int, str] | None:
    """The day of the year (month * 100 + day) ``text`` opens with and writes without a year ("1 June", "June 1st",
    "dem 1. Juni", "le 1er juin"), with its words; else None."""
    m = _MONTH_DAY.match(text)
    if m is None:
        return None
    day, month = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
    return (MONTHS[month] * 100 + int(day), m.group(0).strip()) if 1 <= int(day) <= 31 else None


def _whole_date(text: str) -> tuple[int, str] | None:
    """The date with its year that ``text`` opens with ("June 1" or "1 June" and a year): its day number
    (``date.toordinal``, as date cells are stored) and its words; else None."""
    found = dates_in(text)
    if not found or not text.lstrip().startswith(found[0][0]) or len(found[0][1]) != 1:
        return None
    day, month, year = next(iter(found[0][1]))
    try:
        return (dt.date(year, month, day).toordinal(), found[0][0]) if year is not None else None
    except ValueError:
        return None


def month_in(text: str) -> tuple[int, str] | None:
    """The month a question names ("in December", "im Dezember", "en décembre"): (its number, the word); "may"
    only after "in" or before a day."""
    for m in re.finditer(r"\b([a-zäéû]+)\b", text):
        word = m.group(1)
        if word in MONTHS and (word != "may" or re.search(r"\bin may\b|\bmay \d", text)):
            return MONTHS[word], word
    return None


_GERMAN_WAS = re.compile(r"^was (ist|sind|war|waren|kostet|kosten|hat|haben|gibt|bedeutet|steht)\b")


def asks_yes_no(text: str) -> bool:
    """A question answered by yes or no: it opens with "is / did / has ..." and offers no choice ("A or B");
    German "was ist ..." is "what is"."""
    return bool(_YES_NO_Q.match(text)) and not re.search(r"\b(or|oder|ou)\b", text) and not _GERMAN_WAS.match(text)
