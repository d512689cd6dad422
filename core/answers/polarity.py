"""Yes or no: whether a sentence affirms or denies what a question asks (issue 48, item 1), read from their negations
("not", "kein", "pas"), a question's word said with a negating prefix ("paid" asked, "unpaid" said), and a sentence
that restricts ("only", "nur", "seulement") or excepts ("except", "außer", "sauf") what the question names.
``core/answers/first_value.py`` shows the deciding sentence's :func:`polarity` as "No: <sentence>";
``core/answers/meaning.py`` withdraws a model's text whose yes or no is the opposite. Functions over strings:
``tests/test_short_answer.py``.
"""

from __future__ import annotations

import re

from shelfwise.core.answers import cues
from shelfwise.core.answers.extractive import focus_question
from shelfwise.core.answers.facts import STOPWORDS
from shelfwise.core.answers.short import stems
from shelfwise.core.answers.typed_spans import MONTH, WEEKDAY
from shelfwise.core.languages import lazy

_ONLY = lazy(r"\b(?:only|solely|exclusively|nur|ausschließlich|seulement|uniquement)\b|\bne\b[^.]{0,40}\bque\b",
             re.I)
_EXCEPT = lazy(r"\b(?:except|excluding|other than|apart from|außer|ausgenommen|sauf|excepté|hormis)\b", re.I)


def negations(text: str) -> int:
    """How many negation words ``text`` holds ("not", "n't", "no", "kein", "nicht", "pas", "jamais", ...)."""
    return len(cues.NEGATION.findall(text))


_UN = lazy(r"\b(?:un|non-?)([^\W\d_]{4,})", re.I)  # "unpaid", "non-refundable", "unbezahlt"


def opposites(question: str, sentence: str) -> int:
    """How many words of ``sentence`` are a word of ``question`` with a negating prefix ("paid" asked, "unpaid"
    said; "bezahlt" / "unbezahlt"), the question not holding the prefixed word itself."""
    asked = {w.lower() for w in re.findall(r"[^\W\d_]+", question)}
    return sum(1 for m in _UN.finditer(sentence) if m.group(1).lower() in asked and m.group(0).lower() not in asked)


def _word_class(word: str) -> str:
    if re.fullmatch(WEEKDAY, word, re.I):
        return "weekday"
    if re.fullmatch(MONTH, word, re.I):
        return "month"
    if re.fullmatch(r"\d+(?:[.,]\d+)?", word):
        return "number"
    return "name" if word[:1].isupper() else ""


# a table row read out as a sentence ("| Lunch | ... | No enrolment needed |", "..., how to enrol No enrolment
# needed"): a cell that opens with a capitalised negation (at a part's start, or after a lower-case word)
_CELL_NEGATION = re.compile(r"(?:^|(?<=[a-zäöüéèà] ))(?:No|None|Not|Never|Nothing|Kein|Keine|Keinen|Nicht|Aucun|"
                            r"Aucune|Pas|Jamais)\b")


def _other_cells_negated(sentence: str, keys: set[str]) -> int:
    """How many of ``sentence``'s negations open a cell of a table row (a part between "|", "," or ";") that shares
    none of the question's words (``keys``): "Is there free lunch?" is not answered "No" by the Lunch row's cell
    "No enrolment needed"."""
    parts = re.split(r"\s*[|,;]\s*", sentence)
    return sum(len(_CELL_NEGATION.findall(p)) for p in parts if not keys & stems(p))


def polarity(question: str, sentence: str) -> str:
    """"Yes" when ``sentence`` affirms what ``question`` asks, "No" when it denies it: an odd number of negations
    between them (a question's word said with a negating prefix counts: "paid" asked, "unpaid" said); or the
    sentence restricts with "only" and the question names another thing of the restricted kind ("on Fridays only"
    asked about Mondays), or excepts ("except", "außer", "sauf") what the question names.
    Only the question itself is read, not a scene set before it ("I have not worked for a year. Can I claim ...?":
    the asker's "not" does not deny what is asked)."""
    question = focus_question(question)
    keys = stems(question)
    flips = negations(question) + negations(sentence) - _other_cells_negated(sentence, keys) \
        + opposites(question, sentence)
    for m in _EXCEPT.finditer(sentence):
        if keys & stems(sentence[m.end(): m.end() + 80]):
            flips += 1
            break
    else:
        only = _ONLY.search(sentence)
        if only:
            near = re.findall(r"[\w'-]+", sentence[max(0, only.start() - 40): only.end() + 40])
            restricted = {_word_class(w) for w in near} - {""}
            have = stems(sentence)
            missing = [w for w in re.findall(r"[\w'-]+", question)[1:]
                       if w.lower() not in STOPWORDS and stems(w) and not stems(w) & have]
            if any(_word_class(w) in restricted for w in missing):
                flips += 1
    return "No" if flips % 2 else "Yes"
