"""The value shown first (:func:`short_answer`): the value ``core/answers/short.py`` finds for the question, and
whether it is shown, as ``core/answers/short_confidence.py``'s model reads the value and the walk's evidence for its
sentence (:func:`show_features`; a yes or no: :func:`yes_no_features`). Below the threshold no value is returned and
the sentence is shown first. Pure functions over strings and
:class:`~shelfwise.core.answers.types.Extracted` sentences, no model: ``tests/test_short_answer.py``,
``tests/test_short_show.py``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from shelfwise.core.answers.extractive import focus_question, question_keys
from shelfwise.core.answers.polarity import polarity
from shelfwise.core.answers.short import (
    WEIGHTS,
    Candidate,
    SpanWeights,
    _about,
    _closeness,
    _lead_in_list,
    asked_kind,
    stems,
    value_candidates,
)
from shelfwise.core.answers.short_confidence import SHOW, ShowFeatures, ShowWeights
from shelfwise.core.answers.span_model import ReadsContinuations
from shelfwise.core.answers.types import Extracted, ShortAnswer
from shelfwise.core.languages import lazy

_DIGITS = lazy(r"(?<![\w-])\d+(?:[.,\u00a0 ]\d{3})*(?:[.,]\d+)?(?![\w-]|[.,]\d)")


def _numbers(text: str) -> set[str]:
    """The numbers standing alone in ``text`` (not in a name: "COVID-19", "OT-2"), as their digits ("2,000",
    "2.000" and "2000" alike)."""
    return {re.sub(r"\D", "", m.group(0)) for m in _DIGITS.finditer(text)}


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _passage_evidence(sentence: Extracted, passages: Sequence[float | None]) -> tuple[float | None, float | None]:
    """The walk's cosine of ``sentence``'s passage with the question (``passages[n - 1]`` for citation ``n``) and
    its lead over the best other passage's (None where not known; the lead None with one passage)."""
    if not 0 < sentence.number <= len(passages) or passages[sentence.number - 1] is None:
        return None, None
    own = passages[sentence.number - 1]
    others = [p for n, p in enumerate(passages, 1) if n != sentence.number and p is not None]
    return own, (own - max(others) if others and own is not None else None)


def show_features(question: str, cands: Sequence[Candidate],
                  passages: Sequence[float | None] = ()) -> ShowFeatures:
    """What says whether the best of ``cands`` (best first, none empty) is right, in words that carry across
    languages: how far it stands above the best candidate that is another value (not the same words, not
    overlapping it in its sentence), whether it is of the kind asked for or a phrase, how many of the question's
    words its sentence holds (and what share), how near they stand to it, whether its sentence is the first shown,
    whether the question names a number its sentence lacks ("above EUR 2,000" asked of a sentence without it), and
    how many candidates there were; and the walk's evidence for its sentence: the encoder's cosine of the question
    with it and its lead over the other candidate sentences, its passage's cosine (``passages``: each cited
    passage's, in citation order) and that passage's lead over the others shown."""
    best = cands[0]
    other = next((c for c in cands[1:] if _words(c.text) != _words(best.text) and not (
        c.sentence is best.sentence and c.span.start < best.span.end and best.span.start < c.span.end)), None)
    keys = stems(question)
    others = [c.held for c in cands if c.sentence is not best.sentence]
    passage, passage_lead = _passage_evidence(best.sentence, passages)
    return ShowFeatures(
        margin=best.score - other.score if other is not None else None, typed=best.typed, ranked=best.ranked,
        held=best.held, keys=len(keys), close=_closeness(best.sentence.text, best.span, question_keys(question)),
        first=best.rank == 0, number_missing=bool(_numbers(focus_question(question)) - _numbers(best.sentence.text)),
        candidates=len(cands), held_lead=best.held - max(others, default=best.held),
        after=bool(best.features and best.features[4]), before=bool(best.features and best.features[5]),
        words=len(best.text.split()), cosine=best.sentence.cosine, lead=best.sentence.lead, passage=passage,
        passage_lead=passage_lead, read=best.model[1] if best.model is not None else None)


# a sentence that states a condition or leaves the question open: what it says holds only in some cases
_CONDITIONAL = lazy(r"\b(?:if|unless|whether|provided that|as long as|wenn|falls|sofern|soweit|ob|"
                    r"vorausgesetzt|si|s'il|s'ils|sauf si|à condition|pourvu que)\b", re.I)


def yes_no_features(question: str, sentences: Sequence[Extracted], deciding: Extracted, says: str,
                    passages: Sequence[float | None] = ()) -> ShowFeatures:
    """What says whether the yes or no ``says`` read from ``deciding`` (one of ``sentences``) is right: how many
    of the question's own words it holds (not a scene set before the question: "I work part time. Can I ...?"), and
    how many more than the other sentences found, whether the question names a number it lacks, whether it states a
    condition or leaves the question open, whether the question sets a scene, and the walk's evidence for it (as
    :func:`show_features`)."""
    focus = focus_question(question)
    keys = stems(focus)
    held = len(keys & stems(_about(with_lead_in(deciding))))
    others = [len(keys & stems(_about(with_lead_in(s)))) for s in sentences if s is not deciding]
    passage, passage_lead = _passage_evidence(deciding, passages)
    return ShowFeatures(
        margin=None, typed=False, ranked=False, held=held, keys=len(keys), close=0.0,
        first=deciding is sentences[0],
        number_missing=bool(_numbers(focus) - _numbers(with_lead_in(deciding))), candidates=1,
        held_lead=held - max(others, default=held), after=False, before=False, words=1, yes_no=True,
        says_no=says == "No", cosine=deciding.cosine, lead=deciding.lead, passage=passage,
        passage_lead=passage_lead, conditional=bool(_CONDITIONAL.search(with_lead_in(deciding))),
        scenario=len(focus) < len(question.strip()))


def deciding_sentence(question: str, sentences: Sequence[Extracted]) -> Extracted:
    """The found sentence a yes or no is read from: the one that shares most of the question's words (the best
    ranked on a tie; a question in another language than the documents may share none)."""
    keys = stems(question)
    return max(sentences, key=lambda s: (len(keys & stems(with_lead_in(s))), s.score))


def with_lead_in(sentence: Extracted) -> str:
    """What a sentence says for a yes or no: a list item together with its lead-in ("The following costs are never
    reimbursed:" above "- Traffic fines and parking fines."), whose words and negation are the item's too."""
    return f"{sentence.intro}\n{sentence.text}" if sentence.intro else sentence.text


def short_answer(question: str, sentences: Sequence[Extracted], weights: SpanWeights = WEIGHTS,
                 show: ShowWeights | None = None, passages: Sequence[float | None] = (),
                 model: ReadsContinuations | None = None) -> ShortAnswer | None:
    """The value ``question`` asks for, as a span of ``sentences`` (best first), or None when they hold none of
    its kind, it asks for no particular kind, or the value found (a yes or no too) is not sure enough to be shown
    first (:meth:`~shelfwise.core.answers.short_confidence.ShowWeights.shows`: the sentence is then shown first,
    without a value). ``passages``: the walk's cosine of the question with each cited passage, in citation order
    (part of the evidence the confidence reads; empty when not known). ``model``: the answer model, which then also
    weighs the phrases for a thing (``core/answers/span_model.py``); the same gate (``show``, else ``SHOW``) reads
    the value it put first."""
    if not sentences:
        return None
    kind = asked_kind(question)
    if kind == "yes_no":
        deciding = deciding_sentence(question, sentences)
        says = polarity(question, with_lead_in(deciding))
        shown, sure = (show or SHOW).shows(yes_no_features(question, sentences, deciding, says, passages))
        if not shown:
            return None
        text = " ".join(deciding.shown.split())
        return ShortAnswer(says, "yes_no", deciding.number, deciding.start, deciding.end, deciding.score,
                           sentence=text, confidence=round(sure, 4))
    if kind == "list":
        items = _lead_in_list(question, sentences)
        if items is not None:
            return items
    cands = value_candidates(kind, question, sentences, weights, model)
    if not cands or (cands[0].ranked and cands[0].score < 0) or not cands[0].text:
        return None
    best = cands[0]
    shown, sure = (show or SHOW).shows(show_features(question, cands, passages))
    if not shown:
        return None
    s, chosen = best.sentence, best.span
    shown_kind = chosen.kind if kind in ("number", "percent", "duration") else "span" if kind == "thing" else kind
    return ShortAnswer(best.text, shown_kind, s.number, s.start + chosen.start, s.start + chosen.end, s.score,
                       sentence=" ".join(s.shown.split()), confidence=round(sure, 4))
