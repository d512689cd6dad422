"""The decision model on llama.cpp: binary and likelihood modes, and streamed generation.

How a level is scored (ARCHITECTURE, "Decision model"), on top of
:class:`~shelfwise.core.models.llama.engine.LlamaEngine`:

* The shared context lives in KV sequence 0 and is reused across calls up to the longest common token prefix,
  so a listing placed before the query is evaluated once for every later query over it.
* Per request, sequence 0 is copied (``llama_memory_seq_cp``: the unified KV cache shares the cells, nothing is
  recomputed) to sequences ``1..k``, and every item's suffix is decoded in ONE batch, each token tagged with its
  sequence, positions continuing after the prefix, logits only where they are read
  (``llama_get_logits_ith`` takes the index in the batch). Items beyond ``n_seq_max - 1`` sequences, the batch,
  the context or ``max_outputs`` logit rows go to further requests that reuse the same prefix.
* Likelihood mode keeps an LRU cache (``cache_bytes``) of each candidate's KV state minus its last token, keyed
  by the context and candidate tokens (``llama_state_seq_get_data``); a later query over the same candidates
  restores it (``llama_state_seq_set_data``) and evaluates only the candidate's last token plus the query.

Decision modes tokenize texts without parsing special tokens (a document cannot inject control tokens);
``generate`` parses them, so chat-template markers work. ``cancel`` is checked between requests (``Cancelled``);
a ``generate`` stream checks it between tokens and takes the lock per token, so other calls may run between
tokens (the stream then re-evaluates what they displaced from sequence 0, in the same batch shapes as before).
Generation starts from an empty cache every time, so greedy output depends on the prompt only, never on what ran
before (:meth:`LlamaBackend._generation_step`).
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from shelfwise.core.models.backend import (
    BackendError,
    CancelCheck,
    Cost,
    Generation,
    Likelihoods,
    Scores,
    check_cancel,
)
from shelfwise.core.models.generation import guarded_stream, penalise_repeats, sample_token
from shelfwise.core.models.llama.batch import TokenBatch, logit_values, logits_row, token_logprobs
from shelfwise.core.models.llama.bindings import llama_cpp
from shelfwise.core.models.llama.engine import LlamaEngine, default_threads, gpu_offload_supported
from shelfwise.core.models.llama.state_cache import tokens_key
from shelfwise.core.models.prompts import yes_probability

__all__ = ["LlamaBackend", "default_threads", "gpu_offload_supported"]


class LlamaBackend(LlamaEngine):
    """:class:`~shelfwise.core.models.backend.DecisionBackend` on llama.cpp (constructor: see :class:`LlamaEngine`)."""

    def binary(
        self,
        context: str,
        questions: Sequence[str],
        *,
        yes: str = " Yes",
        no: str = " No",
        cancel: CancelCheck | None = None,
    ) -> Scores:
        """P(yes | context, question_i), normalised over the yes/no readout only."""
        t0 = time.perf_counter()
        cost = Cost()
        with self._lock:
            self._check_open()
            yes_id = self._single_token(yes, "yes")
            no_id = self._single_token(no, "no")
            if not questions:
                return Scores([], cost)
            prefix = self._tok(context, add_bos=True)
            suffixes = [self._tok(q, add_bos=False) for q in questions]
            values = [0.0] * len(questions)
            for group in self._groups(prefix, [len(s) for s in suffixes], [1] * len(suffixes), cost, cancel):
                with self._request(len(group), cost) as batch:
                    last_index: list[int] = []
                    for j, i in enumerate(group):
                        llama_cpp.llama_memory_seq_cp(self._mem, 0, j + 1, -1, -1)
                        start = batch.add(suffixes[i], len(prefix), j + 1, -1)
                        last_index.append(start + len(suffixes[i]) - 1)
                    self._decode()
                    for i, bi in zip(group, last_index, strict=True):
                        y, n = logit_values(self._live, bi, (yes_id, no_id))
                        values[i] = yes_probability(y, n)
        cost.seconds = time.perf_counter() - t0
        return Scores(values, cost)

    def likelihood(
        self, context: str, candidates: Sequence[str], query: str, *, cancel: CancelCheck | None = None
    ) -> Likelihoods:
        """log P(query | context, candidate_i): layout [context][candidate_i][query], one sequence per candidate.

        The first query token is predicted from the candidate's last token. Returns the sum and the mean over the
        query's tokens per candidate.
        """
        t0 = time.perf_counter()
        cost = Cost()
        with self._lock:
            self._check_open()
            q = self._tok(query, add_bos=False)
            if not q:
                raise BackendError("likelihood needs a non-empty query")
            if not candidates:
                return Likelihoods([], [], len(q), cost)
            ctx_toks = self._tok(context, add_bos=True)
            cands = [self._tok(c, add_bos=False) for c in candidates]
            for i, c in enumerate(cands):
                if not c:
                    raise BackendError(f"likelihood candidate {i} is empty")
            L = len(ctx_toks)
            # per item: the tokens restored from the cache (cand[:-1]) if any, and the tokens to evaluate
            keys = [tokens_key(ctx_toks, c) for c in cands]
            cached: list[bytes | None] = []
            for key, c in zip(keys, cands, strict=True):
                hit = self.cache.get(key) if self._cacheable(c) else None
                cached.append(hit[1] if hit is not None else None)
            suffix = [c[-1:] + q if s is not None else c + q for c, s in zip(cands, cached, strict=True)]
            cells = [len(c) + len(q) for c in cands]
            total = [0.0] * len(cands)
            for group in self._groups(ctx_toks, [len(s) for s in suffix], [len(q)] * len(cands), cost, cancel, cells):
                self._likelihood_request(group, L, cands, q, suffix, cached, keys, total, cost)
        cost.seconds = time.perf_counter() - t0
        mean = [t / len(q) for t in total]
        return Likelihoods(total, mean, len(q), cost)

    def continuations(
        self, context: str, options: Sequence[str], *, cancel: CancelCheck | None = None
    ) -> Likelihoods:
        """log P(option_i | context): layout [context but its last token][its last token, option_i], one sequence
        per option, every option in one batch where the limits allow; the option's first token is read from the
        context's last. The sum and the mean over each option's own tokens (``n_tokens`` 0)."""
        t0 = time.perf_counter()
        cost = Cost()
        with self._lock:
            self._check_open()
            if not options:
                return Likelihoods([], [], 0, cost)
            ctx = self._tok(context, add_bos=True)
            opts = [self._tok(o, add_bos=False) for o in options]
            if any(not o for o in opts):
                raise BackendError("a continuation is empty")
            head = ctx[:-1]
            suffix = [ctx[-1:] + o for o in opts]
            total = [0.0] * len(opts)
            for group in self._groups(head, [len(s) for s in suffix], [len(o) for o in opts], cost, cancel):
                with self._request(len(group), cost) as batch:
                    out_index: list[int] = []
                    targets: list[int] = []
                    for j, i in enumerate(group):
                        llama_cpp.llama_memory_seq_cp(self._mem, 0, j + 1, -1, -1)
                        start = batch.add(suffix[i], len(head), j + 1, 0, len(suffix[i]) - 1)
                        out_index += range(start, start + len(suffix[i]) - 1)
                        targets += opts[i]
                    self._decode()
                    lp = token_logprobs(self._live, out_index, targets, self.n_vocab)
                    k = 0
                    for i in group:
                        total[i] = float(lp[k : k + len(opts[i])].sum())
                        k += len(opts[i])
        cost.seconds = time.perf_counter() - t0
        return Likelihoods(total, [t / len(o) for t, o in zip(total, opts, strict=True)], 0, cost)

    def _cacheable(self, cand: Sequence[int]) -> bool:
        # candidates longer than the SWA window would be saved with gaps in the SWA cache: not cached
        return self.cache.max_bytes > 0 and len(cand) > 1 and (self.n_swa <= 0 or len(cand) < self.n_swa)

    def _likelihood_request(
        self,
        group: list[int],
        L: int,
        cands: list[list[int]],
        q: list[int],
        suffix: list[list[int]],
        cached: list[bytes | None],
        keys: list[bytes],
        total: list[float],
        cost: Cost,
    ) -> None:
        with self._request(len(group), cost) as batch:
            out_index: list[int] = []
            targets: list[int] = []
            for j, i in enumerate(group):
                seq = j + 1
                state = cached[i]
                if state is not None:
                    buf = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
                    ok = llama_cpp.llama_state_seq_set_data(self._ctx, buf, len(state), seq)
                    if not ok:
                        raise BackendError(f"restoring the cached KV state of candidate {i} failed")
                    cost.reused_tokens += len(cands[i]) - 1
                llama_cpp.llama_memory_seq_cp(self._mem, 0, seq, 0, L)
                pos0 = L + len(cands[i]) - len(suffix[i]) + len(q)
                first_out = len(suffix[i]) - len(q) - 1  # the candidate's last token
                start = batch.add(suffix[i], pos0, seq, first_out, len(suffix[i]) - 1)
                out_index += range(start + first_out, start + len(suffix[i]) - 1)
                targets += q
            self._decode()
            lp = token_logprobs(self._live, out_index, targets, self.n_vocab)
            for j, i in enumerate(group):
                total[i] = float(lp[j * len(q) : (j + 1) * len(q)].sum())
            for j, i in enumerate(group):
                if cached[i] is None and self._cacheable(cands[i]):
                    self._save_candidate(j + 1, L, len(cands[i]), keys[i])

    def _groups(
        self,
        prefix: list[int],
        lens: list[int],
        outputs: list[int],
        cost: Cost,
        cancel: CancelCheck | None,
        cells: list[int] | None = None,
    ) -> Iterator[list[int]]:
        """The items after ``prefix`` (their token counts, logit rows and KV cells) planned into requests, yielded
        one group at a time once sequence 0 holds ``prefix``; ``cancel`` is checked before each."""
        plan = self._plan(len(prefix), lens, outputs, cells)
        check_cancel(cancel)
        evaluated, reused, _ = self._sync_prefix(prefix, need_logits=False)
        cost.tokens += evaluated
        cost.reused_tokens += reused
        for group in plan:
            check_cancel(cancel)
            yield group

    @contextmanager
    def _request(self, n_seqs: int, cost: Cost) -> Iterator[TokenBatch]:
        """One batched request: the batch emptied for the caller to fill in sequences ``1..n_seqs`` (forked from
        sequence 0) and decode; those sequences are cleared afterwards whatever happens, and the request is
        counted in ``cost`` when it completes."""
        assert self._batch is not None
        self._batch.clear()
        try:
            yield self._batch
        finally:
            self._clear_seqs(n_seqs)
        cost.requests += 1
        cost.tokens += self._batch.n

    def _save_candidate(self, seq: int, L: int, n_cand: int, key: bytes) -> None:
        """Keep the KV of cand[:-1] (positions L .. L+n_cand-2) of ``seq`` in the LRU cache."""
        llama_cpp.llama_memory_seq_rm(self._mem, seq, L + n_cand - 1, -1)
        llama_cpp.llama_memory_seq_rm(self._mem, seq, 0, L)  # the context cells stay, owned by sequence 0
        size = llama_cpp.llama_state_seq_get_size(self._ctx, seq)
        buf = (ctypes.c_uint8 * size)()
        n = llama_cpp.llama_state_seq_get_data(self._ctx, buf, size, seq)
        if n > 0:
            self.cache.put(key, n_cand - 1, bytes(buf)[:n])

    # ------------------------------------------------------------------ generation

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
        """Stream text pieces (greedy unless ``temperature > 0``); ``repeat_penalty`` as in the protocol, over the
        tokens generated in this call (not the prompt's, which an answer should copy from). Stops at an
        end-of-generation token, a stop string (not included), ``max_tokens``, the context's end or ``cancel``;
        returns a :class:`Generation`."""
        t0 = time.perf_counter()
        cost = Cost()
        with self._lock:
            self._check_open()
            tokens = self._tok(prompt, add_bos=True, special=True)
        if len(tokens) >= self.n_ctx:
            raise BackendError(f"the prompt is {len(tokens)} tokens; the model's context holds {self.n_ctx}")
        rng = np.random.default_rng()

        n_prompt = len(tokens)

        def pieces() -> Generator[bytes, None, str]:
            generated: set[int] = set()
            for _ in range(max_tokens):
                if len(tokens) >= self.n_ctx:
                    return "length"
                with self._lock:
                    self._check_open()
                    evaluated, last = self._generation_step(tokens, n_prompt)
                    cost.requests += 1
                    cost.tokens += evaluated
                    logits = logits_row(self._live, last, self.n_vocab)
                    if repeat_penalty != 1.0 and generated:
                        logits = penalise_repeats(logits, generated, repeat_penalty)
                    tok = sample_token(logits, temperature, rng) if temperature > 0 else int(np.argmax(logits))
                    if llama_cpp.llama_vocab_is_eog(self._vocab, tok):
                        return "eos"
                    piece = self.piece(tok)
                tokens.append(tok)
                generated.add(tok)
                yield piece
            return "length"

        return (yield from guarded_stream(pieces(), stop, cancel, cost, t0))

    def _generation_step(self, tokens: list[int], n_prompt: int) -> tuple[int, int]:
        """Make sequence 0 hold ``tokens`` (the prompt, ``tokens[:n_prompt]``, then what was generated) exactly as
        one undisturbed generation from an empty cache computes it, and return (tokens evaluated, batch index of
        the last token's logits). The next token alone is evaluated when sequence 0 holds the rest; otherwise (the
        first step, or another call displaced sequence 0 between tokens) the cache is cleared and the prompt is
        evaluated in ``n_batch`` chunks, then each generated token alone, as the first time. A cached prefix is
        never reused across calls: the same prompt evaluated in other batch shapes gives logits that differ in the
        last bits, and greedy decoding then flips a near-tie (the same prompt gave " Paris.\\n[2]" and
        " Paris.\\nThe capital of" depending on what the backend had run before)."""
        if len(tokens) > n_prompt and self._seq0 == tokens[:-1]:
            evaluated, _, last = self._sync_prefix(tokens, need_logits=True)
            return evaluated, last
        llama_cpp.llama_memory_clear(self._mem, True)
        self._seq0 = []
        evaluated, _, last = self._sync_prefix(tokens[:n_prompt], need_logits=True)
        for end in range(n_prompt + 1, len(tokens) + 1):
            n, _, last = self._sync_prefix(tokens[:end], need_logits=True)
            evaluated += n
        return evaluated, last
