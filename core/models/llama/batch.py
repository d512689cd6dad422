"""Thin helpers over llama.cpp's C structures: a reusable multi-sequence token batch and logit readers.

Only :mod:`shelfwise.core.models.llama.backend` uses these; they hold no model state of their own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import numpy as np

from shelfwise.core.models.llama.bindings import llama_cpp


class TokenBatch:
    """A ``llama_batch`` of up to ``capacity`` tokens, each in exactly one sequence, filled from Python.

    ``add`` returns the batch index of the first token added: that index (not the ordinal among outputs) is what
    ``llama_get_logits_ith`` takes.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._batch = llama_cpp.llama_batch_init(capacity, 0, 1)
        self._token = np.ctypeslib.as_array(self._batch.token, shape=(capacity,))
        self._pos = np.ctypeslib.as_array(self._batch.pos, shape=(capacity,))
        self._n_seq = np.ctypeslib.as_array(self._batch.n_seq_id, shape=(capacity,))
        self._logits = np.ctypeslib.as_array(self._batch.logits, shape=(capacity,))
        self.n = 0
        self.n_outputs = 0
        self._freed = False

    @property
    def struct(self) -> llama_cpp.llama_batch:
        self._batch.n_tokens = self.n
        return self._batch

    def clear(self) -> None:
        self.n = 0
        self.n_outputs = 0

    def add(
        self,
        tokens: Sequence[int],
        pos0: int,
        seq: int,
        out_from: int | None = None,
        out_to: int | None = None,
    ) -> int:
        """Append ``tokens`` at positions ``pos0...`` in sequence ``seq``, with logits for the tokens
        ``out_from <= k < out_to`` (``out_from=None``: none; ``-1``: the last token only; ``out_to`` defaults to
        the end). Returns the batch index of the first token added."""
        k = len(tokens)
        if self.n + k > self.capacity:
            raise ValueError(f"batch overflow: {self.n} + {k} > {self.capacity}")
        start = self.n
        sl = slice(start, start + k)
        self._token[sl] = tokens
        self._pos[sl] = np.arange(pos0, pos0 + k, dtype=self._pos.dtype)
        self._n_seq[sl] = 1
        seq_ids = self._batch.seq_id
        for i in range(start, start + k):
            seq_ids[i][0] = seq
        self._logits[sl] = 0
        if out_from is not None:
            first = k - 1 if out_from < 0 else out_from
            end = k if out_to is None else out_to
            if end > first:
                self._logits[start + first : start + end] = 1
                self.n_outputs += end - first
        self.n = start + k
        return start

    def set_output(self, index: int) -> None:
        """Turn on the logits of the token already at batch ``index``."""
        if not self._logits[index]:
            self._logits[index] = 1
            self.n_outputs += 1

    def free(self) -> None:
        if not self._freed:
            self._freed = True
            llama_cpp.llama_batch_free(self._batch)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown or a half-built instance
            self.free()


def logits_row(ctx: llama_cpp.llama_context_p, batch_index: int, n_vocab: int) -> np.ndarray:
    """A copy of the logits of the token at ``batch_index`` of the last decoded batch."""
    ptr = llama_cpp.llama_get_logits_ith(ctx, batch_index)
    if not ptr:
        raise RuntimeError(f"no logits at batch index {batch_index}")
    return np.ctypeslib.as_array(ptr, shape=(n_vocab,)).copy()


def logit_values(ctx: llama_cpp.llama_context_p, batch_index: int, token_ids: Sequence[int]) -> list[float]:
    """The logits of a few token ids at ``batch_index`` (no copy of the whole row)."""
    ptr = llama_cpp.llama_get_logits_ith(ctx, batch_index)
    if not ptr:
        raise RuntimeError(f"no logits at batch index {batch_index}")
    return [float(ptr[t]) for t in token_ids]


def token_logprobs(
    ctx: llama_cpp.llama_context_p, batch_indices: Sequence[int], targets: Sequence[int], n_vocab: int
) -> np.ndarray:
    """log-softmax(logits at ``batch_indices[j]``)[``targets[j]``] for each j, as float64."""
    out = np.empty(len(batch_indices), dtype=np.float64)
    tmp = np.empty(n_vocab, dtype=np.float32)
    for j, (bi, tok) in enumerate(zip(batch_indices, targets, strict=True)):
        ptr = llama_cpp.llama_get_logits_ith(ctx, bi)
        if not ptr:
            raise RuntimeError(f"no logits at batch index {bi}")
        row = np.ctypeslib.as_array(ptr, shape=(n_vocab,))
        m = row.max()
        np.subtract(row, m, out=tmp)
        np.exp(tmp, out=tmp)
        out[j] = float(row[tok] - m) - float(np.log(tmp.sum(dtype=np.float64)))
    return out
