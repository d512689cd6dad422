"""How the relevance judge frames a (query, text) pair as one token sequence: ``[CLS] q [SEP] t [SEP]``.

Standard library only, so the GPU trainer (``training/judge_gpu.py``, which runs where Shelfwise is not installed)
loads this very file and trains on exactly the sequences the shipped judge reads at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Token caps of the judge: the query keeps at most QUERY_TOKENS, the whole pair at most PAIR_TOKENS.
QUERY_TOKENS = 96
PAIR_TOKENS = 160


@dataclass(frozen=True)
class PairFrame:
    """Special token ids and caps that shape a pair (BERT: [CLS] = 101, [SEP] = 102).

    ``query_tail``: a query longer than ``query_tokens`` keeps its last tokens instead of its first (a scenario
    followed by the question keeps the question)."""

    cls: int
    sep: int
    query_tokens: int = QUERY_TOKENS
    pair_tokens: int = PAIR_TOKENS
    query_tail: bool = False

    def __post_init__(self) -> None:
        if self.pair_tokens - self.query_tokens - 3 < 1:
            raise ValueError("pair_tokens must leave room for a text after the query and three special tokens")


def pair_tokens(query_ids: Sequence[int], text_ids: Sequence[int], frame: PairFrame) -> list[int]:
    """``[CLS] q [SEP] t [SEP]`` with the query clipped to ``frame.query_tokens`` and the text to what is left of
    ``frame.pair_tokens`` (ids without specials in, ids with specials out). Pure: no model needed."""
    n = frame.query_tokens
    q = list(query_ids[-n:] if frame.query_tail and len(query_ids) > n else query_ids[:n])
    room = frame.pair_tokens - len(q) - 3
    return [frame.cls, *q, frame.sep, *text_ids[:room], frame.sep]


__all__ = ["PAIR_TOKENS", "QUERY_TOKENS", "PairFrame", "pair_tokens"]
