"""Which sentences hold a value of the kind the question asks for (issue 48): the sentence ranker's
cue for a question asking for a value.

``extractive.type_cue`` already prefers, for "how many/much" or "when", a sentence holding any number or any
date. This cue is the short answer's own reading of the kind asked (``short.asked_kind``): a sentence counts
when ``short.spans_of`` finds a span of that kind in it: a percentage for "what
percentage", a sum of money (or a share) for "how much does it cost", a date or a time for "when", any
quantity for "how many" or "how long" ("one" before a noun too: "one week of notice"). So the
sentence shown, and read for the short answer, is more often one that holds a value the short answer can give.
Only the kinds of a value (number, percent, duration, date, time): for a name or a place the spans are any
capitalised words and the cue did not help (docs/eval/answers.md "Session 27 (sentence)", where the weight
``extractive.KIND_WEIGHT`` was chosen on the training data held out by document).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from shelfwise.core.answers.extractive import asks_value
from shelfwise.core.answers.short import asked_kind, spans_of
from shelfwise.core.answers.typed_spans import asks_money
from shelfwise.core.languages import lazy

VALUE_KINDS = ("number", "percent", "duration", "date", "time")
# "one week of notice", "one remote day per week": the short answer's spans leave "one" out (a pronoun as often as
# a number: "the one that", "one of them"), but before a noun it counts
_ONE = lazy(r"(?<!\bthe )(?<!\bno )(?<!\bthis )(?<!\bthat )\b(?:one|a single)\s+(?!of\b|another\b|or\b|and\b)[^\W\d_]",
            re.I)


def holds_kind(kind: str, text: str, question: str) -> bool:
    """Whether ``text`` holds a span of ``kind`` as the short answer reads it: for a percentage one, for a sum
    asked (:func:`typed_spans.asks_money`) a sum or a share, for a number or a duration any quantity ("How long
    must the password be?": "14 characters")."""
    spans = spans_of(kind, text, question)
    if kind in ("duration", "number") and not asks_money(question) and _ONE.search(text):
        return True
    if kind == "percent":
        return any(sp.kind == kind for sp in spans)
    if kind == "number" and asks_money(question):
        return any(sp.kind in ("money", "percent") for sp in spans)
    return bool(spans)


def kind_cue(question: str, texts: Sequence[str]) -> np.ndarray:
    """1 for each text holding a value of the kind ``question`` asks for (:func:`holds_kind`), else 0; all 0 for a
    question asking for no value (a thing, a name, a place, a list, how, why, yes or no) and for one whose words do not
    ask for a number or a time outright (:func:`extractive.asks_value`: "What is the expenses limit for hotels?"
    would prefer any sentence with a sum, "EUR 85 per person" for customer dinners)."""
    kind = asked_kind(question)
    if kind not in VALUE_KINDS or not asks_value(question):
        return np.zeros(len(texts), dtype=np.float32)
    return np.array([holds_kind(kind, t, question) for t in texts], dtype=np.float32)
