"""A deterministic decision backend with no model, for unit tests and demos. Never a default anywhere.

Scoring rule (documented so tests can predict it):

* The *query* is the text after the last ``Question:`` in the context (the layout of ``prompts.listing_context``);
  without one, the whole context. For ``likelihood`` it is the ``query`` argument.
* Words are lower-cased runs of letters and digits. ``overlap(text) = |words(text) & words(query)| /
  |words(query)|`` (0 when the query has no words).
* ``binary``: a question that names an item ``[n]`` of the context's listing is judged on that item's text plus
  the question; otherwise on the question. ``P(yes) = 0.05 + 0.9 * overlap``.
* ``likelihood``: per query word, log 0.5 if the word occurs in the candidate (or the context), else log 0.01.
  ``total`` is the sum, ``mean`` the average over query words, ``n_tokens`` the number of query words.
* Cost: tokens are whitespace words. Like the llama.cpp backend, the longest common word prefix with the previous
  context is reused (``reused_tokens``), questions are packed 63 per request, and a (context, candidate) pair seen
  before in likelihood mode only costs its query words.
* ``generate`` streams ``"According to the passages, <first passage>"`` word by word, where the first passage is
  the first line starting with ``[1]`` in the prompt (else the prompt's first line), honouring ``max_tokens``
  (words), stop strings and cancel.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Generator, Sequence

from shelfwise.core.models.backend import (
    BackendBase,
    BackendError,
    CancelCheck,
    Cost,
    Generation,
    Likelihoods,
    Scores,
    check_cancel,
)
from shelfwise.core.models.generation import guarded_stream
from shelfwise.core.models.prompts import Limits, common_prefix_len, plan_requests

_WORD = re.compile(r"[a-z0-9]+")
_ITEM_LINE = re.compile(r"^\[(\d+)\]\s*(.*)$", re.MULTILINE)
_ITEM_REF = re.compile(r"\[(\d+)\]")
_LIMITS = Limits(n_ctx=1_000_000, n_batch=1_000_000, max_seqs=63, max_outputs=1_000_000)


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def query_of(context: str) -> str:
    """The text after the last ``Question:`` in ``context`` (its first line), or the whole context."""
    i = context.rfind("Question:")
    if i < 0:
        return context
    return context[i + len("Question:") :].strip().split("\n", 1)[0]


def overlap(text: str, query: str) -> float:
    q = words(query)
    return len(words(text) & q) / len(q) if q else 0.0


class FakeBackend(BackendBase):
    """Deterministic word-overlap backend implementing the DecisionBackend protocol (see the module doc)."""

    name = "fake"

    def __init__(self) -> None:
        self._prefix: list[str] = []
        self._seen: set[tuple[str, str]] = set()

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def close(self) -> None:
        """Nothing to free."""

    def _prefix_cost(self, context: str) -> Cost:
        toks = context.split()
        keep = common_prefix_len(self._prefix, toks)
        self._prefix = toks
        return Cost(tokens=len(toks) - keep, reused_tokens=keep)

    def binary(
        self,
        context: str,
        questions: Sequence[str],
        *,
        yes: str = " Yes",
        no: str = " No",
        cancel: CancelCheck | None = None,
    ) -> Scores:
        t0 = time.perf_counter()
        for word, role in ((yes, "yes"), (no, "no")):
            if len(word.split()) != 1:
                raise BackendError(f"the {role} word {word!r} is not one token for the fake backend")
        if not questions:
            return Scores([], Cost())
        query = query_of(context)
        items = {int(n): text for n, text in _ITEM_LINE.findall(context)}
        check_cancel(cancel)
        cost = self._prefix_cost(context)
        lens = [max(1, self.count_tokens(q)) for q in questions]
        for group in plan_requests(cost.tokens + cost.reused_tokens, lens, [1] * len(lens), _LIMITS):
            check_cancel(cancel)
            cost.requests += 1
            cost.tokens += sum(lens[i] for i in group)
        values = []
        for q in questions:
            ref = _ITEM_REF.search(q)
            text = q + " " + items.get(int(ref.group(1)), "") if ref else q
            values.append(0.05 + 0.9 * overlap(text, query))
        cost.seconds = time.perf_counter() - t0
        return Scores(values, cost)

    def likelihood(
        self, context: str, candidates: Sequence[str], query: str, *, cancel: CancelCheck | None = None
    ) -> Likelihoods:
        t0 = time.perf_counter()
        q_words = _WORD.findall(query.lower())
        if not q_words:
            raise BackendError("likelihood needs a non-empty query")
        if not candidates:
            return Likelihoods([], [], len(q_words), Cost())
        check_cancel(cancel)
        cost = self._prefix_cost(context)
        n_q = self.count_tokens(query)
        lens = []
        for c in candidates:
            seen = (context, c) in self._seen
            n_c = self.count_tokens(c)
            lens.append(max(1, n_q + (1 if seen else n_c)))
            cost.reused_tokens += n_c - 1 if seen else 0
            self._seen.add((context, c))
        for group in plan_requests(cost.tokens + cost.reused_tokens, lens, [1] * len(lens), _LIMITS):
            check_cancel(cancel)
            cost.requests += 1
            cost.tokens += sum(lens[i] for i in group)
        ctx_words = words(context)
        totals = []
        for c in candidates:
            known = words(c) | ctx_words
            totals.append(sum(math.log(0.5) if w in known else math.log(0.01) for w in q_words))
        cost.seconds = time.perf_counter() - t0
        return Likelihoods(totals, [t / len(q_words) for t in totals], len(q_words), cost)

    def generate(
        self,
        prompt: str,
        *,
        max_tokens: int = 256,
        stop: Sequence[str] = (),
        temperature: float = 0.0,
        cancel: CancelCheck | None = None,
        repeat_penalty: float = 1.0,
    ) -> Generator[str, None, Generation]:
        t0 = time.perf_counter()
        first = next((m.group(2) for m in _ITEM_LINE.finditer(prompt)), None)
        if first is None:
            first = next((line for line in prompt.splitlines() if line.strip()), "")
        answer_words = f"According to the passages, {first.strip()}".split()
        cost = Cost(requests=1, tokens=self.count_tokens(prompt))

        def pieces() -> Generator[bytes, None, str]:
            for i, word in enumerate(answer_words[:max_tokens]):
                cost.tokens += 1
                yield (word if i == 0 else " " + word).encode("utf-8")
            return "eos" if len(answer_words) <= max_tokens else "length"

        return (yield from guarded_stream(pieces(), stop, cancel, cost, t0))
