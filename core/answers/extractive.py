"""The extractive answer: the sentence(s) of the found passages that answer the question, shown at once.

:func:`passage_sentences` cuts each passage into sentences (sentence ends, line breaks, table cells and list items
each end one) with their character offsets, so the preview can highlight exactly that sentence.
:func:`extract_answer` scores every sentence of the top passages against the question and keeps the best two:

* the question is its last sentence ending in "?" when the text sets a scene first (:func:`focus_question`);
* the score is the relevance judge's probability (``core/models/encoders/cross_encoder.py``) when a judge model is
  installed, else the embedder's cosine of the question with the sentence (a table row is read with its header row,
  an FAQ answer with its question);
* plus ``PASSAGE_WEIGHT`` / (the passage's rank in the walk), because the walk saw more evidence (the section,
  the neighbours, BM25) than one sentence carries;
* plus ``CUE_WEIGHT`` x (how many of the things the question asks for the sentence holds: a number or amount for
  "how many/much", a date or time for "when", "what date", "what are the ... hours", the verb of "how do you
  <verb> ...?"), plus ``LEXICAL_WEIGHT`` x the idf-weighted share of the question's words the sentence holds
  (words compared on their first 5 letters, so "claims" meets "claim"; words of the documents' titles left out).

A sentence that introduces a list ("Your State Pension can be paid into:") is shown with the items that follow it
(:func:`list_end`; ``from_passages.widen_lists`` first reads on into the next passages of the section when the
list falls across passages, as in documents stored one item per passage): such questions are answered by the
list, not by its lead-in (chosen on the TUNE half's span questions; reading each list item with its lead-in as
context was tried and lost: docs/benchmarks.md, "The extracted answer").

A cheap pre-score (rank and cues) keeps ``SHORTLIST`` candidates, so only those are embedded (all of them, up to
``BLIND_SHORTLIST``, when no candidate holds a word of the question: a question asked in another language than the
documents, where rank and cues alone cannot tell a passage's sentences apart). A table row is read
with the header row of its own table (the row a ``|---|`` rule follows), not the first table of the passage.

The weights, cues and margins are chosen on the ConditionalQA TUNE half (``benchmarks/research/extractive_tune.py``,
span-answer questions) and the sample's questions (``resources/sample_questions.jsonl``); what each choice gave,
and what was tried and not used (the judge, the generative model's query likelihood as a reranker), is in
docs/benchmarks.md, "The extracted answer".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from shelfwise.core.answers import cues
from shelfwise.core.answers.facts import STOPWORDS, dates_in, numbers_in, times_in
from shelfwise.core.answers.types import Extracted
from shelfwise.core.languages import (
    NON_ASCII_AFTER_STOP,
    OTHER_BREAK,
    boundaries,
    has_unsegmented,
    is_question,
    lazy,
    split_sentences,
    word_count,
    word_units,
)
from shelfwise.core.models.backend import Embedder
from shelfwise.core.navigation.trace import Hit

PASSAGES = 5  # passages whose sentences are candidates
MIN_WORDS = 2  # a "sentence" shorter than this is a label, not an answer (unless it holds a number)
PASSAGE_WEIGHT = 0.2
CUE_WEIGHT = 0.2  # the question-type cue
LEXICAL_WEIGHT = 0.4  # the question's words in the sentence (benchmarks/research/extractive_tune.py)
SENTENCES = 2  # the best sentence, then the next best when it scores within SECOND_MARGIN of it
SECOND_MARGIN = 0.15  # see the module doc: a second sentence for about half the questions
CONTEXT_VERSION = 3  # bump when what the ranker reads of a sentence changes (cached sentence vectors are redone)
PRIOR = "rank"
PREFIX = 5  # words compared on their first 5 letters
SHORTLIST = 12  # candidates the model reads (the rest are cut by the cheap pre-score)
BLIND_SHORTLIST = 60  # ... when the question shares no word with any candidate (see extract_answer)
LIST_ITEMS = 8  # a lead-in sentence ("You can get help from:") is shown with up to this many items of its list
LIST_WORDS = 80  # ... and up to this many words of them
# ". ! ?" before a capital, a digit or a quote (or before a non-ASCII character that opens a sentence), the ends of
# other scripts (core/languages.py), bullets
_BOUNDARY = lazy(rf"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[A-Z0-9€$£])|{NON_ASCII_AFTER_STOP}|{OTHER_BREAK}|\s*[•▪]\s*")
# an abbreviation's dot before a number or a capital ends no sentence ("see p. 3", "Dr. Lopez", "No. 12")
_ABBREVIATION = lazy(r"(?:^|[\s(\[])(?:p|pp|no|nos|nr|vol|vols|ch|chap|sec|secs|fig|figs|para|paras|art|ref|cf|"
                     r"vs|approx|dr|mr|mrs|ms|prof|st|tel|ext|ed|eds|e\.g|i\.e|incl|min|max|dept|jan|feb|mar|apr|"
                     r"jun|jul|aug|sep|sept|oct|nov|dec)\.$", re.I)
_QUANTITY = lazy(r"\b(how (many|much|long|often|old|far|large|big|high)|what (percentage|percent|amount|"
                 r"rate|number|value|age)|minimum|maximum|up to what)\b", re.I)
_WHEN = lazy(r"\b(when|what (date|day|time|year|month)|by what date|which (date|day|year))\b", re.I)
_HOURS = lazy(r"\b(hours|times)\b", re.I)  # "what are the opening hours?" asks for times
_PROCEDURE = lazy(r"\bhow (?:do|can|should|must|would|to)\s+(?:i|you|we|they|one|employees|staff)?\s*([a-z]+)",
                  re.I)  # "how do you book ...?": the answer says how to book
_NAMED_MONTH = lazy(r"\b(January|February|March|April|May|June|July|August|September|October|November|"
                    r"December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b")
_YEAR = lazy(r"(?<![0-9A-Za-z])(1[89]|20)\d\d(?![0-9A-Za-z])")  # also beside CJK: "2019年"
_LIST_ITEM = lazy(r"^\s*(?:[-*•▪–]\s+|\(?(?:\d{1,2}|[a-z])[.)]\s+)")  # "- x", "• x", "1. x", "a) x"
_ITEM_LABEL = lazy(r"^([^:.;]{1,60}):\s+\S")  # "Moving house: 1 day ...": an item's label and a colon


def is_list_item(text: str) -> bool:
    return bool(_LIST_ITEM.match(text))


# a sentence that announces a list without a colon: "We work by three values.", "the following rooms"
_ANNOUNCES = lazy(r"\b(?:(?:the )?following|as follows|folgende[nrs]?|suivant(?:e?s)?|"
                  r"(?:two|three|four|five|six|seven|eight|nine|ten|zwei|drei|vier|fünf|sechs|deux|trois|"
                  r"quatre|cinq|six)\s+(?:[^\W\d_]+\s+)?[^\W\d_]+)\b", re.I)
_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
           "zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5}


# what a number word measures rather than announces ("a probation period of three months" lists nothing)
_MEASURES = frozenset("""day days week weeks month months year years hour hours minute minutes time times percent
kilometres kilometers km euros tag tage tagen woche wochen monat monate monaten jahr jahre jahren stunde stunden
minuten prozent jour jours semaine semaines mois an ans année années heure heures minute pourcent""".split())


def _announcing(text: str) -> list[re.Match[str]]:
    """The phrases of ``text`` that announce a list: "the following", or a number word and a thing counted
    that is not a measure (:data:`_MEASURES`)."""
    return [m for m in _ANNOUNCES.finditer(text) if m.group(0).split()[-1].lower() not in _MEASURES]


def is_lead_in(text: str) -> bool:
    """A sentence that introduces a list: it ends with a colon ("The council may check your vehicle to make
    sure:"), or it is short and announces one ("We work by three values.", "We have the following rooms.")."""
    stripped = text.strip()
    if stripped.startswith("|"):
        return False
    return stripped.endswith(":") or (len(stripped.split()) <= 15 and bool(_announcing(stripped)))


def announced_count(text: str) -> int:
    """How many items a lead-in names ("three values" -> 3; 0 when it names no number)."""
    for m in _announcing(text):
        word = m.group(0).split()[0].lower()
        if word in _COUNTS:
            return _COUNTS[word]
    return 0


@dataclass(frozen=True)
class Candidate:
    text: str  # the sentence as written
    number: int  # 1-based passage number among the hits
    start: int
    end: int
    context: str = ""  # what the ranker reads: the sentence with its heading, table header or FAQ question
    header: str = ""  # a table row's header row


Scorer = Callable[[str, Sequence[str]], np.ndarray]
_TABLE_RULE = re.compile(r"^\|?\s*:?-{2,}")
_HEADING_LINE = lazy(r"^\d+(\.\d+)*\.?\s+\S")


# words a line that goes on into the next one ends with ("... open from 07:00 to" / "21:00 on weekdays.")
_GOES_ON = frozenset("""a an the to of in on at by for from with and or but than as is are was were be into through
via per not no your our their its this that these those can may must will should would could has have had do does
very also each every all any both either le la les des du de et ou à au aux en un une der die das den dem des ein
eine und oder zu zum zur im am von mit für""".split())


def _goes_on(prev: str, line: str) -> bool:
    """Whether ``line`` continues the sentence ``prev`` ends (a line wrapped in a text or Markdown file, a DOCX or
    slide line broken inside a sentence): ``prev`` ends without a sentence's end, neither is a table row, a heading
    or a list item, and ``line`` starts in lower case, or ``prev`` is a long line ending with a comma, a word that
    cannot end a sentence ("to", "the", "and"), or ``line`` starts with a digit or is the sentence's last word(s)."""
    if not prev or prev.startswith(("|", "#")) or line.startswith(("|", "#")) or is_list_item(line):
        return False
    if prev.endswith((".", "!", "?", ":", ";")) or _TABLE_RULE.match(line):
        return False
    if line[0].islower():
        return True
    if len(prev) < 40:
        return False
    last = prev.split()[-1].lower()
    return (prev.endswith(",") or last in _GOES_ON or line[0].isdigit()
            or (len(line.split()) <= 2 and line.endswith((".", "!", "?"))))


def logical_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line of ``text``, a line that goes on from the one before (:func:`_goes_on`: a line
    wrapped inside a sentence) joined to it."""
    spans: list[tuple[int, int]] = []
    pos = 0
    for line in text.split("\n"):
        start, end = pos, pos + len(line)
        pos = end + 1
        stripped = line.strip()
        if not stripped:
            continue
        prev = text[spans[-1][0]:spans[-1][1]].strip() if spans else ""
        if _goes_on(prev, stripped):
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def passage_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``: cut at sentence ends, line breaks (not wrapped lines) and
    bullets; a table row (``| a | b |``) stays one sentence, a table's rule row (``|---|``) is skipped."""
    spans: list[tuple[int, int]] = []
    for base, stop in logical_lines(text):
        line = text[base:stop]
        stripped = line.strip()
        if _TABLE_RULE.match(stripped):
            continue
        if stripped.startswith("|"):
            lead = len(line) - len(line.lstrip())
            spans.append((base + lead, base + len(line.rstrip())))
            continue
        pos = 0
        cuts = [m for m in boundaries(_BOUNDARY, line) if not _ABBREVIATION.search(line[:m.start()].rstrip("\"')]"))]
        for m in [*cuts, None]:
            end = m.start() if m is not None else len(line)
            piece = line[pos:end]
            lead = len(piece) - len(piece.lstrip())
            a, b = base + pos + lead, base + pos + len(piece.rstrip())
            if b > a:
                spans.append((a, b))
            if m is not None:
                pos = m.end()
    return spans


def _before_rule(text: str, end: int) -> bool:
    """Whether the line after the one ending at ``end`` is a table's rule row."""
    nxt = text[end:].lstrip("\n").split("\n", 1)[0].strip()
    return bool(_TABLE_RULE.match(nxt))


def _is_label(sentence: str, hit: Hit) -> bool:
    """A heading line, the passage's own heading, or a bare question (FAQ "Q: ...?"): not an answer."""
    plain = sentence.strip(" |")
    words = word_count(plain)
    if is_question(plain) or not words:
        return True
    if any(plain.lower() == h.lower() or plain.lower().endswith(h.lower()) for h in hit.heading_path if h):
        return words <= 8
    return bool(_HEADING_LINE.match(plain)) and words <= 8 and not plain.endswith(".")


def candidates(hits: Sequence[Hit], passages: int = PASSAGES) -> list[Candidate]:
    """The candidate sentences of the first ``passages`` hits, each with the context the ranker reads."""
    out: list[Candidate] = []
    for n, h in enumerate(hits[:passages], 1):
        header = ""
        previous = ""
        for s, e in passage_sentences(h.text):
            sentence = h.text[s:e]
            # a table's first row names its columns, and so does any row a rule row (|---|) follows: a passage
            # may hold the end of one table and the whole of the next
            if sentence.startswith("|") and (not header or _before_rule(h.text, e)):
                header = sentence
                continue
            if not sentence.startswith("|"):
                header = ""
            if _is_label(sentence, h):
                previous = sentence
                continue
            parts = []
            if sentence.startswith("|") and header:
                parts.append(header)
            if is_question(previous):
                parts.append(previous)
            context = " ".join([*parts, sentence])
            previous = sentence
            if word_count(sentence) >= MIN_WORDS or numbers_in(sentence):
                out.append(Candidate(sentence, n, s, e, context,
                                     header if sentence.startswith("|") and header else ""))
    return out


def _has_quantity(text: str) -> bool:
    return bool(numbers_in(text))


def _has_when(text: str) -> bool:
    return bool(dates_in(text) or times_in(text) or _YEAR.search(text) or _NAMED_MONTH.search(text)
                or cues.has_date(text))


def _words(text: str, prefix: int) -> set[str]:
    """The words of ``text``, each cut to its first ``prefix`` letters when ``prefix`` > 0 (truncation stemming:
    "claims"/"claim", "submitted"/"submit", "spaces"/"space" meet). Words of any script; a run of Chinese,
    Japanese or Thai-like script gives its character bigrams (``core/languages.word_units``)."""
    words = word_units(text)
    return {w[:prefix] for w in words} if prefix > 0 else set(words)


def _content_words(text: str) -> list[str]:
    """The words of a question that say what it is about: not stop words, longer than two letters (a bigram of an
    unsegmented script always counts)."""
    return [w for w in word_units(text) if has_unsegmented(w) or (w not in STOPWORDS and len(w) > 2)]


def question_keys(question: str, prefix: int = PREFIX) -> list[str]:
    """The question's content words as :func:`word_overlap` compares them (each cut to its first ``prefix``
    letters; in order, once each): the project's one matcher of a question's words with a text's."""
    return list(dict.fromkeys(w[:prefix] if prefix > 0 else w for w in _content_words(question)))


def share_held(keys: Sequence[str], text: str, prefix: int = PREFIX) -> float:
    """The share of ``keys`` (:func:`question_keys`) that ``text`` holds, words compared as :func:`word_overlap`
    compares them, unweighted (0 for no keys)."""
    if not keys:
        return 0.0
    bag = _words(text, prefix)
    return sum(k in bag for k in keys) / len(keys)


def type_cue(question: str, texts: Sequence[str], prefix: int = PREFIX) -> np.ndarray:
    """How many of the things the question asks for each text holds: a number or amount ("how many/much"), a date
    or time ("when", "what date", "what are the ... hours"), the action of a "how do you <verb>" question (its
    verb, on the first ``prefix`` letters). A question that asks two ("when is it paid and how much?") gives up
    to 2."""
    wants_quantity = bool(_QUANTITY.search(question)) or cues.asks_quantity(question)
    when = cues.without_clause_when(question)  # "how many days off ... when I move house": no date asked
    wants_when = (bool(_WHEN.search(when)) or (bool(_HOURS.search(question)) and not wants_quantity)
                  or cues.asks_when(when))
    m = _PROCEDURE.search(question)
    verb = m.group(1).lower() if m and m.group(1).lower() not in STOPWORDS else ""
    verb = verb[:prefix] if prefix > 0 else verb
    out = np.zeros(len(texts), dtype=np.float32)
    for i, t in enumerate(texts):
        out[i] = (float(wants_quantity and _has_quantity(t)) + float(wants_when and _has_when(t))
                  + float(bool(verb) and verb in _words(t, prefix)))
    return out


def word_overlap(question: str, texts: Sequence[str], prefix: int = PREFIX, scope: str = "") -> np.ndarray:
    """The idf-weighted share (0..1; idf over ``texts``) of the question's content words each text holds, words
    compared on their first ``prefix`` letters (see :func:`_words`). Words of ``scope`` (the titles of the
    documents the passages come from: "... at Northwind Labs?") are left out: the walk used them to find the
    document, they do not tell its sentences apart."""
    q_words = set(question_keys(question, prefix)) - _words(scope, prefix)
    bags = [_words(t, prefix) for t in texts]
    n = max(len(texts), 1)
    idf = {w: float(np.log(1 + n / (1 + sum(w in b for b in bags)))) for w in q_words}
    total = sum(idf.values()) or 1.0
    return np.array([sum(v for w, v in idf.items() if w in bag) / total for bag in bags], dtype=np.float32)


def embedder_scorer(embedder: Embedder) -> Scorer:
    """Cosine of the question with each text, from the embedder (vectors are L2-normalised by it)."""

    def score(question: str, texts: Sequence[str]) -> np.ndarray:
        # one call for the question and the texts: each call has a fixed cost (docs/benchmarks.md, "The
        # extracted answer")
        m = np.asarray(embedder.embed_query_and_documents(question, texts), dtype=np.float32)
        return m[1:] @ m[0]

    return score


def focus_question(question: str) -> str:
    """The question itself when the text around it sets a scene ("I am 67 and live in Wales. Can I ...?"): its
    last sentence ending in "?" (the whole text when there is none)."""
    parts = split_sentences(question.strip())
    return next((p for p in reversed(parts) if is_question(p)), question.strip())


def passage_prior(cands: Sequence[Candidate], hits: Sequence[Hit], prior: str = "rank") -> np.ndarray:
    """What the walk says of each candidate's passage: 1/rank (``"rank"``), or the passage's score over the top
    passage's (``"score"``: close scores when the walk was unsure, far apart when it was sure)."""
    if prior == "score":
        top = max((h.score for h in hits[: max(c.number for c in cands)]), default=0.0) or 1.0
        return np.array([max(hits[c.number - 1].score, 0.0) / top for c in cands], dtype=np.float32)
    return 1.0 / np.array([c.number for c in cands], dtype=np.float32)


def extract_answer(question: str, hits: Sequence[Hit], scorer: Scorer, *, passages: int = PASSAGES,
                   passage_weight: float = PASSAGE_WEIGHT, cue_weight: float = CUE_WEIGHT,
                   lexical_weight: float = LEXICAL_WEIGHT,
                   sentences: int = SENTENCES, second_margin: float = SECOND_MARGIN,
                   shortlist: int = SHORTLIST, prior: str = PRIOR, prefix: int = PREFIX) -> list[Extracted]:
    """The best ``sentences`` sentences of ``hits`` for ``question`` (a later one only when it scores within
    ``second_margin`` of the best), best first (empty when the passages hold no
    sentence). A cheap pre-score (passage rank and cues) keeps the ``shortlist`` best candidates; only those are
    read by the model, so the cost does not grow with the passages' length."""
    cands = candidates(hits, passages)
    if not cands:
        return []
    focus = focus_question(question)
    contexts = [c.context for c in cands]
    lexical = word_overlap(focus, contexts, prefix, " ".join({h.title for h in hits[:passages]}))
    cheap = (passage_weight * passage_prior(cands, hits, prior) + cue_weight * type_cue(focus, contexts, prefix)
             + lexical_weight * lexical)
    # no candidate holds a word of the question (asked in another language than the documents): the pre-score knows
    # only the passages' rank and the cue, which do not tell one sentence of a passage from another, so the encoder
    # reads them all (up to BLIND_SHORTLIST; at indexing their vectors were made already)
    keep = np.argsort(-cheap, kind="stable")[:shortlist if lexical.any() else max(shortlist, BLIND_SHORTLIST)]
    short = [cands[i] for i in keep]
    read = np.asarray(scorer(focus, [c.context for c in short]), dtype=np.float32)
    scores = read + cheap[keep]
    order = [int(i) for i in np.argsort(-scores, kind="stable")[:sentences]]
    order = [i for i in order if scores[i] >= scores[order[0]] - second_margin]
    out: list[Extracted] = []
    for i in order:
        c = short[i]
        end = list_end(hits[c.number - 1].text, c.end, lead=c.text) if is_lead_in(c.text) else c.end
        if any(x.number == c.number and x.start < end and c.start < x.end for x in out):
            continue  # an item of a list already shown with its lead-in, or a lead-in whose list holds one shown
        rivals = [float(read[j]) for j in range(len(short)) if j != i]
        intro = list_intro(hits[c.number - 1].text, c.start) if is_item_line(c.text) else ""
        if intro and any(x.number == c.number and x.intro == intro for x in out):
            intro = ""  # another item of the same list is shown already, after the lead-in
        out.append(Extracted(hits[c.number - 1].text[c.start:end], c.number, c.start, end, float(scores[i]),
                             c.header, cosine=float(read[i]),
                             lead=float(read[i]) - max(rivals) if rivals else None, intro=intro))
    return bearing_first(focus, out, " ".join({h.title for h in hits[:passages]}), prefix)


def list_intro(text: str, start: int) -> str:
    """The lead-in sentence (:func:`is_lead_in`) of the list whose item starts at ``start`` in ``text``: the last
    sentence of the first line before the item that is not itself an item (:func:`is_item_line`; "" when that is
    no lead-in)."""
    for a, b in reversed([span for span in logical_lines(text) if span[1] <= start]):
        line = " ".join(text[a:b].split())
        if is_item_line(line):
            continue
        last = [line[x:y] for x, y in passage_sentences(line)][-1:] or [line]
        lead = last[0]
        return lead if is_lead_in(lead) else ""
    return ""


def bearing_first(question: str, found: list[Extracted], scope: str = "", prefix: int = PREFIX) -> list[Extracted]:
    """``found`` with the sentences that hold some of the question's words (not counting the documents' titles,
    ``scope``) before a first one that holds none: an opening sentence that does not bear on the question is not
    shown first. Unchanged when none holds any (a question in another language than the documents)."""
    keys = set(question_keys(question, prefix)) - _words(scope, prefix)
    held = [len(keys & _words(x.text, prefix)) for x in found]
    if len(found) < 2 or held[0] > 0 or max(held) == 0:
        return found
    return [x for x, h in zip(found, held, strict=True) if h > 0] + [x for x, h in zip(found, held, strict=True)
                                                                     if h == 0]


def is_item_line(text: str) -> bool:
    """A line that is an item where a list is announced: marked as one (:func:`is_list_item`), or led by a short
    label and a colon, as a PDF's unmarked list writes them ("Moving house: 1 day per calendar year.")."""
    return is_list_item(text) or bool(_ITEM_LABEL.match(text))


def list_run(texts: Iterable[str], items: int = LIST_ITEMS, words: int = LIST_WORDS) -> int:
    """How many of ``texts`` (what follows a lead-in, in order) are shown as its list: the leading items
    (:func:`is_item_line`), at most ``items`` of them and ``words`` words in all."""
    n = count = 0
    for text in texts:
        w = len(text.split())
        if not is_item_line(text.strip()) or n >= items or count + w > words:
            break
        n, count = n + 1, count + w
    return n


def list_end(text: str, end: int, items: int = LIST_ITEMS, words: int = LIST_WORDS, lead: str = "") -> int:
    """Where the list that a lead-in sentence ending at ``end`` introduces ends in ``text`` (:func:`list_run` of
    the lines after it; ``end`` itself when no list item follows on the next lines). A ``lead`` that names how many
    items follow ("three values") takes that many short sentences even without list marks: slide bullets, one a
    line, or items written on as prose ("We work by three values. Measure twice: ... Share the weather: ...")."""
    spans = [(a, b) for a, b in logical_lines(text) if a >= end]
    n = list_run((text[a:b] for a, b in spans), items, words)
    count = announced_count(lead) if lead else 0
    if not n and count:
        spans = [(a, b) for a, b in passage_sentences(text) if a >= end][:count]
        if len(spans) == count and all(len(text[a:b].split()) <= 30 for a, b in spans):
            n = count
    if not n:
        return end
    a, b = spans[n - 1]
    return a + len(text[a:b].rstrip())


def list_items(text: str) -> list[str]:
    """The items a lead-in sentence brings: its lines after the first, list marks dropped; or, for items written
    on as prose after a lead-in that names how many ("We work by three values. Measure twice: we check ... Share
    the weather: we tell ..."), those sentences, each by its label before a colon when it has a short one."""
    spans = logical_lines(text)
    if len(spans) >= 3 and is_lead_in(text[spans[0][0]:spans[0][1]]):
        lines = [" ".join(text[a:b].split()) for a, b in spans[1:]]
        return [_LIST_ITEM.sub("", x, count=1) for x in lines]
    sentences = [" ".join(text[a:b].split()) for a, b in passage_sentences(text)]
    if len(sentences) < 3 or not is_lead_in(sentences[0]) or announced_count(sentences[0]) != len(sentences) - 1:
        return []
    items = []
    for item in sentences[1:]:
        label = _ITEM_LABEL.match(item)
        items.append(label.group(1).strip() if label and len(label.group(1).split()) <= 6 else item.rstrip("."))
    return items


_OPEN_END = lazy(r"[^\W_]$")  # a part that ends in a letter or digit, without a sentence's end or a citation


def extract_text(sentences: Sequence[Extracted]) -> str:
    """The extracted sentences as one answer with their ``[n]`` markers (a list's items one a line)."""
    parts: list[str] = []
    for i, s in enumerate(sentences):
        shown = s.shown
        spans = logical_lines(shown)
        lines = [" ".join(shown[a:b].split()) for a, b in spans] or [""]
        text = lines[0]
        listed = is_lead_in(lines[0])
        for line in lines[1:]:  # a list shown with its lead-in keeps one item a line
            text += ("\n" if listed or is_list_item(line) else " ") + line
        last_of_passage = i + 1 == len(sentences) or sentences[i + 1].number != s.number
        parts.append(f"{text} [{s.number}]" if last_of_passage else text)
    # a line without a sentence's end (a slide's bullet, a title) ends its part: the next is not run into it
    return "".join(part + ("" if i + 1 == len(parts) else "\n" if _OPEN_END.search(part) else " ")
                   for i, part in enumerate(parts))

