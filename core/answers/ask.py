"""Answering a question: the entry point :meth:`shelfwise.core.shelf.Shelf.ask` (and ``ask_in_conversation``) calls.

Search the tree; as soon as the walk is done, ``on_search(result)``; then the **extractive answer**: the sentence(s)
of the top passages that answer the question (:mod:`shelfwise.core.answers.extractive`), reported at once through
``on_extract(answer)`` and ``on_token(text)`` with its citation. Then, unless ``generate`` is off, the generative
model writes its own answer from the extracted sentences (:func:`sentence_sources`; measured better than five
clipped passages, docs/eval/answer-models.md) (:mod:`shelfwise.core.answers.answer`, repetition guarded); it is
kept as ``Answer.generated`` only when every number, date, time and name in it is in the cited passages
(:mod:`shelfwise.core.answers.grounding`); otherwise ``Answer.generation_note`` says why and the extractive answer
stands alone. With ``adaptive=True`` DeepRAG's loop of sub-questions runs instead
(:mod:`shelfwise.core.answers.adaptive`).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from shelfwise.core.answers.adaptive import answer_adaptive
from shelfwise.core.answers.answer import (
    CITE,
    NOT_FOUND_TEXT,
    SearchCallback,
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
from shelfwise.core.answers.grounding import check_grounding
from shelfwise.core.answers.library import Library
from shelfwise.core.answers.route import route
from shelfwise.core.answers.sentence_vectors import cached_scorer
from shelfwise.core.answers.types import Answer, Citation
from shelfwise.core.models.backend import CancelCheck
from shelfwise.core.navigation.question import MAX_QUESTION_TOKENS, clip_question
from shelfwise.core.navigation.scope import Scope
from shelfwise.core.navigation.trace import Hit, SearchResult

log = logging.getLogger(__name__)
ExtractCallback = Callable[[Answer], None]
def sentence_scorer(shelf: Library) -> Scorer:
    """The judge's probabilities when the shelf has one switched on (``Shelf.judge``: ``Settings.judge`` or
    ``SHELFWISE_JUDGE``; off by default, the shipped judge ranks below the embedder on ConditionalQA's tune half),
    else the embedder's cosines (sentence vectors from the index when it has them)."""
    judge = getattr(shelf, "judge", None)
    if judge is not None:
        return lambda q, texts: judge.probabilities(q, list(texts))
    return cached_scorer(shelf.embedder, getattr(shelf, "store", None))


def widen_lists(store: Any, hits: Sequence[Hit]) -> list[Hit]:
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


def extractive_answer(shelf: Library, question: str, result: SearchResult, hits: Sequence[Hit],
                      t0: float) -> Answer:
    """The extractive answer for ``hits`` (not found when the evidence is weak or no sentence is left)."""
    if weak_evidence(hits, passage_cosines(result, hits)):
        return Answer(question, NOT_FOUND_TEXT, [], False, search=result, tokens=result.trace.tokens,
                      first_seconds=time.perf_counter() - t0)
    sentences = extract_answer(question, hits, sentence_scorer(shelf))
    if not sentences:
        return Answer(question, NOT_FOUND_TEXT, [], False, search=result, tokens=result.trace.tokens,
                      first_seconds=time.perf_counter() - t0)
    numbers = sorted({s.number for s in sentences})
    return Answer(question, extract_text(sentences), [Citation(n, hits[n - 1]) for n in numbers], True,
                  search=result, tokens=result.trace.tokens, sentences=sentences,
                  first_seconds=time.perf_counter() - t0)


def sentence_sources(answer: Answer, hits: Sequence[Hit]) -> tuple[list[Hit], list[int]]:
    """What the model writes from: each passage that gave the extracted answer, cut to its extracted sentence(s),
    and the real passage number of each (the prompt numbers them 1..k). Measured (docs/eval/answer-models.md):
    with the bundled model this was right more often and rejected less than five clipped passages."""
    keep: dict[int, list[str]] = {}
    for s in answer.sentences:
        keep.setdefault(s.number, []).append(" ".join(s.text.split()))
    numbers = sorted(keep)
    return [replace(hits[n - 1], text=" ".join(keep[n])) for n in numbers], numbers


def renumber(written: Written, numbers: Sequence[int], hits: Sequence[Hit]) -> Written:
    """The model's answer with its [i] (the prompt's numbering) turned into the passages' own [n], and its
    citations pointing at the whole passages."""
    def fix(m: re.Match[str]) -> str:
        nums = [numbers[int(x) - 1] for x in re.split(r"\s*[,;]\s*", m.group(1)) if 0 < int(x) <= len(numbers)]
        lead = " " if m.group(0)[:1].isspace() else ""
        return f"{lead}[{', '.join(map(str, nums))}]"

    text = CITE.sub(fix, written.text)
    cites = [Citation(numbers[c.number - 1], hits[numbers[c.number - 1] - 1]) for c in written.citations
             if 0 < c.number <= len(numbers)]
    return replace(written, text=text, citations=cites)


def ground(answer: Answer, written: Written, hits: Sequence[Hit]) -> None:
    """Keep the model's answer in ``answer.generated`` only if it is grounded in the passages it cites (the
    extracted answer's passages when it cites none) and does not contradict the extracted answer; otherwise say
    why in ``answer.generation_note``."""
    answer.generated_raw = written.text
    if not written.found:
        answer.generation_note = "the model did not find an answer in the passages"
        return
    cited = [c.hit for c in written.citations] or [c.hit for c in answer.citations] or list(hits)
    verdict = check_grounding(written.text, [h.text for h in cited], answer.question, evidence=answer.text)
    if verdict.ok:
        answer.generated = verdict.text
        have = {c.number for c in answer.citations}  # the passages it cites join the answer's sources
        answer.citations = sorted([*answer.citations, *(c for c in written.citations if c.number not in have)],
                                  key=lambda c: c.number)
    else:
        answer.generation_note = f"The model's answer is not shown: {verdict.reason}."


def answer_from_tree(shelf: Library, answer: Answer, *, on_token: TokenCallback | None,
                     on_search: SearchCallback | None, on_extract: ExtractCallback | None, generate: bool | None,
                     cancel: CancelCheck | None) -> Answer:
    """A structural answer (or a scope that matches nothing) reported like any other; a summary gets the model's
    own wording only when grounded in the sections it cites (:func:`ground`)."""
    t0 = time.perf_counter() - answer.seconds
    if on_search is not None and answer.search is not None:
        on_search(answer.search)
    if on_token is not None:
        on_token(answer.text)
    if on_extract is not None:
        on_extract(answer)
    if generate is None:
        generate = shelf.settings.answer_generate
    if answer.found and generate and answer.kind == "summary" and answer.citations:
        hits = [c.hit for c in answer.citations]
        written = write_answer(shelf.backend, answer.question, hits, family=prompt_family(shelf.backend),
                               cancel=cancel, result=None, check_evidence=False)
        ground(answer, written, hits)
        answer.tokens += written.cost.tokens
    answer.seconds = time.perf_counter() - t0
    return answer


def answer_question(
    shelf: Library, question: str, *, collection: str | None = None, on_token: TokenCallback | None = None,
    on_search: SearchCallback | None = None, adaptive: bool = False, keep: Sequence[int] = (),
    cancel: CancelCheck | None = None, on_extract: ExtractCallback | None = None, generate: bool | None = None,
    scope: Scope | None = None, prior: Mapping[int, float] | None = None, q_vec: np.ndarray | None = None,
) -> Answer:
    """Search (or run adaptive retrieval), report the walk, the extractive answer, then the checked generation.
    An over-long question is clipped to what the model's context holds; ``Answer.notes`` and the trace say so.
    ``scope`` and the question's inline filters limit where it looks; a structural question is answered from the
    tree (:mod:`shelfwise.core.answers.route`); a malformed filter raises ScopeError. ``prior`` (branches the walk
    prefers) and ``q_vec`` (the question's vector, when already embedded) come from a conversation
    (:mod:`shelfwise.core.conversation.turn`)."""
    routed = route(shelf, question, collection, scope=scope, adaptive=adaptive, keep=tuple(keep), cancel=cancel)
    if routed.answer is not None:
        return answer_from_tree(shelf, routed.answer, on_token=on_token, on_search=on_search,
                                on_extract=on_extract, generate=generate, cancel=cancel)
    question = routed.text
    notes: list[str] = list(routed.notes)
    if len(question) > MAX_QUESTION_TOKENS:  # a token is at least a character: shorter ones always fit
        asked = clip_question(question, shelf.backend)
        notes += [asked.note] if asked.clipped else []
        question = asked.text
    if adaptive and not routed.search_kwargs:
        adaptive_answer = answer_adaptive(shelf, question, collection=collection, on_token=on_token,
                                          on_search=on_search, keep=keep, cancel=cancel, prior=prior)
        adaptive_answer.notes[:0] = notes
        return adaptive_answer
    t0 = time.perf_counter()
    extra: dict[str, Any] = {"prior": prior, "q_vec": q_vec} if prior or q_vec is not None else {}
    result: SearchResult = shelf.search(question, collection, keep=keep, cancel=cancel, **routed.search_kwargs,
                                        **extra)
    result.trace.notes[:0] = notes
    if on_search is not None:
        on_search(result)
    hits = widen_lists(getattr(shelf, "store", None), result.hits[: max(1, shelf.settings.answer_passages)])
    answer = extractive_answer(shelf, question, result, hits, t0)
    answer.notes[:0] = notes
    if on_token is not None:
        on_token(answer.text)
    if on_extract is not None:
        on_extract(answer)
    if generate is None:
        generate = shelf.settings.answer_generate
    if answer.found and generate:
        backend = shelf.backend
        sources, numbers = sentence_sources(answer, hits)
        written = write_answer(backend, question, sources, family=prompt_family(backend), cancel=cancel,
                               result=None, check_evidence=False)
        ground(answer, renumber(written, numbers, hits), hits)
        answer.tokens += written.cost.tokens
    answer.seconds = time.perf_counter() - t0
    return answer
