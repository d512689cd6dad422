"""The value asked for, shown first: a short answer taken as a span of the sentences found (never new words).

:func:`asked_value` reads what kind of value a question asks for (English, German and French wording; the other
languages of ``core/answers/cues.py`` for numbers and dates): ``yes_no``, ``percent``, ``time``, ``date``,
``duration``, ``number`` (with ``money`` and ``percent`` read off the span found), ``name``, ``place``, ``list``,
or ``span`` (nothing more specific); :func:`asked_kind` reads ``thing`` among the latter for a question asking
what, which or who, and leaves ``span`` (no short answer) to how and why.

:func:`value_candidates` looks for spans of that kind (``core/answers/typed_spans.py``; for a thing asked for, the
phrases of ``core/answers/phrases.py`` ranked by :class:`SpanWeights`) in the extracted sentences, best sentence
first; ``core/answers/first_value.py``'s ``short_answer`` shows the best as a
:class:`~shelfwise.core.answers.types.ShortAnswer` located in its passage (citation number and offsets):

* numbers, amounts and durations: a number with its currency, percent sign or unit word ("EUR 75 per day", "27
  days"), with its bound ("up to EUR 50", "21 or over") unless the question names it, a range whole ("6 to 9
  months"), how often for "how often" ("every month"); not a number the question names; the unit it names ("how
  many *weeks*") is preferred, and a percentage for a rate;
* dates and times: date, weekday, month, clock-time pieces joined ("every Monday at 11:00"); how often, or a
  duration, where the sentence names no date ("within 1 month");
* names: capitalised words or codes not in the question, with its head noun after them ("Overtime Request form
  (OT-2)" for "Which form ..."); places: the object of "at/in/on" (German/French too) or an address/host;
* lists: the items a lead-in sentence brings, or a series "A, B, C and D" in the sentence;
* yes/no: "Yes" or "No" from the deciding sentence's polarity against the question's (``core/answers/polarity.py``:
  negation words, "only"/"except" restricting what the question names), shown as "No: <sentence>".

Among several spans of the kind in one sentence, the one nearest the question's own words wins
(:func:`value_candidates`); it is shown only when ``core/answers/short_confidence.py``'s confidence in it reaches its
threshold (a wrong value shown first is worse than none; ``core/answers/first_value.py``). Where the answer model
is given (generation on), the phrases for a thing are also weighed by its likelihood of each as the answer
(``span_model.py``). Functions over strings and ``Extracted`` sentences: ``tests/test_short_answer.py``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from shelfwise.core.answers import cues
from shelfwise.core.answers.extractive import focus_question, list_items, question_keys
from shelfwise.core.answers.facts import STOPWORDS
from shelfwise.core.answers.grounding import asked_units
from shelfwise.core.answers.phrases import FUNCTION_WORDS, bearing_clauses, phrase_spans, place_phrases
from shelfwise.core.answers.span_model import ReadsContinuations, read_phrases
from shelfwise.core.answers.typed_spans import (
    NUMBER_WORD_EN,
    Span,
    abbreviates,
    as_asked,
    asks_clock,
    asks_money,
    asks_phone,
    bare_value,
    contact_spans,
    date_spans,
    deadline_for_extent,
    frequency_spans,
    list_spans,
    name_spans,
    phone_spans,
    place_spans,
    quantity_spans,
    restates,
    time_spans,
    typed_places,
    unbound_as_asked,
)
from shelfwise.core.answers.types import Extracted, ShortAnswer
from shelfwise.core.languages import lazy

# --------------------------------------------------------------------------- what the question asks for
_EN_AUX = (r"do|does|did|can|could|is|are|was|were|will|would|should|shall|may|might|must|have|has|had|am|"
           r"isn't|aren't|don't|doesn't|didn't|can't|cannot|won't|wouldn't|shouldn't|mustn't")
_YES_NO_EN = re.compile(rf"^\W*(?:{_EN_AUX})\b", re.I)
_YES_NO_FR = re.compile(r"^\W*(?:est-ce qu|(?:\w+)-(?:je|tu|il|elle|on|nous|vous|ils|elles|t-il|t-elle|t-on)\b|"
                        r"y a-t-il\b)", re.I)
# German questions put the finite verb first; the W-words and prepositions that open other questions
_DE_OPENERS = lazy(r"^\W*(?:wer|wen|wem|wessen|was|wann|wo|wohin|woher|wie|welche[rsnm]?|warum|wieso|weshalb|"
                   r"wozu|wo[r]?(?:an|auf|aus|bei|durch|für|gegen|in|mit|nach|über|um|unter|von|vor|zu)|"
                   r"in|an|auf|bis|ab|für|um|seit|mit|nach|von|zu|bei|aus|über|unter|vor|durch)\b", re.I)
_DE_VERBS = re.compile(r"^\W*(?:kann|kannst|können|könnte|könnten|muss|musst|müssen|darf|darfst|dürfen|ist|sind|"
                       r"bin|bist|gibt|gilt|habe|hat|haben|hast|brauche|brauchst|braucht|brauchen|bekomme|bekommt|"
                       r"bekommen|erhalte|erhält|erhalten|werde|wird|werden|soll|sollte|sollen|zahlt|bezahlt|"
                       r"übernimmt|erstattet|dürfte|gehört|zählt|benötige|benötigt|steht|stehen|geht|gehen|"
                       r"wäre|war|waren|hatte|hatten|mag|möchte|will|wollen|sollten|müsste|müssten|gelten|bleibt|"
                       r"bleiben|findet|finden)\b", re.I)
_ANY_WH = lazy(r"\b(?:what|which|who|whom|whose|when|where|why|how|wer|wen|wem|was|wann|wo|wohin|wie|"
               r"welche[rsnm]?|warum|qui|que|quoi|quel(?:le)?s?|quand|où|comment|combien|pourquoi|"
               r"lequel|laquelle)\b", re.I)

_PERCENT_Q = re.compile(r"\b(?:what|which) (?:percentage|percent|proportion|share)\b|\bhow many percent|"
                        r"\bwie viel(?:e)? prozent|\bwelche[rn]? (?:prozentsatz|anteil)|\bquel(?:le)? "
                        r"(?:pourcentage|part|proportion)|\bcombien de pour ?cent", re.I)
_TIME_Q = re.compile(r"\b(?:what|which) time\b|\bat what time\b|\buntil what time\b|\b(?:opening|office|core|"
                     r"working|business|support) hours\b|\bum wie ?viel uhr\b|\buhrzeit|\böffnungszeit|\bkernzeit|"
                     r"\bà quelle heure\b|\bquelle heure\b|\bhoraires?\b|\bheures d(?:e\s|')\w+", re.I)
_DATE_Q = re.compile(r"\bwhen\b|\b(?:what|which|by what|on what) (?:date|day|year|month)\b|\bdeadline\b|"
                     r"\bbis wann\b|\bab wann\b|\ban welchem (?:tag|datum)\b|\bwelche[sm]? (?:datum|tag|jahr)\b|"
                     r"\bquelle date\b|\bquel jour\b|\bjusqu'à quand\b|\bà partir de quand\b|\ben quelle année\b",
                     re.I)
_DURATION_Q = re.compile(r"\bhow long\b|\bwie lange?\b|\bcombien de temps\b|\bpendant combien\b|\bdurée\b", re.I)
_QUANTITY_Q = re.compile(r"\bhow (?:many|much|often|old|far|large|big|high)\b|\bby how much\b|\bup to what\b|"
                         r"\b(?:what|which) (?:is the )?(?:amount|rate|number|value|age|price|cost|fee|limit|"
                         r"minimum|maximum|budget|allowance|salary)\b|\bminimum\b|\bmaximum\b|"
                         r"\bwie (?:viel|viele|vielen|vieler|oft|alt|hoch|groß|weit)\b|\bwieviele?\b|\bcombien\b|"
                         r"\bwas (?:kostet|kosten)\b|\bcombien coûte\b|"
                         r"\bquel(?:le)? est le (?:montant|prix|taux|nombre|budget|plafond)\b", re.I)
_AMOUNT_NOUNS = lazy(r"\b(?:rate|price|cost|fee|amount|allowance|budget|salary|per diem|length|limit|"
                     r"discount|deposit|capacity|revenue|income|turnover|profit|umsatz|gewinn|"
                     r"chiffre d'affaires|betrag|preis|kosten|gebühr|satz|pauschale|montant|prix|taux|tarif|"
                     r"frais|indemnité)\b", re.I)
_NAME_Q = lazy(r"\bwho(?:m|se)?\b|\bwhich\b|\bwhat (?:is|are|was|were) (?:the )?names?\b|\bcalled\b|"
               r"\bwhat [a-z]+ (?:do|does|should|must|can|is|are)\b|\bwer\b|\bwen\b|\bwem\b|\bwelche[rsnm]?\b|"
               r"\bwie (?:heißt|heißen|hieß|hießen|lautet|lauten|lautete|lauteten|nennt man|nannte man)\b|"
               r"\bgenannt\b|\bbezeichnet\b|\bappel(?:é|ée|és|ées|le)\b|\bqui\b|\bquel(?:le)?s?\b|"
               r"\bcomment s'appelle\b", re.I)
_PLACE_Q = lazy(r"\bwhere\b|\bin which (?:city|country|town|building|room|office|floor)\b|\bwo(?:hin|her)?\b|"
                r"\boù\b|\bdans quel(?:le)?\b", re.I)
# "which rooms", "which meeting rooms" (a plural noun, one word before it at most): a list
_LIST_Q = lazy(r"\b(?:what|which) (?:are|were) (?:the|our|its|their)\b|\b(?:list|name) (?:the|all)\b|"
               r"\b(?:which|what) (?:(?!(?:is|are|was|were|do|does|did|has|have|had|can|will)\b)[a-z]+ )?"
               r"[a-z]{3,}(?<!s)s\b|\bwelche \w+ (?:sind|gibt es|haben)\b|\bwas sind\b|\bquel(?:le)?s sont\b",
               re.I)


_VALUE_QUESTIONS = (("percent", _PERCENT_Q), ("time", _TIME_Q), ("duration", _DURATION_Q), ("date", _DATE_Q),
                    ("number", _QUANTITY_Q))


_DE_WORDS = lazy(r"\b(?:der|die|das|den|dem|des|und|ist|sind|ein|eine|einen|von|vom|zu|zum|zur|mit|im|wurde|"
                 r"wurden|hat|haben|hatte|sich|nach|für|auf|nicht|auch|welche[rsnm]?)\b", re.I)
_EN_WORDS = lazy(r"\b(?:the|of|a|an|to|in|for|and|on|with|by|it|that|this|you|he|she|they|there)\b", re.I)


_EN_AFTER_WAS = frozenset("""the a an it he she there this that his her their its your my our one any each every not
all some no anyone anything someone something everyone everything nobody none either neither""".split())


def _german(question: str) -> bool:
    """More German function words than English ones: "Was benannte ...?" is German, not an English "Was the ...?"."""
    if len(_DE_WORDS.findall(question)) > len(_EN_WORDS.findall(question)):
        return True
    # "Was verwenden ...": a lower-case verb after "Was" (English has "Was the", "Was it", "Was Tesla")
    second = re.match(r"^\W*was\s+([^\W\d_]+)", question, re.I)
    return bool(second and second.group(1).islower() and second.group(1) not in _EN_AFTER_WAS)


# what opens a condition set before the question itself ("If one person is ill, does the family stay at home?")
_CONDITION_LEAD = lazy(r"^\W*(?:if|when|whenever|once|while|after|before|since|wenn|falls|sobald|sofern|nachdem|si|"
                       r"lorsque|quand|dès que)\b", re.I)


def is_yes_no_question(question: str) -> bool:
    """A question answered yes or no: an English auxiliary first ("Do I need ...?"), a French inversion or
    "est-ce que", or a German verb first; a choice between alternatives ("... X or Y?") is not one. So is one whose
    last clause is such a question after a condition or a statement ("If I am ill, do I ...?", "Ich bin
    Unternehmer, darf ich ...?", "Wenn ich Pakete bestellt habe: Werden diese ...?"), not after a question word
    ("Who, if anyone, can ...?")."""
    q = question.strip()
    if _verb_first(q):
        return True
    cuts = list(re.finditer(r"[,:;]\s+", q))
    if not cuts:
        return False
    lead, clause = q[: cuts[-1].start()], q[cuts[-1].end():]
    return (len(clause.split()) >= 3 and bool(_CONDITION_LEAD.match(lead) or not _ANY_WH.search(lead))
            and _verb_first(clause))


def _verb_first(q: str) -> bool:
    if re.search(r"\s(?:or|oder|ou)\s[^?]*\?\s*$", q, re.I) and not re.search(r"\bor not\b", q, re.I):
        return False
    if _YES_NO_EN.match(q) and not _german(q):
        return True
    if _YES_NO_FR.match(q) and not re.match(r"^\W*(?:qu|quel|quand|où|comment|combien|pourquoi)", q, re.I):
        return True
    return bool(_DE_VERBS.match(q) and not _DE_OPENERS.match(q))


def asked_value(question: str) -> str:
    """The kind of value ``question`` asks for (see the module doc), ``span`` when none is named."""
    q = focus_question(question)
    if len(q.split()) < 3:  # "... bis zum 18. Jahrhundert?": an ordinal's dot is no sentence's end
        q = question.strip()
    if is_yes_no_question(q) or cues.asks_event(q):
        return "yes_no" if is_yes_no_question(q) else "span"
    # the value words first named win ("By how much is it reduced when ...?" asks for an amount)
    found = [(m.start(), kind) for kind, pattern in _VALUE_QUESTIONS for m in [pattern.search(q)] if m]
    if cues.OTHER_WH.match(q):  # a "when" that opens a clause asks for no date (cues.without_clause_when)
        found = [(at, kind) for at, kind in found if not (kind == "date" and cues.WHEN_WORD.match(q, at))]
    if found:
        return min(found)[1]
    if cues.asks_when(cues.without_clause_when(q)):
        return "date"
    if cues.asks_quantity(q) or (re.match(r"^\W*(?:what|which|welche[rsnm]?|was|quel(?:le)?)\b", q, re.I)
                                 and _AMOUNT_NOUNS.search(q)):
        return "number"
    if _PLACE_Q.search(q):
        return "place"
    if asks_phone(q):  # "What is the travel assistance phone number?", "Which extension do I call ...?"
        return "number"
    if _LIST_Q.search(q):
        return "list"
    if _NAME_Q.search(q):
        return "name"
    return "span"


# German and French function words (English ones are grounding.STOPWORDS): not what a question is about
_FUNCTION_WORDS = frozenset("""ich du er sie es wir ihr das der die den dem des ein eine einen einem einer und oder
für mit von auf ist sind wie was wer wann welche welcher welches mein meine dein sich man bei nach zum zur aus dass
wird werden kann muss darf soll gibt pro les une des est sont que qui quel quelle quels quelles pour avec dans sur
mon ma mes son sa ses nous vous ils elles aux par pas une""".split())


def stems(text: str) -> set[str]:
    """The content words of ``text`` as compared here: lower case, a plural "s" dropped, the first 5 letters
    ("dogs" and "dog", "Mondays" and "Monday" meet); German and French function words left out."""
    return {w.removesuffix("s")[:5] if len(w) > 3 else w for w in question_keys(text, prefix=0)
            if w not in _FUNCTION_WORDS}


# --------------------------------------------------------------------------- the short answer
def spans_of(kind: str, text: str, question: str) -> list[Span]:
    if kind == "number" and ((phones := phone_spans(text, question)) or asks_phone(question)):
        return phones  # the number of a line or a desk asked for: its phone number (none: no other number)
    often = frequency_spans(text) if kind in ("number", "date") and _OFTEN_Q.search(question) else []
    if kind in ("number", "percent", "duration"):
        return often + [unbound_as_asked(sp, text, question) for sp in quantity_spans(text)
                        if not any(o.start <= sp.start < o.end for o in often)]
    if kind == "time":
        return time_spans(text) or ([] if asks_clock(question) else date_spans(text))
    if kind == "date":
        return date_spans(text) or often or [unbound_as_asked(sp, text, question) for sp in quantity_spans(text)
                                             if sp.kind == "duration"]
    if kind == "place":
        return place_spans(text, question)
    if kind == "list":
        return list_spans(text)
    if kind == "name":
        return contact_spans(text, question) or name_spans(text, question)
    return []


_OFTEN_Q = lazy(r"\bhow often\b|\bwhen\b|\bwie oft\b|\bwann\b|\bà quelle fréquence\b|\bquand\b", re.I)
# "outside core hours", "except the lab": words that follow these are what the sentence is *not* about
_OUTSIDE = lazy(r"\b(?:outside(?: of)?|except(?: for)?|besides|beyond|other than|apart from|"
                r"außerhalb(?: der| des)?|außer|hors(?: de)?|en dehors d(?:e|u|es)|sauf)\s+"
                r"(?:the\s+|der\s+|des\s+|du\s+|la\s+|le\s+)?"
                r"[^\W\d_]+(?:\s+[^\W\d_]+)?", re.I)


def _about(text: str) -> str:
    """``text`` with what it excludes blanked out (same length: offsets hold)."""
    return _OUTSIDE.sub(lambda m: " " * len(m.group(0)), text)


def _closeness(text: str, span: Span, keys: Sequence[str]) -> float:
    """How near the span sits to the question's words, within its own sentence: for each word of the question,
    1 / (1 + its distance in characters / 20) from its nearest occurrence, summed ("Core hours are 10:00 to 15:00"
    beats "outside core hours ... window of 07:00 to 20:00" for "What are the core hours?"); plus 0.75 for each
    such word in what follows the span up to the clause's end: what a value is "of" or "for" ("by 20 percent for
    breakfast and by 35 percent each for lunch": lunch's is 35 percent)."""
    starts = [m.end() for m in re.finditer(r"[.!?;]\s+", text[: span.start])]
    begin = starts[-1] if starts else 0
    stop = re.search(r"[.!?;]\s+|$", text[span.end:])
    end = span.end + (stop.start() if stop else 0)
    low = _about(text[begin:end]).lower()
    a, b = span.start - begin, span.end - begin
    tail = re.split(r",|\b(?:and|or|but|und|oder|et|ou)\b", low[b:], maxsplit=1)[0]
    total = 0.0
    for k in keys:
        at = [m.start() for m in re.finditer(rf"(?<!\w){re.escape(k)}", low)] if len(k) > 2 else []
        if at:
            gap = min(0 if a <= p < b else min(abs(p - a), abs(p - b)) for p in at)
            total += 1.0 / (1.0 + gap / 20.0)
            total += 0.75 * bool(re.search(rf"(?<!\w){re.escape(k)}", tail))
    return total


def _score(kind: str, span: Span, text: str, question: str) -> float | None:
    """How well ``span`` of ``text`` answers: None when it is no answer (a value the question itself names); more
    for the unit the question names, a percentage or duration asked for, an amount for "how much", a span near the
    question's words."""
    piece = text[span.start:span.end]
    q_numbers = {m.group(0) for m in re.finditer(r"\d+(?:[.,]\d+)?", question)}
    digits = set(re.findall(r"\d+(?:[.,]\d+)?", piece))
    if kind in ("number", "percent", "duration") and digits and digits <= q_numbers:
        return None
    if (kind == "number" and span.kind not in ("money", "percent") and asks_money(question)) or (
            kind == "duration" and span.kind in ("money", "percent")) or deadline_for_extent(
            piece, span.kind, question):
        return None  # "How much does it cost?" is not answered "4 years", "How long ...?" by "£95", "How far" by a time
    if restates(piece, question):
        return None  # the question's own words are no answer ("... in 2026?" is not answered "2026")
    score = 0.0
    if kind == "percent":
        score += 2.0 * (span.kind == "percent")
    if kind == "duration":
        score += 2.0 * (span.kind == "duration")
    units = asked_units(question)
    if units and any(u and u in piece.lower() for u in units):
        score += 2.0
    if kind == "number" and re.search(r"\bhow much|wie viel|combien", question, re.I) and span.kind == "money":
        score += 1.0
    score += 2.0 * (span.kind == "frequency")  # offered only where the question asks how often (or when)
    if kind == "number" and span.kind == "percent" and re.search(r"\b(?:rates?|steuersatz|satz|quote|taux)\b",
                                                                   question, re.I):
        score += 2.0  # "What rate of tax ...?" is answered by a percentage, not by the band it applies to
    if kind == "number" and span.kind == "number" and not re.search(r"[^\W\d_]", piece):
        score -= 0.5  # a bare number is a weaker answer than one with its unit
    return score + _closeness(text, span, question_keys(question)) + 2.0 * as_asked(text, span, question)


def value_fits(question: str, value: str) -> bool:
    """Whether ``value`` is of the kind ``question`` asks for: a number for a number, a percentage, a duration, a
    date or a time (a table's value or a model's text); any value for the other kinds."""
    kind = asked_value(question)
    if kind in ("number", "percent", "duration", "time"):
        return bool(re.search(r"\d", value) or NUMBER_WORD_EN.search(value))
    if kind == "date":
        return bool(re.search(r"\d", value) or date_spans(value))
    return True


@dataclass(frozen=True)
class SpanWeights:
    """How the spans offered to a question that asks for a thing (a name, a place, a list's items, or "what" /
    "which" / "was" / "quel" something) are ranked, one weight per feature of :func:`nominal_features`:
    ``close`` per unit of :func:`_closeness` (the question's words near it in its sentence), ``typed`` for a span of
    the kind asked for (a run of capitalised words for "who", a place after "in"), ``capitals`` per capitalised word
    in it (at most two) when a name or place is asked for, ``length`` per word beyond three, ``after`` when it
    follows one of the question's words with at most function words between ("consist of [circular RNAs]"),
    ``before`` when it comes right before one, ``lone`` for a single lower-case word (a verb or an adverb more often
    than a noun: "estimates", "naturally"); ``held`` per question word its sentence holds beyond the first
    sentence's (held at 1, as for the other kinds); no value is shown under ``show_min``, nor from a sentence
    holding fewer than ``min_held`` of the question's words. Chosen on the training data by
    ``benchmarks/research/short_tune.py`` (docs/eval/answers.md, "The span chosen from the sentence")."""

    close: float = 1.0
    typed: float = 1.0
    capitals: float = 1.0
    length: float = 0.0
    after: float = 1.0
    before: float = -2.0
    lone: float = -1.0
    held: float = 1.0
    min_held: int = 0
    show_min: float = -99.0
    # where the answer model reads the phrases (``span_model.py``): per unit of its per-token and summed log-probability
    # of each as the answer (``span_choice.py``), and for a clause (``phrases.is_clause``; the reading favours those)
    model_mean: float = 0.0
    model_sum: float = 0.0
    model_clause: float = 0.0

    def vector(self) -> tuple[float, ...]:
        """The weights in the order of :func:`nominal_features`' features."""
        return (self.close, self.typed, self.capitals, self.length, self.after, self.before, self.lone)


# the model's per-token reading weighs 3 (chosen on COVID-QA and ConditionalQA TRAIN by
# benchmarks/research/span_choice.py, docs/eval/answers.md "Session 25"); the ranker's own as short_tune.py chose
WEIGHTS = SpanWeights(model_mean=3.0, model_clause=-1.0)
_NOMINAL = ("name", "place", "list", "thing")
# a question that asks for a thing: its W-word, wherever it stands ("The Broncos beat which team?")
_THING_Q = lazy(r"\b(?:what|which|who|whom|whose|was|welche[rsnm]?|wer|wen|wem|wessen|womit|wovon|woraus|"
                r"que|qu'|quoi|quel(?:le)?s?|qui|lequel|laquelle|lesquel(?:le)?s)\b|^\W*qu['’]", re.I)
_HOW_WHY = lazy(rf"^\W*(?:how|why|wie|warum|wieso|weshalb|comment|pourquoi|{cues.EVENT})\b", re.I)
_LABEL = lazy(r"^\s*[\w ]{1,30}:\s")  # "Abstract: ...", "Text: ...": a label, not an answer


def asked_kind(question: str) -> str:
    """:func:`asked_value`, with "thing" for a question that names no kind of value but asks what, which or who
    ("What causes ...?", "Welche Sprache ...?"); "span" stays for how and why (a clause, no short value)."""
    kind = asked_value(question)
    if kind == "span" and _THING_Q.search(question) and not _HOW_WHY.match(question):
        return "thing"
    return kind


def _next_to_question(text: str, span: Span, q_stems: set[str]) -> tuple[float, float]:
    """Whether a word of the question stands just before ``span`` (at most two function words between) and just
    after it."""
    left = re.findall(r"[\w'’-]+", text[max(0, span.start - 60): span.start])[-3:]
    right = re.findall(r"[\w'’-]+", text[span.end: span.end + 60])[:3]

    def near(words: list[str]) -> float:
        for w in words:
            low = w.lower()
            if _stem(low) in q_stems and low not in STOPWORDS:
                return 1.0
            if low not in STOPWORDS and low not in FUNCTION_WORDS:
                return 0.0
        return 0.0

    return near(left[::-1]), near(right)


def nominal_features(kind: str, text: str, question: str) -> list[tuple[Span, tuple[float, ...]]]:
    """The spans offered to a question asking for a thing, each with the features :class:`SpanWeights` weighs (in
    the order of :meth:`SpanWeights.vector`). The spans: those of the kind asked for and the phrases the question's
    words leave over (:func:`phrase_spans`), none cutting into one of the former; not a citation mark ("[14]") or a
    label before a colon."""
    typed = {k: Span(*k, sp.kind) for k, sp in typed_places(text, spans_of(kind, text, question)).items()}
    shown = "name" if kind == "thing" else kind
    q_stems = stems(focus_question(question))  # the question's words, not the scene set before it
    # a series "A, B, C and D" answers a question asking for a list outright
    phrases = {} if kind == "list" and typed else {(p.start, p.end): p for p in phrase_spans(text, q_stems, _stem)}
    for p in place_phrases(text, q_stems | set(re.findall(r"\d+", question)), _stem) if kind == "place" else ():
        phrases.setdefault((p.start, p.end), p)
    keys = question_keys(question)
    label, answer_opens = _LABEL.match(text), re.match(r"A:\s+", text)
    out: list[tuple[Span, tuple[float, ...]]] = []
    for key in sorted({*typed, *phrases}):
        if any(a < key[1] and key[0] < b and not (key[0] <= a and b <= key[1]) for a, b in typed):
            continue  # it cuts into a name or place of the kind asked for: the name is taken whole
        span = typed.get(key) or Span(key[0], key[1], shown)
        if _score(kind if kind != "thing" else "name", span, text, question) is None or abbreviates(
                text, span, question):
            continue  # the question's own words or numbers ("defibrillator (AED)" for "the defibrillator")
        if re.search(r"\[[^\]]*$", text[: span.start]) or (label and span.end <= label.end()):
            continue
        if kind in ("name", "thing") and bare_value(text[span.start:span.end], who=kind == "name"):
            continue  # "2 working days" answers no "who", "09:30" no "what"
        words = text[span.start:span.end].split()
        caps = phrases[key].capitals if key in phrases else sum(w[:1].isupper() for w in words)
        if answer_opens and span.start == answer_opens.end() and words[0][:1].isupper():  # "A: Come to ..."
            caps -= 1  # an FAQ answer's first word is capitalised as any sentence's: alone it names no one
            if kind == "name" and len(words) == 1:
                continue
        after, before = _next_to_question(text, span, q_stems)
        lone = len(words) == 1 and words[0][:1].islower() and not re.search(
            r"\b(?:the|a|an|der|die|das|den|dem|le|la|les|un|une)\s+$", text[: span.start], re.I)
        out.append((span, (_closeness(text, span, keys), float(key in typed),
                           float(min(caps, 2)) * (kind in ("name", "place")), float(max(0, len(words) - 3)),
                           after, before, float(lone))))
    return out


def _stem(word: str) -> str:
    return word.removesuffix("s")[:5] if len(word) > 3 else word


@dataclass(frozen=True)
class Candidate:
    """A value found for a question: its ranking ``score`` (comparable within one answer), its ``span`` in
    ``sentence`` (the ``rank``-th sentence shown), whether it was ranked as a phrase by :class:`SpanWeights`
    (``ranked``: the kinds of :data:`_NOMINAL`) and whether it is a span of the kind asked for (``typed``: a number
    for "how many", a run of capitals for "who"; a phrase is not), and how many of the question's words its
    sentence holds (``held``)."""

    score: float
    sentence: Extracted
    rank: int
    span: Span
    ranked: bool
    typed: bool
    held: int
    features: tuple[float, ...] = ()  # a ranked one's features (:func:`nominal_features`)
    model: tuple[float, float] | None = None  # the answer model's (summed, per-token) log-probability of it, if read

    @property
    def text(self) -> str:
        return _shown(self.sentence.text, self.span)


def _shown(text: str, span: Span) -> str:
    shown = " ".join(text[span.start:span.end].split()).strip(" ,;:|")
    # a plural's possessive apostrophe ("2 weeks’ leave") is no part of the value; a closing quote stays
    return shown[:-1] if shown.endswith(("’", "'")) and not re.search(r"['‘’]", shown[:-1]) else shown


def _lead_in_list(question: str, sentences: Sequence[Extracted]) -> ShortAnswer | None:
    """For a question asking for a list: the items the first lead-in sentence among ``sentences`` brings (a later
    sentence only when it bears on the question as much as the first)."""
    keys = stems(question)
    first = len(keys & stems(_about(sentences[0].text)))
    for rank, s in enumerate(sentences):
        if rank and len(keys & stems(_about(s.text))) < first:
            continue
        items = list_items(s.text)
        if len(items) >= 2:
            return ShortAnswer("; ".join(items), "list", s.number, s.start, s.end, s.score,
                               sentence=" ".join(s.shown.split()))
    return None


def _inside(span: Span, stretches: Sequence[tuple[int, int]]) -> bool:
    """Whether ``span`` overlaps one of ``stretches`` (what a sentence excludes: "outside Europe", "except the
    lab" is not what it is about, so no value of it: "Trips outside Europe also need approval from a director" does
    not answer "who" with "Europe")."""
    return any(a < span.end and span.start < b for a, b in stretches)


def value_candidates(kind: str, question: str, sentences: Sequence[Extracted], weights: SpanWeights = WEIGHTS,
                     model: ReadsContinuations | None = None) -> list[Candidate]:
    """Every value of ``kind`` the sentences offer for ``question``, best first (a tie keeps the earlier). With a
    ``model`` that reads them, each sentence's phrases for a thing are also weighed by its likelihood of each as the
    answer (``core/answers/span_model.py``; ``weights.model_mean`` and ``model_sum``)."""
    keys, asked = stems(question), stems(focus_question(question))
    first = len(keys & stems(_about(sentences[0].text))) if sentences else 0
    out: list[Candidate] = []
    for rank, s in enumerate(sentences):
        held = len(keys & stems(_about(s.text)))
        if rank and held < max(first, 1):
            # a later sentence that bears less on the question gives no value; nor one that holds none of its words
            # (a question in another language than the documents: nothing but the ranker's order places a value,
            # so only the first sentence gives one)
            continue
        excluded = [(m.start(), m.end()) for m in _OUTSIDE.finditer(s.text)]
        typed = [sp for sp in spans_of(kind, s.text, question) if not _inside(sp, excluded)] \
            if kind != "thing" else []
        # a series "A, B, C and D" answers a question asking for a list outright, as a value of another kind does;
        # a phrase for a thing is ranked by the weights and shown only over their threshold
        ranked = kind in _NOMINAL and not (typed and (kind == "list" or typed[0].kind == "contact"))
        if ranked and held < weights.min_held:
            continue  # too few of the question's words in it to place a phrase by (a question in another language)
        if ranked:
            kinds = typed_places(s.text, typed)
            w = weights.vector()
            clauses = bearing_clauses(s.text, lambda t: len(asked & stems(t)))
            offered = [(sp, f) for sp, f in nominal_features(kind, s.text, question) if not _inside(sp, excluded)
                       and any(a <= sp.start and sp.end <= b for a, b in clauses)]
            readings = read_phrases(model, s.text, question, [_shown(s.text, sp) for sp, _ in offered], weights)
            scored = [(sum(a * b for a, b in zip(w, f, strict=True)) - weights.show_min + read,
                       kinds.get((span.start, span.end), span), (span.start, span.end) in kinds, f, lp)
                      for (span, f), (lp, read) in zip(offered, readings, strict=True)]
        else:
            scored = [(sc, span, True, (), None) for span in typed
                      if (sc := _score(kind, span, s.text, question)) is not None]
        for score, span, of_kind, feats, lp in scored:
            # a sentence holding more of the question's words wins over the ranker's order ("the non-birth parent
            # receives 8 weeks" over "the birth parent receives 20 weeks")
            score += weights.held * (held - first) - 0.3 * rank
            out.append(Candidate(score, s, rank, span, ranked, of_kind, held, feats, lp))
    return sorted(out, key=lambda c: -c.score)
