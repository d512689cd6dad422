"""An answer from the passages a walk found, the same on every path (one walk, adaptive retrieval, a summary):
first the **extractive answer**, the sentence(s) of the top passages that answer the question
(:mod:`shelfwise.core.answers.extractive`), then the **generated answer** the model writes from them, streamed as
it is written and kept only when it is grounded in the passages it cites (:mod:`shelfwise.core.answers.grounding`).

The events (the extracted answer, the generated answer's pieces, the check's verdict) go to one
:class:`~shelfwise.core.answers.types.AnswerEvents`, whose doc says what each carries and in which order.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from shelfwise.core.answers.answer import (
    CITE,
    NOT_FOUND_TEXT,
    TokenCallback,
    Written,
    passage_cosines,
    prompt_family,
    weak_evidence,
    write_answer,
)
from shelfwise.core.answers.extractive import (
    Scorer,
    extract_answer,
    extract_text,
    is_lead_in,
    list_run,
    logical_lines,
)
from shelfwise.core.answers.first_value import short_answer
from shelfwise.core.answers.grounding import check_grounding
from shelfwise.core.answers.meaning import check_meaning
from shelfwise.core.answers.sentence_vectors import cached_scorer
from shelfwise.core.answers.tuning import tuning_for
from shelfwise.core.answers.types import QUIET, Answer, AnswerEvents, Citation
from shelfwise.core.models.backend import CancelCheck
from shelfwise.core.navigation.trace import Hit, SearchResult
from shelfwise.core.navigation.walk import LibraryWalk

if TYPE_CHECKING:
    from shelfwise.core.store.db import Store

def sentence_scorer(library: LibraryWalk) -> Scorer:
    """The judge's probabilities when the library has one switched on (``Shelf.judge``: ``Settings.judge`` or
    ``SHELFWISE_JUDGE``; off by default, see docs/eval/), else the embedder's cosines (sentence vectors from the
    index when it has them)."""
    judge = library.judge
    if judge is not None:
        return lambda q, texts: judge.probabilities(q, list(texts))
    return cached_scorer(library.embedder, library.store)


def widen_lists(store: Store | None, hits: Sequence[Hit]) -> list[Hit]:
    """Each hit whose passage ends with a list's lead-in ("Your State Pension can be paid into:") gets the list's
    items that the next passages of its section hold (a list cut at a passage boundary; in some documents every
    item is a passage of its own), as many as :func:`list_run` takes: the answer to "where can it
    be paid?" is the list, not its lead-in. Other hits, and every hit without a store, are returned as they are."""
    out = list(hits)
    if store is None:
        return out
    for i, hit in enumerate(out):
        lines = logical_lines(hit.text)
        if not lines or not is_lead_in(hit.text[lines[-1][0]:lines[-1][1]]):
            continue
        node = store.node(hit.node_id)
        if node is None or node.parent_id is None:
            continue
        after = [sib.text.strip() for sib in store.children(node.parent_id)
                 if (sib.ordinal, sib.id) > (node.ordinal, node.id) and sib.kind == "passage"]
        items = after[: list_run(after)]
        if items:
            out[i] = replace(hit, text=hit.text.rstrip() + "\n" + "\n".join(items))
    return out


def extractive_answer(library: LibraryWalk, question: str, result: SearchResult | None, hits: Sequence[Hit], t0: float,
                      cosines: dict[int, float] | None = None, read: bool = False) -> Answer:
    """The extractive answer for ``hits`` (not found when the evidence is weak or no sentence is left).
    ``cosines`` (query-passage cosine per hit) default to the last level of ``result``'s walk. ``read``: the answer
    model (``library.backend``, loaded for the generated answer anyway) also weighs the phrases of the short answer
    for a thing (``core/answers/span_model.py``); off, the phrase ranker alone (``ask --no-generate``)."""
    if cosines is None:
        cosines = passage_cosines(result, hits)
    tokens = result.trace.tokens if result is not None else 0
    tuning = tuning_for(library.embedder)
    if weak_evidence(hits, cosines, tuning=tuning, question=question, store=library.store, embedder=library.embedder):
        return Answer(question, NOT_FOUND_TEXT, [], False, search=result, tokens=tokens,
                      first_seconds=time.perf_counter() - t0)
    sentences = extract_answer(question, hits, sentence_scorer(library), passage_weight=tuning.passage_weight,
                               cue_weight=tuning.cue_weight, lexical_weight=tuning.lexical_weight)
    if not sentences:
        return Answer(question, NOT_FOUND_TEXT, [], False, search=result, tokens=tokens,
                      first_seconds=time.perf_counter() - t0)
    short = short_answer(question, sentences, passages=[cosines.get(h.node_id) for h in hits],
                         model=library.backend if read else None)
    if short is not None and short.kind == "yes_no":  # the deciding sentence is shown first, after "Yes:"/"No:"
        sentences = sorted(sentences, key=lambda s: (s.number, s.start) != (short.number, short.start))
    numbers = sorted({s.number for s in sentences})
    return Answer(question, extract_text(sentences), [Citation(n, hits[n - 1]) for n in numbers], True,
                  search=result, tokens=tokens, sentences=sentences, first_seconds=time.perf_counter() - t0,
                  short=short)


def sentence_sources(answer: Answer, hits: Sequence[Hit]) -> tuple[list[Hit], list[int]]:
    """What the model writes from: each passage that gave the extracted answer, cut to its extracted sentence(s),
    and the real passage number of each (the prompt numbers them 1..k). Chosen over five clipped passages by
    ``benchmarks/research/answer_models.py`` (docs/eval/answer-models.md)."""
    keep: dict[int, list[str]] = {}
    for s in answer.sentences:
        keep.setdefault(s.number, []).append(" ".join(s.shown.split()))
    numbers = sorted(keep)
    return [replace(hits[n - 1], text=" ".join(keep[n])) for n in numbers], numbers


def renumber_text(text: str, numbers: Sequence[int]) -> str:
    """``text`` with each ``[i]`` of the prompt's numbering turned into ``[numbers[i-1]]``; a number outside the
    prompt's 1..k is dropped (and a bracket left empty with it)."""
    def fix(m: re.Match[str]) -> str:
        nums = [numbers[int(x) - 1] for x in re.split(r"\s*[,;]\s*", m.group(1)) if 0 < int(x) <= len(numbers)]
        if not nums:
            return ""
        lead = " " if m.group(0)[:1].isspace() else ""
        return f"{lead}[{', '.join(map(str, nums))}]"

    return CITE.sub(fix, text)


def renumber(written: Written, numbers: Sequence[int], hits: Sequence[Hit]) -> Written:
    """The model's answer with its [i] (the prompt's numbering) turned into the passages' own [n], and its
    citations pointing at the whole passages."""
    cites = [Citation(numbers[c.number - 1], hits[numbers[c.number - 1] - 1]) for c in written.citations
             if 0 < c.number <= len(numbers)]
    return replace(written, text=renumber_text(written.text, numbers), citations=cites)


class CitationStream:
    """Forwards streamed pieces to ``out`` with the prompt's ``[i]`` renumbered as :func:`renumber_text` does.
    A tail that may still become a citation (``[``, ``[1``, ``[1,``) is held until it closes or cannot; call
    :meth:`flush` when the stream ends."""

    _OPEN = re.compile(r"\s?\[[\d,;\s]*$")

    def __init__(self, numbers: Sequence[int], out: TokenCallback) -> None:
        self.numbers = list(numbers)
        self.out = out
        self.held = ""

    def __call__(self, piece: str) -> None:
        text = self.held + piece
        m = self._OPEN.search(text)
        self.held = text[m.start():] if m else ""
        self._send(text[: m.start()] if m else text)

    def flush(self) -> None:
        held, self.held = self.held, ""
        self._send(held)

    def _send(self, text: str) -> None:
        text = renumber_text(text, self.numbers)
        if text:
            self.out(text)


def ground(answer: Answer, written: Written, hits: Sequence[Hit]) -> None:
    """Keep the model's answer in ``answer.generated`` only if it means what the passages say: its numbers, dates
    and names in a passage shown (every passage of ``hits``, not only the one it cites; numbers as values), its
    quantities not contradicting the sentence found (:func:`check_grounding`), then
    :func:`~shelfwise.core.answers.meaning.check_meaning` (not a restatement of the question, each sentence standing
    in one passage sentence, a yes/no agreeing with the deciding sentence, the kind of value asked for given).
    ``answer.generation_checks`` lists what a kept text passed; otherwise ``answer.generation_note`` says why it
    is not shown (also when it adds nothing to the short answer and the sentence)."""
    answer.generated_raw = written.text
    if not written.found:
        answer.generation_note = "the model did not find an answer in the passages"
        return
    shown = [h.text for h in hits] or [c.hit.text for c in answer.citations]
    verdict = check_grounding(written.text, shown, answer.question, evidence=answer.text)
    if not verdict.ok:
        answer.generation_note = f"The model's answer is not shown: {verdict.reason}."
        return
    meaning = check_meaning(verdict.text, answer.question, shown, answer.short, answer.sentences)
    if meaning.reason:
        answer.generation_note = f"The model's answer is not shown: {meaning.reason}."
        return
    if meaning.adds_nothing:
        answer.generation_note = ("The model's answer is not shown: it says nothing that the answer and the "
                                  "sentence above do not.")
        return
    answer.generated = verdict.text
    answer.generation_checks = meaning.checks
    have = {c.number for c in answer.citations}  # the passages it cites join the answer's sources
    answer.citations = sorted([*answer.citations, *(c for c in written.citations if c.number not in have)],
                              key=lambda c: c.number)


def write_checked(library: LibraryWalk, answer: Answer, sources: Sequence[Hit], numbers: Sequence[int],
                  hits: Sequence[Hit], *, events: AnswerEvents = QUIET, cancel: CancelCheck | None = None,
                  facts: Sequence[tuple[str, str]] = ()) -> Answer:
    """The model writes its answer to ``answer.question`` from ``sources`` (the prompt's [i] is passage
    ``numbers[i-1]`` of ``hits``), streamed through ``events.on_token``; then :func:`ground` and
    ``events.on_generated``."""
    stream = CitationStream(numbers, events.on_token) if events.on_token is not None else None
    written = write_answer(library.backend, answer.question, sources, on_token=stream,
                           family=prompt_family(library.backend), facts=facts, cancel=cancel, result=None,
                           check_evidence=False)
    if stream is not None:
        stream.flush()
    ground(answer, renumber(written, numbers, hits), hits)
    answer.tokens += written.cost.tokens
    events.generated(answer)
    return answer


def answer_from_search(library: LibraryWalk, question: str, result: SearchResult, t0: float, *,
                       events: AnswerEvents = QUIET, generate: bool = True,
                       cancel: CancelCheck | None = None) -> Answer:
    """The answer from one walk's top passages: extracted (``events.on_extract``), then, when ``generate`` and
    found, written from the extracted sentences and checked (:func:`write_checked`)."""
    hits = widen_lists(library.store, result.hits[: max(1, library.settings.answer_passages)])
    answer = extractive_answer(library, question, result, hits, t0, read=generate)
    events.extracted(answer)
    if answer.found and generate:
        sources, numbers = sentence_sources(answer, hits)
        write_checked(library, answer, sources, numbers, hits, events=events, cancel=cancel)
    return answer
