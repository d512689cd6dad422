"""Does the model's text mean what the sources say? The checks after the fact check of
:mod:`~shelfwise.core.answers.grounding` (which finds the text's numbers, dates and names in the passages shown):

* **restating**: a text whose words are all the question's ("The company that provides health insurance.") answers
  nothing;
* **support**: each sentence of the text must stand in one sentence of a shown passage: at least
  ``SUPPORT`` of its content words and numbers (words compared on their first five letters, a plural "s" dropped;
  numbers as values, a number word once) in that one sentence, not scattered over the passages ("Yes, the company
  covers gym membership" where no sentence says so);
* **polarity**: for a yes/no question, the text's yes or no (its first word, else its negations against the
  question's) must be the deciding sentence's (:func:`~shelfwise.core.answers.short.polarity`), whether or not that
  yes or no is shown; where none is shown (the confidence withheld it), a text opening with one is withdrawn;
* **the kind asked for**: a question that asks for a number, an amount, a date, a time, a place or a name must get
  one in the text (:func:`~shelfwise.core.answers.short.asked_value`);
* **the value found**: of the values of that kind the text gives (numbers compared as values, less the question's
  own), at least one must be among those of the short answer and the sentences found, which are shown above it:
  "10 days." under "five" (a number some other passage holds, so the fact check passed it) contradicts them;
* **the value shown**: a text that gives none of the short answer's words or numbers (the question's aside) says
  something else than the value shown above it ("The anchor days are the last two weeks of each month." under
  "Tuesday and Thursday");
* **adds nothing**: a text whose words and numbers are all in the short answer, the sentence(s) found and the
  question is not shown (it would only repeat them);
* **the rate asked for**: for a question asking for a value "per" something ("per kilometre"), a text that adds
  something must give one per it ("per km", "/km"): "a monthly payment of up to 60 km one way" does not.

:func:`check_meaning` returns a :class:`Meaning`: why the text is withdrawn (``reason``), or that it adds nothing,
or the list of checks it passed (``checks``: the label the CLI and the window show says exactly these). Pure
functions, no model: tests/test_meaning.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from shelfwise.core.answers.facts import numbers_in, split_sentences
from shelfwise.core.answers.first_value import deciding_sentence, with_lead_in
from shelfwise.core.answers.polarity import polarity
from shelfwise.core.answers.short import asked_value, spans_of, stems
from shelfwise.core.answers.types import Extracted, ShortAnswer

SUPPORT = 0.6  # share of a text sentence's content words that one source sentence must hold
NOVEL_MAX = 1  # content words of a text sentence that no passage holds at all (one: a paraphrase's word)
_CITATION = re.compile(r"\s?\[\d+(?:\s*[,;]\s*\d+)*\]")
_YES = re.compile(r"^\W*(?:yes|yeah|ja|oui|si)\b", re.I)
_NO = re.compile(r"^\W*(?:no|nope|nein|non)\b", re.I)
_VALUE_KINDS = ("number", "money", "percent", "duration", "date", "time")  # kinds whose values are numbers
_KIND_WORDS = {"number": "a number", "money": "an amount", "percent": "a percentage", "duration": "a duration",
               "date": "a date", "time": "a time", "place": "a place", "name": "a name", "list": "a list"}
_PER = re.compile(r"\bper\s+([^\W\d_]+)", re.I)  # a rate asked for: "per kilometre", "per night"
FACTS_CHECK = "its numbers, dates and names are in the passages shown"
SUPPORT_CHECK = "each of its sentences stands in one sentence of a passage"
VALUE_CHECK = "it gives the value shown above it"


@dataclass
class Meaning:
    reason: str = ""  # why the text is withdrawn ("" when it is not)
    adds_nothing: bool = False  # it only repeats the short answer and the sentence(s): not shown
    checks: list[str] = field(default_factory=list)  # what it passed, in words (the label)


def _plain(text: str) -> str:
    return _CITATION.sub("", text).strip()


def source_sentences(sources: Sequence[str]) -> list[str]:
    return [s for src in sources for line in src.split("\n") for s in split_sentences(line) if s.strip()]


def restates(text: str, question: str) -> bool:
    """Whether ``text`` says nothing but the question's own words (and numbers)."""
    words = stems(_plain(text))
    return not (words - stems(question)) and numbers_in(text) <= numbers_in(question)


def unsupported_sentences(text: str, sources: Sequence[str], question: str = "") -> list[str]:
    """The sentences of ``text`` no single sentence of ``sources`` holds at least ``SUPPORT`` of the content words
    of (words of the question count as held: the text may name what was asked)."""
    def tokens(text: str) -> set[str]:  # content words and numbers (as values; a number word once, as its value)
        return {w for w in stems(text) if not numbers_in(w)} | {f"{v:g}" for v in numbers_in(text)}

    src = [tokens(s) for s in source_sentences(sources)]
    anywhere = set().union(*src)
    asked = tokens(question)
    out = []
    for sentence in split_sentences(_plain(text)):
        words = tokens(sentence) - asked
        if not words:
            continue
        best = max((len(words & s) / len(words) for s in src), default=0.0)
        # words no passage has at all: something added ("(in the case of a car with an automatic transmission)",
        # "a monthly payment"), however much of the rest a sentence holds
        if best < SUPPORT or len(words - anywhere) > NOVEL_MAX:
            out.append(sentence)
    return out


def text_polarity(text: str, question: str) -> str:
    """The yes or no of a text: its first word when it is one, else its negations against the question's."""
    plain = _plain(text)
    if _YES.match(plain):
        return "Yes"
    if _NO.match(plain):
        return "No"
    return polarity(question, plain)


def off_the_found(kind: str, text: str, question: str, found: str) -> str | None:
    """The first value of ``kind`` that ``text`` gives when none of those it gives (numbers compared as values, the
    question's own left out) is in the ``found`` text (the short answer and the sentences shown); "" when one is;
    None when it gives none."""
    asked = numbers_in(question)
    given = [(text[s.start:s.end], numbers_in(text[s.start:s.end]) - asked) for s in spans_of(kind, text, question)]
    given = [(value, numbers) for value, numbers in given if numbers]
    have = numbers_in(found)
    if not given:
        return None
    return "" if any(numbers & have for _, numbers in given) else given[0][0]


def _gives(text: str, value: str, question: str) -> bool:
    """Whether ``text`` gives ``value`` (the short answer shown above it): one of its numbers (as values) or of its
    words the question does not hold; a value of the question's own words alone counts as given."""
    words = stems(value) - stems(question)
    numbers = numbers_in(value) - numbers_in(question)
    if not words and not numbers:
        return True
    return bool(words & stems(text)) or bool(numbers & numbers_in(text))


def _deciding(question: str, short: ShortAnswer | None,
              sentences: Sequence[Extracted]) -> tuple[int, str, bool] | None:
    """For a yes/no question: the deciding sentence's citation number, its yes or no, and whether that is shown
    (``short``); read from the ``sentences`` found when none is shown (None without either)."""
    if short is not None and short.kind == "yes_no":
        return short.number, short.text, True
    if not sentences:
        return None
    decides = deciding_sentence(question, sentences)
    return decides.number, polarity(question, with_lead_in(decides)), False


def check_meaning(text: str, question: str, sources: Sequence[str], short: ShortAnswer | None,
                  sentences: Sequence[Extracted] = ()) -> Meaning:
    """The verdict on the model's ``text`` (already past the fact check against ``sources``, every passage shown),
    given the ``short`` answer and the ``sentences`` found (see the module doc)."""
    plain = _plain(text)
    checks = [FACTS_CHECK]
    kind = asked_value(question)
    said = ""
    deciding = _deciding(question, short, sentences) if kind == "yes_no" else None
    number = 0
    if deciding is not None:
        number, says, shown = deciding
        said = text_polarity(plain, question)
        if said != says:
            return Meaning(f"it says {said.lower()} where the deciding sentence [{number}] says {says.lower()}")
        if not shown and (_YES.match(plain) or _NO.match(plain)):
            # no yes or no is shown: the sentences found do not settle it surely enough, so neither does the model
            return Meaning("it says yes or no where the sentences found do not settle it")
    if restates(plain, question):
        return Meaning("it only restates the question")
    loose = unsupported_sentences(plain, sources, question)
    if loose:
        return Meaning(f"no passage says \u201c{loose[0][:80]}\u201d")
    checks.append(SUPPORT_CHECK)
    if said:
        checks.append(f"its {said.lower()} is the deciding sentence's [{number}]")
    elif kind in _KIND_WORDS and kind != "list":
        if not spans_of(kind, plain, question):
            return Meaning(f"it gives no {_KIND_WORDS[kind].split(' ', 1)[1]}, which the question asks for")
        checks.append(f"it gives {_KIND_WORDS[kind]}, as the question asks")
    found = " ".join([short.text if short else "", *(s.shown for s in sentences)])
    if kind in _VALUE_KINDS:
        other = off_the_found(kind, plain, question, found)
        if other:
            return Meaning(f"it gives {other}, which the sentences found do not")
        if other is not None:
            checks.append(f"its {_KIND_WORDS[kind].split(' ', 1)[1]} is one the sentences found give")
    if short is not None and short.kind != "yes_no":
        if not _gives(plain, short.text, question):
            return Meaning(f"it does not give {short.text}, the value the sources give")
        if kind not in _VALUE_KINDS:  # a number's is said by the check above
            checks.append(VALUE_CHECK)
    known = " ".join([found, question])
    if stems(plain) <= stems(known) and numbers_in(plain) <= numbers_in(known):
        return Meaning(adds_nothing=True, checks=checks)
    per = _PER.search(question) if kind in _KIND_WORDS else None
    if per and not re.search(rf"(?:\bper\s+|/\s*){per.group(1)[0]}", plain, re.I):
        # "What is the commuting allowance per kilometre?": not "up to 60 km one way"
        return Meaning(f"it gives no value per {per.group(1)}, which the question asks for")
    return Meaning(checks=checks)
