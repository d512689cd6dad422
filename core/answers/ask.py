"""Answering a question, the one entry point :meth:`shelfwise.core.shelf.Shelf.answer` calls: search the tree and
write a cited answer from the passages found (:mod:`shelfwise.core.answers.answer`), or, with ``adaptive=True``, run
DeepRAG's loop of sub-questions (:mod:`shelfwise.core.answers.adaptive`). ``on_search(result)`` is called as soon as
the walk is done, then the answer streams through ``on_token``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from shelfwise.core.answers.adaptive import answer_adaptive
from shelfwise.core.answers.answer import SearchCallback, TokenCallback, prompt_family, write_answer
from shelfwise.core.models.backend import CancelCheck
from shelfwise.core.navigation.trace import Answer, SearchResult


def answer_question(
    shelf: Any, question: str, *, collection: str | None = None, on_token: TokenCallback | None = None,
    on_search: SearchCallback | None = None, adaptive: bool = False, keep: Sequence[int] = (),
    cancel: CancelCheck | None = None,
) -> Answer:
    """Search (or run adaptive retrieval), report the walk through ``on_search``, then stream an answer."""
    if adaptive:
        return answer_adaptive(shelf, question, collection=collection, on_token=on_token, on_search=on_search,
                               keep=keep, cancel=cancel)
    t0 = time.perf_counter()
    result: SearchResult = shelf.search(question, collection, keep=keep, cancel=cancel)
    if on_search is not None:
        on_search(result)
    hits = result.hits[: max(1, shelf.settings.answer_passages)]
    backend = shelf.backend
    written = write_answer(backend, question, hits, on_token=on_token, family=prompt_family(backend),
                           cancel=cancel, result=result)
    return Answer(
        question=question, text=written.text, citations=written.citations, found=written.found, search=result,
        tokens=result.trace.tokens + written.cost.tokens, seconds=time.perf_counter() - t0,
    )
