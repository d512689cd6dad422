"""Pure preparation for the decision model: prompt texts, request planning, readout maths. No model, no threads.

Prompt layout (shared by every backend):

* binary mode: ``listing_context(...)`` puts the instructions and the numbered candidate listing *before* the
  query, so the listing's KV state can be reused by the next query; ``item_question(i)`` is the short per-candidate
  question read out with the " Yes"/" No" tokens.
* likelihood: ``[context][candidate][query]``; ``likelihood_query(q)`` formats the query part.

Request planning (:func:`plan_requests`) packs per-item suffixes behind one shared prefix under the context's
limits (sequences, batch size, KV cells, output rows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_INSTRUCTIONS = (
    "Below is a numbered list of items from a document collection, followed by a question. "
    "For each item, say whether it is relevant to the question."
)


# --------------------------------------------------------------------------- prompt texts


def listing_context(items: Sequence[str], query: str, instructions: str = DEFAULT_INSTRUCTIONS) -> str:
    """The shared context of one binary-mode request: instructions, the numbered listing, then the query.

    Everything up to the query is independent of the query, so a backend that keeps the longest common token
    prefix evaluates only the query (and the questions) on the next query over the same listing.
    """
    lines = [instructions.strip(), ""]
    lines += [f"[{i + 1}] {' '.join(text.split())}" for i, text in enumerate(items)]
    lines += ["", f"Question: {' '.join(query.split())}"]
    return "\n".join(lines)


def item_question(index: int) -> str:
    """The per-candidate question appended to :func:`listing_context` (``index`` is 0-based)."""
    return f"\nIs item [{index + 1}] relevant to the question? Answer Yes or No.\nAnswer:"


def likelihood_query(query: str) -> str:
    """The query part scored after each candidate in likelihood mode."""
    return f"\nQuestion: {' '.join(query.split())}"


# --------------------------------------------------------------------------- token bookkeeping


def common_prefix_len(a: Sequence[object], b: Sequence[object]) -> int:
    """Length of the longest common prefix of two token (or word) lists."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


@dataclass(frozen=True)
class Limits:
    """What one request (one ``llama_decode`` batch behind a shared prefix) may hold."""

    n_ctx: int  # KV cells: prefix (shared) + every item's suffix
    n_batch: int  # tokens per batch
    max_seqs: int  # items per request (n_seq_max - 1: sequence 0 holds the prefix)
    max_outputs: int  # rows of logits per request (each row is n_vocab floats)


class PlanError(ValueError):
    """An item (or the prefix) cannot fit in any request; the message carries the numbers."""


def plan_requests(
    prefix_len: int,
    suffix_lens: Sequence[int],
    outputs: Sequence[int],
    limits: Limits,
    cells: Sequence[int] | None = None,
) -> list[list[int]]:
    """Split items into requests, in input order, each within ``limits``. Returns lists of item indices.

    Item ``i`` evaluates ``suffix_lens[i]`` tokens, reads ``outputs[i]`` logit rows and occupies ``cells[i]``
    KV cells (default: its suffix; more when part of its state is restored from a cache). Every request shares
    the ``prefix_len`` cells of the prefix.
    """
    cells = suffix_lens if cells is None else cells
    if not len(suffix_lens) == len(outputs) == len(cells):
        raise ValueError("suffix_lens, outputs and cells differ in length")
    if prefix_len >= limits.n_ctx:
        raise PlanError(
            f"the shared context is {prefix_len} tokens; the model's context holds {limits.n_ctx}"
        )
    room = limits.n_ctx - prefix_len
    plan: list[list[int]] = []
    cur: list[int] = []
    cur_tokens = cur_outputs = cur_cells = 0
    for i, (n, o, c) in enumerate(zip(suffix_lens, outputs, cells, strict=True)):
        if n < 1:
            raise PlanError(f"item {i} has no tokens")
        if n > limits.n_batch or c > room or o > limits.max_outputs:
            raise PlanError(
                f"item {i} needs {c} tokens and {o} outputs after a {prefix_len}-token context; limits: "
                f"batch {limits.n_batch}, context {limits.n_ctx}, outputs {limits.max_outputs}"
            )
        fits = (
            len(cur) < limits.max_seqs
            and cur_tokens + n <= limits.n_batch
            and cur_cells + c <= room
            and cur_outputs + o <= limits.max_outputs
        )
        if cur and not fits:
            plan.append(cur)
            cur, cur_tokens, cur_outputs, cur_cells = [], 0, 0, 0
        cur.append(i)
        cur_tokens += n
        cur_outputs += o
        cur_cells += c
    if cur:
        plan.append(cur)
    return plan


# --------------------------------------------------------------------------- readout maths


def yes_probability(yes_logit: float, no_logit: float) -> float:
    """Softmax over the two readout logits: P(yes) = 1 / (1 + exp(no - yes))."""
    d = no_logit - yes_logit
    if d > 0:
        e = math.exp(-d)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(d))


def softmax(logits: Sequence[float]) -> list[float]:
    """Numerically stable softmax; the result sums to 1."""
    if not logits:
        return []
    m = max(logits)
    exps = [math.exp(x - m) for x in logits]
    s = sum(exps)
    return [e / s for e in exps]
