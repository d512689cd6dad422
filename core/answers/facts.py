"""The facts a text states, read as values: numbers (digits, grouped digits, decimals, number words, ordinals, and
German and French groupings), dates (each with its readings), clock times, proper names, quantities (a number and its
unit), its sentences and content words. Pure functions, no model; the grounding check (``grounding.py``), the
extracted and short answers and the meaning check compare texts through them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shelfwise.core.languages import (
    NON_ASCII_AFTER_STOP,
    OTHER_BREAK,
    UNSEGMENTED,
    boundaries,
    cased_script,
    has_unsegmented,
    lazy,
    word_units,
)

UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19,
}

TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
        "ninety": 90}

ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
    "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20, "thirtieth": 30,
}

SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}

MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
    "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10,
    "nov": 11, "dec": 12,
}

STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below between both
but by can could did do does doing down during each either else ever every few for from further get gets got had has
have having he her here hers him his how however i if in into is it its itself just may me might more most must my
no nor not now of off on once only or other our ours out over own per same shall she should so some such than that
the their them then there these they this those through to too under until up upon us very was we were what when
where which while who whom why will with within without would yes you your yours
""".split())

# Capitalised words that are not names even inside a sentence (weekday and month names are checked as dates).
NOT_NAMES = frozenset("i eur usd gbp a an the monday tuesday wednesday thursday friday saturday sunday".split())

_WORD_NUMBER = "|".join(sorted([*UNITS, *TENS, *ORDINALS, *SCALES], key=len, reverse=True))

_NUMBER_WORDS = lazy(rf"\b(?:{_WORD_NUMBER})(?:[\s-]+(?:and[\s-]+)?(?:{_WORD_NUMBER}))*\b", re.IGNORECASE)

# a number is not part of a word ("A4", "x86"), though it may stand right after a character of a script written
# without spaces ("于2019年")
_DIGITS = lazy(rf"(?<!(?!{UNSEGMENTED})[\w.])(\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.(\d+))?(?:st|nd|rd|th)?(?![\d])")

_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))

_DAY_MONTH = lazy(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\.?(?:,?\s+(\d{{4}}))?\b", re.I)

_MONTH_DAY = lazy(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}}))?", re.I)

_NUMERIC_DATE = lazy(r"\b(\d{1,2})[/.](\d{1,2})(?:[/.](\d{2,4}))?\b\.?")

_ISO_DATE = lazy(r"\b(\d{4})-(\d{2})-(\d{2})\b")

_CJK_DATE = lazy(r"(?:(\d{4})\s*[年년]\s*)?(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일号]")  # 2019年3月31日

_TIME = lazy(r"\b(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?\b|\b(\d{1,2}):(\d{2})\b", re.I)

_WORD = lazy(r"[A-Za-z][A-Za-z'’-]*")

_SENTENCE_END = lazy(rf"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9])|{NON_ASCII_AFTER_STOP}|{OTHER_BREAK}|\n+")

# a word that may be a name: letters of a cased script (Latin, Cyrillic, Greek...), apostrophes and hyphens inside
NAME_WORD = lazy(r"[^\W\d_](?:[^\W\d_]|['’-])*")

CITATION = lazy(r"\s?\[\d+(?:\s*[,;]\s*\d+)*\]")

@dataclass(frozen=True)
class Fact:
    """One checkable item of a text: ``kind`` (number, date, time, name) and how it was written."""

    kind: str
    text: str

# --------------------------------------------------------------------------- numbers
def words_to_number(phrase: str) -> int | None:
    """"twenty-seven" -> 27, "one hundred and five" -> 105, "fourth" -> 4; None when it is not a number."""
    total, current, seen = 0, 0, False
    for w in re.split(r"[\s-]+", phrase.lower()):
        if not w or w == "and":
            continue
        if w in UNITS:
            current += UNITS[w]
        elif w in TENS:
            current += TENS[w]
        elif w in ORDINALS:
            current += ORDINALS[w]
        elif w in SCALES:
            current = max(current, 1) * SCALES[w]
            if SCALES[w] >= 1000:
                total, current = total + current, 0
        else:
            return None
        seen = True
    return total + current if seen else None

def _digit_value(whole: str, frac: str | None) -> float:
    return float(whole.replace(",", "") + (f".{frac}" if frac else ""))

# numbers as German and French write them: "102.000" and "102 000" (thousands), "0,30" (a decimal comma)
_DOT_GROUPS = lazy(r"(?<![\w.,])\d{1,3}(?:\.\d{3})+(?:,\d+)?(?![\d.,]\d)")

_SPACE_GROUPS = lazy(r"(?<![\w.,])\d{1,3}(?:[\u00a0\u202f ]\d{3})+(?:,\d+)?(?![\d])")

_DECIMAL_COMMA = lazy(r"(?<![\w.,])\d+,\d{1,2}(?![\d])|(?<![\w.,])\d+,\d{4,}(?![\d])")

def other_readings(text: str) -> set[float]:
    """The values of ``text``'s numbers as German and French write them ("102.000" = 102000, "102 000" = 102000,
    "0,30" = 0.3), beside the English reading :func:`numbers_in` gives: "102,000 = 102000 = 102.000"."""
    out: set[float] = set()
    for pattern in (_DOT_GROUPS, _SPACE_GROUPS):
        for m in pattern.finditer(text):
            whole, _, frac = re.sub(r"[.\u00a0\u202f ]", "", m.group(0)).partition(",")
            out.add(float(whole + (f".{frac}" if frac else "")))
    for m in _DECIMAL_COMMA.finditer(text):
        out.add(float(m.group(0).replace(",", ".")))
    return out

def numbers_in(text: str) -> set[float]:
    """Every number written in ``text``, as values (digits, grouped digits, decimals, number words, ordinals; and
    the German and French readings of :func:`other_readings`)."""
    out = {_digit_value(m.group(1), m.group(2)) for m in _DIGITS.finditer(text)} | other_readings(text)
    for m in _NUMBER_WORDS.finditer(text):
        value = words_to_number(m.group(0))
        if value is not None:
            out.add(float(value))
    for m in _TIME.finditer(text):  # "10:00" holds the numbers 10 and 0; "4 pm" the number 4
        if m.group(4):
            out.update({float(m.group(4)), float(m.group(5))})
    return out

def number_facts(text: str) -> list[tuple[Fact, float]]:
    facts = [(Fact("number", m.group(0)), _digit_value(m.group(1), m.group(2))) for m in _DIGITS.finditer(text)]
    for m in _NUMBER_WORDS.finditer(text):
        value = words_to_number(m.group(0))
        # "one" alone is mostly a pronoun ("the one you need", "one of"): only counted in a longer number phrase
        if value is not None and m.group(0).lower() not in {"one", "first", "second"}:
            facts.append((Fact("number", m.group(0)), float(value)))
    return facts

# --------------------------------------------------------------------------- dates and times
def _year(y: str | None) -> int | None:
    if not y:
        return None
    n = int(y)
    return n + 2000 if n < 100 else n

def dates_in(text: str) -> list[tuple[str, set[tuple[int, int, int | None]]]]:
    """Each date written in ``text`` with its readings (day, month, year or None); spans covered once."""
    found: list[tuple[str, set[tuple[int, int, int | None]]]] = []
    taken: list[tuple[int, int]] = []

    def add(m: re.Match[str], readings: set[tuple[int, int, int | None]]) -> None:
        if any(a < m.end() and m.start() < b for a, b in taken):
            return
        readings = {r for r in readings if 1 <= r[0] <= 31 and 1 <= r[1] <= 12}
        if readings:
            taken.append((m.start(), m.end()))
            found.append((m.group(0), readings))

    for m in _ISO_DATE.finditer(text):
        add(m, {(int(m.group(3)), int(m.group(2)), int(m.group(1)))})
    for m in _CJK_DATE.finditer(text):
        add(m, {(int(m.group(3)), int(m.group(2)), _year(m.group(1)))})
    for m in _DAY_MONTH.finditer(text):
        add(m, {(int(m.group(1)), MONTHS[m.group(2).lower()], _year(m.group(3)))})
    for m in _MONTH_DAY.finditer(text):
        if m.group(1).lower() == "may" and not m.group(3):  # "may 5 people" is not a date
            continue
        add(m, {(int(m.group(2)), MONTHS[m.group(1).lower()], _year(m.group(3)))})
    for m in _NUMERIC_DATE.finditer(text):
        a, b, y = int(m.group(1)), int(m.group(2)), _year(m.group(3))
        if "." in m.group(0) and not m.group(3) and not m.group(0).endswith("."):
            continue  # "0.30" is a decimal, not a date
        add(m, {(a, b, y), (b, a, y)})
    return found

def times_in(text: str) -> list[tuple[str, tuple[int, int]]]:
    out = []
    for m in _TIME.finditer(text):
        if m.group(4):
            out.append((m.group(0), (int(m.group(4)) % 24, int(m.group(5)))))
        else:
            hour = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "p" else 0)
            out.append((m.group(0), (hour, int(m.group(2) or 0))))
    return out

# --------------------------------------------------------------------------- names and sentences
def split_sentences(text: str) -> list[str]:
    out, pos = [], 0
    for m in boundaries(_SENTENCE_END, text):
        out.append(text[pos:m.start()])
        pos = m.end()
    out.append(text[pos:])
    return [s.strip() for s in out if s and s.strip()]

def names_in(text: str) -> list[str]:
    """Proper names: capitalised words that do not open a sentence, and words with an inner capital ("ParkPal")."""
    names = []
    for sentence in split_sentences(text):
        for i, m in enumerate(NAME_WORD.finditer(sentence)):
            w = m.group(0).strip("'’-")
            if not cased_script(w) or has_unsegmented(w):
                continue
            low = w.lower()
            if len(w) < 2 or {low, low.removesuffix("s")} & (NOT_NAMES | MONTHS.keys()):
                continue
            inner = any(c.isupper() for c in w[1:]) and not w.isupper()
            if (w[0].isupper() and i > 0) or inner or (w.isupper() and len(w) > 1 and i > 0):
                names.append(w)
    return names

def content_words(text: str) -> set[str]:
    """English words of three letters or more that are not stop words, and the words of other scripts (a character
    bigram of Chinese, Japanese or Thai-like text counts as a word, ``core/languages.word_units``)."""
    words = {w.lower() for w in _WORD.findall(text) if len(w) >= 3 and w.lower() not in STOPWORDS}
    if not text.isascii():
        words |= {u for u in word_units(text) if not u.isascii() and (has_unsegmented(u) or len(u) >= 3)}
    return words

def name_words(text: str) -> set[str]:
    return {w.lower().strip("'’-") for w in NAME_WORD.findall(text)}

_QUANTITY = lazy(rf"(?<!(?!{UNSEGMENTED})[\w.])(\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.(\d+))?\s*"
                 rf"(%|{UNSEGMENTED}|(?:(?!{UNSEGMENTED})[^\W\d_])+)")  # "27 days", "27 дней", "27天"

_CURRENCY = lazy(r"(EUR|USD|GBP|CHF|€|\$|£)\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?", re.I)

# words between a count and what it counts that leave the unit as it is ("five unused days", "3 extra days"; a
# "working day" is a unit of its own, and "10 working days in advance" must not pass a text's "10 days" of leave)
_UNIT_MODIFIERS = frozenset({"unused", "paid", "unpaid", "additional", "extra", "full", "consecutive", "further"})
_NEXT_WORD = lazy(r"[\s-]+([^\W\d_]+)")


def _unit(word: str, text: str, end: int) -> tuple[str, int]:
    """The unit a count's next word (ending at ``end``) names, past a modifier to the word after it, "percent"
    for % and per cent; and where it ends."""
    word = word.lower()
    after = _NEXT_WORD.match(text, end)
    if word in _UNIT_MODIFIERS and after:
        word, end = after.group(1).lower(), after.end()
        after = _NEXT_WORD.match(text, end)
    if word == "per":  # "35 per cent"; "600 per trip" names no unit
        return ("percent", after.end()) if after and after.group(1).lower() == "cent" else (word, end)
    return ("percent" if word in ("%", "percent") else word.removesuffix("s")), end


def quantities(text: str) -> list[tuple[float, str]]:
    """(value, unit) of every number followed by a word ("27 days" -> (27, "day"), "35%" -> (35, "percent"),
    "five unused days" -> (5, "day")); a number written in words counts too, an ordinal ("the first day") not."""
    return [(value, unit) for value, unit, _ in written_quantities(text)]


def written_quantities(text: str) -> list[tuple[float, str, str]]:
    """:func:`quantities` with each one as written ("five unused days")."""
    out = []
    text = CITATION.sub("", text)
    for m in _QUANTITY.finditer(text):
        unit, end = _unit(m.group(3), text, m.end())
        if unit not in STOPWORDS:
            out.append((_digit_value(m.group(1), m.group(2)), unit, text[m.start():end]))
    for m in _NUMBER_WORDS.finditer(text):
        words = re.split(r"[\s-]+", m.group(0).lower())
        value = words_to_number(m.group(0))
        after = _NEXT_WORD.match(text, m.end())
        if value is None or after is None or any(w in ORDINALS for w in words):
            continue
        unit, end = _unit(after.group(1), text, after.end())
        if unit not in STOPWORDS:
            out.append((float(value), unit, text[m.start():end]))
    for m in _CURRENCY.finditer(text):  # "EUR 600", "€600": the currency is the unit
        unit = {"€": "eur", "$": "usd", "£": "gbp"}.get(m.group(1), m.group(1).lower())
        out.append((_digit_value(m.group(2), m.group(3)), unit, m.group(0)))
    return out
