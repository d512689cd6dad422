"""Is a generated answer grounded in the passages it cites? Numbers, dates, amounts, percentages and names checked.

:func:`check_grounding` takes the generated text and the cited passages' texts (and the question, whose names the
answer may repeat) and returns a :class:`Grounding`: the sentences kept, the facts that are not in the sources,
and whether the text may be shown. The rules:

* every number in the text (digits, ``1,500``, ``0.30``, number words "twenty-seven", ordinals "fourth"/"4th",
  amounts "EUR 600", percentages "35 percent"/"35%") must occur as a number in the sources: both sides are turned
  into numeric values, so "27" matches "twenty-seven" and "4th" matches "fourth";
* every date must occur in the sources as the same day and month (and year when both give one): "31 March",
  "March 31", "31/03", "31.03." and "2026-03-31" are the same date; a slash date is read both ways (day/month and
  month/day) because the sources do not say which;
* every clock time (``10:00``, ``4 pm``) must occur as the same hour and minute;
* every proper name (a capitalised word that is not the first word of a sentence, or any word written with a
  capital inside it like "ParkPal") must occur in the sources or the question as a whole word (case-insensitive);
* a question (a sentence ending in "?", often the user's own question echoed) is dropped;
* a sentence none of whose content words (three letters or more, not in :data:`STOPWORDS`) occurs in the sources
  is unsupported and dropped; so is a sentence that repeats an earlier one.

* a quantity (a number and the word after it, "10 days") must not contradict the extracted answer: when the
  sentence found gives the same unit with other numbers only ("27 days"), the text is rejected even if its number
  occurs elsewhere in the passage (the issue's "10 days" came from "10 working days in advance").

* the text must answer what was asked (:func:`off_the_question`): when the question names the kind of thing it wants
  (an address, a date, an amount, a person), the text must hold one; a bare number ("1194 [1]") is kept only when
  the question asks for a number. "What is the VPN server address?" answered "1194" (the port, which is in the
  source) was kept before this rule.
* a number question's numbers must answer it (:func:`off_the_subject`): a number not in the extracted answer must
  be one the sources give in the unit asked for ("How many people" -> "120 people", not the floor "4") and sit in
  a clause about the question's subject when another number does ("27 days of annual leave", not the "5" of
  "requests must be made 5 days in advance").

The facts are read by ``facts.py``. One unsupported fact rejects the whole text (``ok`` False with ``reason``): the
extractive answer stands. Pure functions, no model: the unit tests in ``tests/test_grounding.py`` pin each rule;
``benchmarks/research/answer_kind.py`` measures the last one on recorded answers (docs/eval/answer-kind.json).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from shelfwise.core.answers.facts import (
    CITATION,
    MONTHS,
    NAME_WORD,
    STOPWORDS,
    Fact,
    content_words,
    dates_in,
    name_words,
    names_in,
    number_facts,
    numbers_in,
    other_readings,
    quantities,
    split_sentences,
    times_in,
    written_quantities,
)
from shelfwise.core.languages import is_question, lazy


@dataclass
class Grounding:
    """The check's verdict on a generated text."""

    ok: bool
    text: str  # the supported sentences (repeats and unsupported sentences dropped); "" when nothing is left
    unsupported: list[Fact] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # sentences dropped (no support, or repeated)
    reason: str = ""  # why it is not shown, in words for the user ("" when ok)

def _date_supported(readings: set[tuple[int, int, int | None]],
                    source_dates: Iterable[set[tuple[int, int, int | None]]]) -> bool:
    for src in source_dates:
        for d, mth, y in readings:
            for sd, sm, sy in src:
                if d == sd and mth == sm and (y is None or sy is None or y == sy):
                    return True
    return False

def _name_supported(name: str, allowed: set[str]) -> bool:
    """Whether a name of the text occurs in the sources or the question: as a whole word, or with an "s" added or
    dropped; a name outside ASCII also in another case form of the same word (Russian "Москвы" for "Москва":
    all but the last two letters, at least four, the same)."""
    low = name.lower()
    if low in allowed or low.removesuffix("s") in allowed or f"{low}s" in allowed:
        return True
    if low.isascii():
        return False
    stem = low[: max(4, len(low) - 2)]
    return any(w.startswith(stem) or (len(w) >= 4 and low.startswith(w[: max(4, len(w) - 2)]))
               for w in allowed if not w.isascii())

# --------------------------------------------------------------------------- the check
def unsupported_facts(text: str, sources: Sequence[str], question: str = "") -> list[Fact]:
    """The numbers, dates, times and names of ``text`` that are not in ``sources`` (names may also come from the
    question)."""
    body = CITATION.sub("", text)
    src = "\n".join(sources)
    bad: list[Fact] = []
    src_dates = [r for _, r in dates_in(src)]
    date_spans = []
    for written, readings in dates_in(body):
        date_spans.append(written)
        if not _date_supported(readings, src_dates):
            bad.append(Fact("date", written))
    src_times = {t for _, t in times_in(src)}
    for written, t in times_in(body):
        if t not in src_times:
            bad.append(Fact("time", written))
    src_numbers = numbers_in(src)
    rest = body
    for written in date_spans:  # a date's day and year are checked as the date, not again as numbers
        rest = rest.replace(written, " ")
    for fact, value in number_facts(rest):
        values: set[float] = {value} | other_readings(fact.text)
        if not values & src_numbers and not any(fact.text == b.text for b in bad):
            bad.append(fact)
    allowed = name_words(src) | name_words(question)
    for name in names_in(body):
        if not _name_supported(name, allowed):
            bad.append(Fact("name", name))
    return bad

def conflicts(text: str, evidence: str) -> list[Fact]:
    """Quantities of ``text`` whose unit the ``evidence`` (the extracted answer) gives with other numbers only:
    "10 days" against "employees receive 27 days" is a conflict even if "10" occurs elsewhere in the passage."""
    found = quantities(evidence)
    bad = []
    for value, unit, written in written_quantities(text):
        same_unit = {v for v, u in found if u == unit}
        if same_unit and value not in same_unit:
            bad.append(Fact("number", written))
    return bad

def repeated_ngram(text: str, n: int = 5) -> bool:
    """Whether some run of ``n`` words occurs twice in ``text`` (the generation guard's test)."""
    words = [w.lower() for w in re.findall(r"\w+", text)]
    seen: set[tuple[str, ...]] = set()
    for i in range(len(words) - n + 1):
        gram = tuple(words[i:i + n])
        if gram in seen:
            return True
        seen.add(gram)
    return False

def cut_repetition(text: str, n: int = 5) -> str:
    """``text`` up to the sentence in which a run of ``n`` words first repeats (that sentence dropped); ``text``
    unchanged when nothing repeats."""
    if not repeated_ngram(text, n):
        return text
    kept: list[str] = []
    for sentence in split_sentences(text):
        if repeated_ngram(" ".join([*kept, sentence]), n):
            break
        kept.append(sentence)
    return " ".join(kept)

# --------------------------------------------------------------------------- does it answer the question?
# the kind of thing a question asks for, by its wording (first match wins)
_ASKS = (
    ("address", lazy(r"\b(?:address(?:es)?|url|urls|web ?site|web ?page|link|server|host(?: ?name)?|domain|"
                     r"e-?mail|ip)\b", re.I)),
    ("date", lazy(r"\b(?:when|what (?:date|day|year|month)|which (?:date|day|year|month)|deadline|due date)\b",
                  re.I)),
    ("number", lazy(r"\b(?:how (?:many|much|long|often|old|far|big|large|high|tall|fast|soon)|"
                    r"(?:what|which) (?:floor|room|level|page|chapter|section|step|line|gate|platform|grade|"
                    r"score|age|sum)|number|phone|extension|pin|port|percentage|percent|amount|quantity|total|"
                    r"count|rate|price|cost|fee|salary|budget|limit|allowance|size|capacity|version|minimum|maximum)s?\b",
                    re.I)),
    ("person", lazy(r"\b(?:who|whom|whose)\b", re.I)),
)

_URL_OR_HOST = lazy(r"(?:https?://|www\.)\S+|\S+@\S+\.[a-z]{2,}|\b\d{1,3}(?:\.\d{1,3}){3}\b|"
                    r"\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.[a-z][a-z0-9-]+\b", re.I)

_STREET = lazy(r"\b\d+[a-z]?,?\s+(?:[A-Z][\w'-]*\s+){1,4}(?:Street|St|Road|Rd|Avenue|Ave|Lane|Ln|Way|Drive|Dr|"
               r"Boulevard|Blvd|Place|Pl|Square|Sq|Court|Ct|Close|Crescent|Terrace|Park|House|Building)\b|"
               r"\b(?:PO|P\.O\.) Box\b|\b[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}\b")  # a street, a PO box, a postcode

_WHEN_WORDS = lazy(
    r"\b(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|twelve|several)\s+(?:working\s+|calendar\s+|"
    r"business\s+)?(?:second|minute|hour|day|week|fortnight|month|quarter|year)s?\b|"
    r"\b(?:before|after|within|until|till|by|every|each|daily|weekly|monthly|quarterly|annually|yearly|"
    r"immediately|today|tomorrow|yesterday|now|once|whenever|while|during|if|since|soon|later|end of|start of|"
    r"beginning of|morning|afternoon|evening|night|noon|midnight|weekend|weekday|spring|summer|autumn|fall|"
    r"winter)\b|\b(?:19|20)\d{2}\b", re.I)

_WEEKDAYS = lazy(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b", re.I)

_AMOUNT_WORDS = lazy(r"\b(?:no|none|zero|unlimited|all|half|quarter|double|twice|once|every|each|a few|"
                     r"several|many|most)\b", re.I)

_ROLE_WORDS = frozenset("""you your yourself we they them he she someone anyone everyone nobody person people staff team
department office desk manager managers head lead director officer supervisor employee employees employer owner
landlord tenant council court government company business member members committee board authority agency service
helpdesk admin administrator hr parent partner child children spouse doctor nurse solicitor lawyer applicant
claimant""".split())

_BARE_NUMBER = lazy(r"^\W*(?:(?:EUR|USD|GBP|CHF|€|\$|£)\s?)?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\s*%?\W*$", re.I)

_YES_NO = lazy(r"^\W*(?:do|does|did|can|could|is|are|was|were|will|would|should|shall|may|might|must|have|"
               r"has|had|am|isn't|aren't|don't|doesn't|can't|won't)\b", re.I)

def asked_sentence(question: str) -> str:
    """The sentence that asks: the last one ending in "?" (a scenario often comes first), else the whole text."""
    asking = [s for s in split_sentences(question) if s.rstrip().endswith("?")]
    return asking[-1] if asking else question

def asked_kind(question: str) -> str:
    """The kind of thing ``question`` asks for: ``address``, ``date``, ``number``, ``person``, or "" (none named, or
    a yes/no question: "Do I have to pay ...?")."""
    asking = asked_sentence(question)
    if _YES_NO.match(asking):
        return ""
    for kind, pattern in _ASKS:
        if pattern.search(asking):
            return kind
    return ""

def holds_kind(kind: str, text: str) -> bool:
    """Whether ``text`` holds a thing of ``kind`` (see :func:`asked_kind`); True for no kind."""
    if kind == "address":
        return bool(_URL_OR_HOST.search(text) or _STREET.search(text))
    if kind == "date":
        return bool(dates_in(text) or times_in(text) or _WEEKDAYS.search(text) or _WHEN_WORDS.search(text)
                    or any(re.search(rf"\b{m}\b", text, re.I) for m in MONTHS if len(m) > 3))
    if kind == "number":
        return bool(numbers_in(text) or _AMOUNT_WORDS.search(text))
    if kind == "person":
        words = [w for w in NAME_WORD.findall(text)]
        return bool(names_in(text) or any(
            w.lower() in _ROLE_WORDS or (len(w) >= 5 and w.lower().endswith(("er", "or", "ist", "ent", "ant", "ee")))
            or (i == 0 and w[0].isupper() and w.lower() not in STOPWORDS) for i, w in enumerate(words)))
    return True

def off_the_question(text: str, question: str) -> str:
    """Why ``text`` does not answer ``question`` ("" when it may): the question asks for a kind of thing the text
    does not hold, or the text is a bare number and the question does not ask for a number."""
    if not question:
        return ""
    body = CITATION.sub("", text).strip()
    kind = asked_kind(question)
    if _BARE_NUMBER.match(body) and kind != "number" and not (kind == "date" and holds_kind("date", body)):
        return f"it is a bare number (\u201c{body.strip(' .')}\u201d) and the question does not ask for a number"
    if not holds_kind(kind, body):
        what = {"address": "an address", "date": "a date or time", "number": "a number or amount",
                "person": "who"}[kind]
        return f"it does not answer what was asked: the question asks for {what}, and the answer gives none"
    return ""

# the words of a number question that say what kind of number it wants, not what it is about
_SCAFFOLD = frozenset("""how many much long often old far big large high tall fast soon number numbers amount total
count quantity rate percentage percent maximum minimum max min period duration exactly roughly approximately about
around need needs take takes give gives get gets receive receives allowed able""".split())

_DURATIONS = frozenset("second minute hour day week fortnight month year".split())

_ASKED_UNIT = lazy(r"\bhow (?:many|much)\s+(?:of\s+(?:the|your|my|our|their)\s+)?([^\W\d_]+)", re.I)

_PERCENT_ASKED = lazy(r"\b(?:what|which) (?:percentage|percent|proportion|share)\b", re.I)

# a clause: a sentence cut at ";" and ":" and before a conjunction that starts another statement
_CLAUSE_BREAK = lazy(r"\s*[;:]\s+|,?\s+(?:and|but|while|whereas)\s+|,\s+(?:or|so|although|though|which)\s+",
                     re.I)

def _stem(word: str) -> str:
    """A crude stem for matching a question's words with a source's: "employees" ~ "employee", "seats" ~ "seat"."""
    w = word.lower().strip("'’")
    w = w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
    return w[:6]

def asked_units(question: str) -> set[str]:
    """The unit a number question names: "How many days ..." -> {"day"}, "How long ..." -> the durations, "What
    percentage ..." -> {"percent"}; empty when it names none ("How much is the fee?")."""
    asking = asked_sentence(question)
    if _PERCENT_ASKED.search(asking):
        return {"percent"}
    if re.search(r"\bhow long\b", asking, re.I):
        return set(_DURATIONS)
    m = _ASKED_UNIT.search(asking)
    if m and m.group(1).lower() not in STOPWORDS:
        unit = m.group(1).lower()
        return {unit.removesuffix("s"), unit.removesuffix("es")}  # "days" -> day; "boxes" -> box
    return set()

def subject_words(question: str) -> set[str]:
    """What a number question is about: the content words of its asking sentence, less the words that ask for a
    number ("how many", "amount") and the unit ("days"), stemmed (:func:`_stem`)."""
    asking = asked_sentence(question)
    units = asked_units(question)
    return {_stem(w) for w in content_words(asking)
            if w not in _SCAFFOLD and w.removesuffix("s") not in units and w not in units}

def clauses(sources: Sequence[str]) -> list[str]:
    return [c for src in sources for sentence in split_sentences(src) for c in _CLAUSE_BREAK.split(sentence)
            if c and c.strip()]

def off_the_subject(text: str, question: str, sources: Sequence[str], evidence: str = "", *,
                    closest: bool = False) -> str:
    """Why the numbers of ``text`` do not answer a number question ("" when they may). A number of the answer that
    is not in the extracted answer ``evidence`` (the sentence the walk found for the question: its numbers are kept)
    must (1) be given in the sources with the unit the question asks for, when the sources give that unit with some
    number ("How many people ..." answered with the floor, "4", where the source says "120 people"), and (2) sit in
    a clause of the sources that shares a word with the question's subject when a clause holding another number does
    (:func:`subject_words`, :func:`clauses`): "How many days of annual leave?" answered with the "5" of "requests
    must be made 5 days in advance" is rejected where the source's "27 days of annual leave" is there. Other
    questions, and answers without numbers, pass. ``closest`` tightens (2) to "at least as many of the subject's
    words as the clause of any other number": it catches a number from a clause about a neighbouring subject
    ("maternity leave" for "paternity leave") but lost right answers on the ConditionalQA tune half when the
    extracted answer is left out (docs/eval/answer-kind.md), so it is off."""
    if not question or asked_kind(question) != "number":
        return ""
    body = CITATION.sub("", text)
    for written, _ in dates_in(body):
        body = body.replace(written, " ")
    values = [(f.text, v) for f, v in number_facts(body)]
    if not values:
        return ""
    held = numbers_in(evidence) if evidence else set()
    units = asked_units(question)
    with_unit = {v for v, u in quantities("\n".join(sources)) if u in units} if units else set()
    subject = subject_words(question)
    parts = [(numbers_in(c), len(subject & {_stem(w) for w in content_words(c)})) for c in clauses(sources)]
    best = max((score for nums, score in parts if nums), default=0)
    for written, value in values:
        if value in held:
            continue
        if with_unit and value not in with_unit:
            return (f"its number (\u201c{written}\u201d) is not one the sources give in the unit the question asks "
                    "for")
        mine = max((score for nums, score in parts if value in nums), default=None)
        if mine is not None and (mine < best if closest else mine == 0 < best):
            return (f"its number (\u201c{written}\u201d) comes from a part of the sources about something else than "
                    "what was asked")
    return ""

def check_grounding(text: str, sources: Sequence[str], question: str = "", evidence: str = "") -> Grounding:
    """The verdict on ``text`` given the cited passages ``sources`` (see the module doc) and, when given, the
    extracted answer ``evidence``, which its quantities must not contradict (:func:`conflicts`)."""
    src_words = content_words("\n".join(sources)) | content_words(question)
    kept: list[str] = []
    dropped: list[str] = []
    seen: set[str] = set()
    for sentence in split_sentences(text):
        key = " ".join(re.findall(r"\w+", CITATION.sub("", sentence).lower()))
        words = content_words(CITATION.sub("", sentence))
        if not key or key in seen or is_question(sentence) or (words and not words & src_words):
            dropped.append(sentence)
            continue
        seen.add(key)
        kept.append(sentence)
    shown = " ".join(kept)
    if not shown:
        return Grounding(False, "", [], dropped, "no sentence of it is supported by the sources")
    bad = unsupported_facts(shown, sources, question)
    if bad:
        listed = ", ".join(f"\u201c{f.text}\u201d" for f in bad[:3])
        return Grounding(False, shown, bad, dropped, f"it says {listed}, which no passage shown does")
    bad = conflicts(shown, evidence) if evidence else []
    if bad:
        listed = ", ".join(f"\u201c{f.text}\u201d" for f in bad[:3])
        return Grounding(False, shown, bad, dropped, f"it says {listed}, where the sentence found gives another "
                         "number in that unit")
    off = off_the_question(shown, question) or off_the_subject(shown, question, sources, evidence)
    if off:
        return Grounding(False, shown, [], dropped, off)
    return Grounding(True, shown, [], dropped)
