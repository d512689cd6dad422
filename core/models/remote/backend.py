"""The decision model on an OpenAI-compatible inference server (llama-cpp-python's server, llama.cpp, vLLM).

Everything goes through ``POST /v1/completions`` with log-probabilities, so any server that implements the
legacy completions API with ``logprobs`` works; what each mode needs:

* **binary** (next-token readout): one request per question with ``max_tokens: 1, temperature: 0, logprobs: 20``;
  the readout is the first generated position's top-20 list. P(yes) is normalised over the two readout tokens only
  (``prompts.yes_probability``). A readout token *absent* from the top list has a log-probability no larger than the
  smallest listed one: it is **bounded** by that value (an over-estimate of the missing token, so P(yes) is
  pulled towards 0.5, never past it). ``bounded_readouts`` counts how often that happened.
* **likelihood** (prompt log-probabilities): one request per candidate with the prompt
  ``context + candidate + query`` and ``echo: true, logprobs: 1, max_tokens: 1`` (never 0: llama-cpp-python
  reads ``max_tokens <= 0`` as "until the context is full"). The echoed ``token_logprobs``/``text_offset``
  give log P of every prompt token; the query's tokens are those that overlap the query's characters. vLLM
  computes these prompt log-probabilities when ``echo`` is set (its ``prompt_logprobs`` extension is the same
  data); llama.cpp's native server does not return prompt log-probabilities, so likelihood raises a
  :class:`BackendError` there.
* **generate**: ``stream: true``, server-sent events (``data: {...}`` lines up to ``data: [DONE]``).

Layout parity with :mod:`shelfwise.core.models.llama.backend`: the prompt texts are the same strings, but a server
tokenizes the *concatenated* text where the in-process backend tokenizes context, candidate and query
separately, so tokens can differ at the two boundaries (e.g. ``"Text: " + "Fee"``). The tests bound the effect
(P(yes) within 0.06, mean log-probability within 0.1 nats/token).

Transport (:mod:`shelfwise.core.models.remote.client`): one server per model (``llama-server --parallel N``
schedules the requests of its N slots itself; docs/scale.md), httpx with keep-alive connections, at most
``max_concurrency`` requests in flight over all threads, a ``timeout`` on connect and on every read, and
``retries`` with exponential backoff on connection errors and 5xx answers; a timeout is not retried.

Cost: ``requests`` = HTTP requests; ``tokens`` = prompt plus generated tokens the server reports in ``usage``
minus the prompt tokens it reports as served from its cache (vLLM
``usage.prompt_tokens_details.cached_tokens``, llama.cpp ``timings.cache_n``), which go to ``reused_tokens``.
llama-cpp-python's server reports no cache use, so there ``tokens`` counts what was *sent*, an upper bound of
what it evaluated (it reuses the longest common prefix with its previous prompt).

On first use the backend probes the server: ``GET /v1/models`` and ``/props`` (reachable; :attr:`model_id`, the
served file's identity by the rule of ``core/models/identity.py``, so calibration made with the same file in
process is used here, and the reverse), then the
capability a mode needs the first time it is used (top log-probabilities; prompt log-probabilities), each with
a tiny request.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Self, TypeVar

from shelfwise.core.json_types import JSONObject
from shelfwise.core.models.backend import (
    BackendBase,
    BackendError,
    CancelCheck,
    Cancelled,
    Cost,
    Generation,
    Likelihoods,
    Scores,
    check_cancel,
)
from shelfwise.core.models.generation import guarded_stream
from shelfwise.core.models.prompts import yes_probability
from shelfwise.core.models.remote.client import ServerClient
from shelfwise.core.models.remote.completions import (
    Capabilities,
    CompletionsAPI,
    query_logprobs,
    readout_logprobs,
    top_logprobs,
)

TOP_LOGPROBS = 20  # OpenAI's and vLLM's default maximum
_T = TypeVar("_T")
_R = TypeVar("_R")


# --------------------------------------------------------------------------- the backend


class RemoteBackend(BackendBase):
    """:class:`~shelfwise.core.models.backend.DecisionBackend` over an OpenAI-compatible ``/v1/completions`` server.

    ``url``: one server, e.g. ``http://127.0.0.1:8182`` (a trailing ``/v1`` is accepted). ``timeout``: seconds
    for connecting and for each read. ``retries``: extra attempts on connection errors and 5xx.
    ``max_concurrency``: requests in flight at once, over all threads using this instance (the server's
    ``--parallel`` slots: more would only queue there; 1 for llama-cpp-python's server, which runs one at a time).
    ``model``: the model name sent with each request (default: the first one the server lists). Thread-safe;
    call :meth:`close` (or use ``with``) to drop pooled connections and worker threads.
    """

    name = "remote"

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30,
        retries: int = 3,
        max_concurrency: int = 4,
        model: str | None = None,
        backoff: float = 0.25,
    ) -> None:
        self.http = ServerClient(url, timeout=timeout, retries=retries, connections=max_concurrency,
                                 backoff=backoff)
        self.url = self.http.url
        self.timeout = self.http.timeout
        self.retries = self.http.retries
        self.max_concurrency = self.http.connections
        self.api = CompletionsAPI(self.http, model)
        self.bounded_readouts = 0  # readout tokens missing from a top list and bounded (see the module doc)
        self._pool = ThreadPoolExecutor(
            max_workers=self.max_concurrency, thread_name_prefix="shelfwise-remote"
        )

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self.http.close()

    @property
    def caps(self) -> Capabilities:
        """What the probes found so far."""
        return self.api.caps

    @property
    def model_id(self) -> str:
        """The served model's identity, the in-process model's when the server serves the same file (probed
        once; ``core/models/identity.py``)."""
        return self.api.identity

    def probe(self, *, prompt_logprobs: bool = False) -> Capabilities:
        """Check that the server is reachable and returns next-token top log-probabilities (and, if asked,
        prompt log-probabilities). Raises a :class:`BackendError` naming what is missing."""
        return self.api.probe(prompt_logprobs=prompt_logprobs)

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the server's tokenizer (estimated when it has no tokenize endpoint)."""
        return self.api.count_tokens(text)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ fan-out

    def _fan_out(self, fn: Callable[[_T], _R], items: Sequence[_T], cancel: CancelCheck | None) -> list[_R]:
        """``fn`` over ``items`` on the worker threads (in flight bounded by the connections), results in input
        order."""

        def run(item: _T) -> _R:
            if cancel is not None and cancel():
                raise Cancelled("cancelled")
            return fn(item)

        if len(items) <= 1 or self.max_concurrency == 1:
            return [run(x) for x in items]
        futures = [self._pool.submit(run, x) for x in items]
        try:
            return [f.result() for f in futures]
        finally:
            for f in futures:
                f.cancel()

    # ------------------------------------------------------------------ decision modes

    def binary(
        self,
        context: str,
        questions: Sequence[str],
        *,
        yes: str = " Yes",
        no: str = " No",
        cancel: CancelCheck | None = None,
    ) -> Scores:
        """P(yes | context + question_i) from each question's next-token top log-probabilities (one request
        per question, ``max_concurrency`` at once), normalised over ``yes``/``no``; a missing
        readout token is bounded."""
        t0 = time.perf_counter()
        for word, role in ((yes, "yes"), (no, "no")):
            if self.api.is_one_token(word) is False:  # (unknown without a tokenize endpoint: then bounded)
                raise BackendError(f"the {role} word {word!r} is not one token for the server's model")
        if not questions:
            return Scores([], Cost())
        check_cancel(cancel)
        self.api.probe_top()

        def one(q: str) -> tuple[float, Cost, int]:
            choice, cost = self.api.complete({"prompt": context + q, "max_tokens": 1, "logprobs": TOP_LOGPROBS})
            (ly, ln), bounded = readout_logprobs(self._top(choice), (yes, no))
            return yes_probability(ly, ln), cost, bounded

        results = self._fan_out(one, list(questions), cancel)
        cost = Cost()
        for _, c, b in results:
            cost.add(c)
            self.bounded_readouts += b
        cost.seconds = time.perf_counter() - t0
        return Scores([p for p, _, _ in results], cost)

    def likelihood(
        self, context: str, candidates: Sequence[str], query: str, *, cancel: CancelCheck | None = None
    ) -> Likelihoods:
        """log P(query | context + candidate_i) from the echoed prompt log-probabilities (one request per
        candidate). ``mean`` divides by each candidate's own count of query tokens; ``n_tokens`` is the
        first's."""
        t0 = time.perf_counter()
        if not query:
            raise BackendError("likelihood needs a non-empty query")
        if not candidates:
            return Likelihoods([], [], 0, Cost())
        for i, c in enumerate(candidates):
            if not c:
                raise BackendError(f"likelihood candidate {i} is empty")
        check_cancel(cancel)
        self.api.probe_prompt()

        def one(cand: str) -> tuple[float, int, Cost]:
            prompt = context + cand + query
            choice, cost = self.api.complete({"prompt": prompt, "max_tokens": 1, "logprobs": 1, "echo": True})
            try:
                lps = query_logprobs(choice, len(context) + len(cand), len(prompt))
            except (KeyError, TypeError) as exc:
                raise BackendError(f"the server at {self.url} returned no prompt log-probabilities") from exc
            if not lps:
                raise BackendError("the server's echoed tokens do not cover the query")
            return sum(lps), len(lps), cost

        results = self._fan_out(one, list(candidates), cancel)
        cost = Cost()
        for _, _, part in results:
            cost.add(part)
        cost.seconds = time.perf_counter() - t0
        return Likelihoods([t for t, _, _ in results], [t / n for t, n, _ in results], results[0][1], cost)

    def _top(self, choice: JSONObject) -> dict[str, float]:
        try:
            return top_logprobs(choice)
        except (KeyError, TypeError, IndexError, AttributeError) as exc:
            raise BackendError(f"the server at {self.url} returned no top log-probabilities") from exc

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
        """Stream text pieces over server-sent events (``repeat_penalty`` sent as llama.cpp's server names it).
        Stops at the server's end (``stopped_by`` "stop" when
        stop strings were given, else "eos"), ``max_tokens`` ("length") or ``cancel`` ("cancelled": the
        connection is closed so the server stops too). Connection errors are retried only before the first
        piece."""
        t0 = time.perf_counter()
        self.api.probe_models()
        payload: JSONObject = {
            "model": self.api.model_id,
            "prompt": prompt,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": True,
        }
        if stop:
            payload["stop"] = list(stop)
        if repeat_penalty != 1.0:
            payload["repeat_penalty"] = repeat_penalty
        cost = Cost(requests=1)

        def pieces() -> Generator[bytes, None, str]:
            ended = "length"
            with self.http.stream_events("/v1/completions", payload) as events:
                for event in events:
                    c = (event.get("choices") or [{}])[0]
                    text = c.get("text") or ""
                    usage = event.get("usage")
                    if usage:
                        cost.tokens = int(usage.get("total_tokens") or cost.tokens)
                    reason = c.get("finish_reason")
                    if reason:
                        ended = "length" if reason == "length" else ("stop" if stop else "eos")
                    if text:
                        cost.tokens += 0 if usage else 1
                        yield text.encode("utf-8")
            return ended

        return (yield from guarded_stream(pieces(), stop, cancel, cost, t0))

    def info(self) -> JSONObject:
        return {
            "backend": self.name,
            "url": self.url,
            "model": self.api.model_id,
            "model_id": self.model_id,
            "max_concurrency": self.max_concurrency,
            "timeout": self.timeout,
            "retries": self.retries,
        }
