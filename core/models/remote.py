"""The decision model on an OpenAI-compatible inference server (llama-cpp-python's server, llama.cpp, vLLM).

Everything goes through ``POST /v1/completions`` with log-probabilities, so any server that implements the
legacy completions API with ``logprobs`` works; what each mode needs:

* **binary / choice** (next-token readout): one request per question (binary) or per option list (choice) with
  ``max_tokens: 1, temperature: 0, logprobs: 20``; the readout is the first generated position's top-20 list.
  P(yes) is normalised over the two readout tokens only (``prompts.yes_probability``), choice over the labels
  (``prompts.softmax``). A readout token *absent* from the top list has a log-probability no larger than the
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

Layout parity with :mod:`shelfwise.core.models.llama_backend`: the prompt texts are the same strings, but a server
tokenizes the *concatenated* text where the in-process backend tokenizes context, candidate and query
separately, so tokens can differ at the two boundaries (e.g. ``"Text: " + "Fee"``). The tests bound the effect
(P(yes) within 0.06, mean log-probability within 0.1 nats/token).

Transport: stdlib ``http.client`` with keep-alive (a per-server pool of idle connections), at most
``max_concurrency`` requests in flight (a semaphore shared by every call of the instance, so nested fan-out
cannot exceed it), a socket ``timeout`` on connect and on every read, and ``retries`` with exponential backoff
on connection errors and 5xx answers. A read timeout is **not** retried (the server may still be working on
it; sending it again would only queue more work): the call fails after ``timeout`` seconds. A connection error
on a reused idle connection (the server closed it) is retried at once on a fresh one, without using up a
retry.

``url`` may list several servers separated by commas (a pool). Every request waits for a free slot
(``slots_per_server`` per server) and goes to the server with the fewest requests in flight, so the questions of
a level spread over the pool and a slow server does not hold the others up; a retry may go to another server.
(Sending a whole request group to one server would keep its questions together for a one-sequence prefix cache,
but then the group queues behind that server's single slot while the other servers idle: measured on two
llama-cpp-python servers, 4 groups in flight ran no faster than 1 at a time.)

Cost: ``requests`` = HTTP requests; ``tokens`` = prompt plus generated tokens the server reports in ``usage``
minus the prompt tokens it reports as served from its cache (vLLM
``usage.prompt_tokens_details.cached_tokens``, llama.cpp ``timings.cache_n``), which go to ``reused_tokens``.
llama-cpp-python's server reports no cache use, so there ``tokens`` counts what was *sent*, an upper bound of
what it evaluated (it reuses the longest common prefix with its previous prompt).

On first use the backend probes the server: ``GET /v1/models`` (reachable; :attr:`model_id`), then the
capability a mode needs the first time it is used (top log-probabilities; prompt log-probabilities), each with
a tiny request.
"""

from __future__ import annotations

import http.client
import json
import math
import threading
import time
import urllib.parse
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Self, TypeVar

from shelfwise.core.models.backend import (
    BackendError,
    CancelCheck,
    Cancelled,
    Cost,
    Generation,
    Likelihoods,
    Scores,
    check_cancel,
)
from shelfwise.core.models.llama_text import StreamText
from shelfwise.core.models.prompts import choice_labels, choice_prompt, softmax, yes_probability

TOP_LOGPROBS = 20  # OpenAI's and vLLM's default maximum
RETRY_STATUS = frozenset({500, 502, 503, 504})
_T = TypeVar("_T")
_R = TypeVar("_R")


# --------------------------------------------------------------------------- pure readout helpers


def top_logprobs(choice: dict[str, Any]) -> dict[str, float]:
    """token text -> logprob at the first generated position of one completion choice.

    Accepts the legacy completions format (``logprobs.top_logprobs[0]`` a dict: llama-cpp-python, vLLM,
    OpenAI) and the chat-like one (``logprobs.content[0].top_logprobs`` a list of ``{token, logprob}``:
    llama.cpp). Raises ``KeyError``/``TypeError``/``IndexError`` when the choice carries no top
    log-probabilities.
    """
    lp = choice["logprobs"]
    if lp.get("top_logprobs") is not None:
        return {str(k): float(v) for k, v in lp["top_logprobs"][0].items()}
    entries = lp["content"][0]["top_logprobs"]
    return {str(e["token"]): float(e["logprob"]) for e in entries}


def readout_logprobs(top: dict[str, float], words: Sequence[str]) -> tuple[list[float], int]:
    """The log-probability of each readout word in ``top``; a word not listed is bounded by the smallest
    listed value. Returns the values and how many were bounded."""
    if not top:
        raise BackendError("the server returned an empty top log-probability list")
    floor = min(top.values())
    out: list[float] = []
    bounded = 0
    for w in words:
        v = top.get(w)
        if v is None or math.isnan(v):
            bounded += 1
            v = floor
        out.append(v)
    return out, bounded


def query_logprobs(choice: dict[str, Any], start: int, end: int) -> list[float]:
    """log P of the echoed prompt tokens that overlap the characters ``[start, end)`` of the prompt.

    ``choice.logprobs`` holds ``tokens``, ``text_offset`` and ``token_logprobs`` for the prompt followed by
    the generated token(s); a token overlaps when it starts before ``end`` and ends after ``start``.
    """
    lp = choice["logprobs"]
    tokens, offsets, values = lp["tokens"], lp["text_offset"], lp["token_logprobs"]
    if not (len(tokens) == len(offsets) == len(values)):
        raise BackendError("the server's echoed log-probabilities have inconsistent lengths")
    out: list[float] = []
    for i, (tok, off) in enumerate(zip(tokens, offsets, strict=True)):
        tok_end = offsets[i + 1] if i + 1 < len(offsets) else off + len(tok)
        tok_end = max(tok_end, off + len(tok))
        if off < end and tok_end > start:
            v = values[i]
            if v is None:
                raise BackendError("the server gave no log-probability for a query token")
            out.append(float(v))
    return out


# --------------------------------------------------------------------------- transport


@dataclass
class Capabilities:
    """What the probe found. ``None`` = not probed yet."""

    model_id: str | None = None
    top_logprobs: bool | None = None
    prompt_logprobs: bool | None = None
    tokenize_path: str | None = None  # "" = no tokenize endpoint (count_tokens estimates)
    bos_tokens: int = 0  # tokens the tokenize endpoint adds to any text


class _Endpoint:
    """One server: base URL and a pool of idle keep-alive connections."""

    def __init__(self, url: str, timeout: float) -> None:
        raw = url.strip().rstrip("/")
        raw = raw.removesuffix("/v1")
        parts = urllib.parse.urlsplit(raw if "://" in raw else "http://" + raw)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BackendError(f"not an http(s) server URL: {url!r}")
        self.url = f"{parts.scheme}://{parts.netloc}{parts.path}"
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path
        self.timeout = timeout
        self.in_flight = 0
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def connect(self) -> tuple[http.client.HTTPConnection, bool]:
        """An idle connection (reused=True) or a new one."""
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        cls = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        return cls(self.host, self.port, timeout=self.timeout), False

    def busy(self, delta: int) -> None:
        with self._lock:
            self.in_flight += delta

    def release(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse | None) -> None:
        if resp is None or resp.will_close:
            conn.close()
            return
        with self._lock:
            self._idle.append(conn)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()


class _Retry(Exception):
    def __init__(self, reason: str, immediate: bool = False) -> None:
        super().__init__(reason)
        self.immediate = immediate


# --------------------------------------------------------------------------- the backend


class RemoteBackend:
    """:class:`~shelfwise.core.models.backend.DecisionBackend` over an OpenAI-compatible ``/v1/completions`` server.

    ``url``: e.g. ``http://127.0.0.1:8000`` (a trailing ``/v1`` is accepted; several comma-separated URLs form
    a pool). ``timeout``: seconds for connecting and for each read. ``retries``: extra attempts on connection
    errors and 5xx. ``max_concurrency``: requests in flight at once, over all threads using this instance.
    ``slots_per_server``: requests sent to one server at once (default: ``max_concurrency``; 1 suits
    llama-cpp-python's server, which runs one at a time; ``N`` for ``llama-server --parallel N``). Each request
    goes to the server with a free slot and the fewest requests in flight, so the questions of one level spread
    over the pool instead of queueing behind one server.
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
        slots_per_server: int | None = None,
        model: str | None = None,
        backoff: float = 0.25,
    ) -> None:
        urls = [u for u in url.split(",") if u.strip()]
        if not urls:
            raise BackendError("no server URL given")
        self.endpoints = [_Endpoint(u, timeout) for u in urls]
        self.url = ",".join(e.url for e in self.endpoints)
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.max_concurrency = max(1, int(max_concurrency))
        self.backoff = backoff
        self.model = model
        self.caps = Capabilities()
        self.bounded_readouts = 0  # readout tokens missing from a top list and bounded (see the module doc)
        self.slots_per_server = max(1, int(slots_per_server or self.max_concurrency))
        self._slots = threading.BoundedSemaphore(self.max_concurrency)
        self._pick_lock = threading.Condition()
        self._probe_lock = threading.RLock()
        self._rr = 0
        self._pool = ThreadPoolExecutor(
            max_workers=self.max_concurrency, thread_name_prefix="shelfwise-remote"
        )

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        for e in self.endpoints:
            e.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ HTTP

    def _acquire(self, ep: _Endpoint | None) -> _Endpoint:
        """A slot on ``ep``, or on the least busy endpoint with a free slot; waits while every slot is taken."""
        with self._pick_lock:
            while True:
                self._rr += 1
                n = len(self.endpoints)
                order = [ep] if ep is not None else [self.endpoints[(self._rr + i) % n] for i in range(n)]
                free = [e for e in order if e.in_flight < self.slots_per_server]
                if free:
                    chosen = min(free, key=lambda e: e.in_flight)
                    chosen.busy(1)
                    return chosen
                self._pick_lock.wait()

    def _release(self, ep: _Endpoint) -> None:
        with self._pick_lock:
            ep.busy(-1)
            self._pick_lock.notify_all()

    def _once(self, ep: _Endpoint, method: str, path: str, body: bytes | None) -> tuple[int, bytes]:
        conn, reused = ep.connect()
        resp: http.client.HTTPResponse | None = None
        try:
            headers = {"Content-Type": "application/json"} if body is not None else {}
            conn.request(method, ep.prefix + path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except TimeoutError as exc:
            conn.close()
            raise BackendError(
                f"the decision server at {ep.url} did not answer {path} within {self.timeout:g} s"
            ) from exc
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            conn.close()
            raise _Retry(
                f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__, immediate=reused
            ) from exc
        ep.release(conn, resp)
        return resp.status, data

    def _request(
        self,
        method: str,
        path: str,
        payload: dict[str, Any] | None = None,
        *,
        ep: _Endpoint | None = None,
        retries: int | None = None,
    ) -> dict[str, Any]:
        """JSON request with retries; a :class:`BackendError` carrying the server's message on failure."""
        body = None if payload is None else json.dumps(payload).encode("utf-8")
        attempts = 1 + (self.retries if retries is None else retries)
        last = ""
        delay = self.backoff
        n = 0
        fresh_retries = 0
        while n < attempts:
            with self._slots:
                target = self._acquire(ep)  # unpinned attempts may go to another server of the pool
                try:
                    status, data = self._once(target, method, path, body)
                except _Retry as r:
                    last = str(r)
                    if r.immediate and fresh_retries < 2:  # a stale keep-alive connection: retry now
                        fresh_retries += 1
                        continue
                    status, data = -1, b""
                finally:
                    self._release(target)
            n += 1
            if status == -1 or status in RETRY_STATUS:
                if status != -1:
                    last = f"HTTP {status}: {_detail(data)}"
                if n < attempts:
                    time.sleep(delay)
                    delay *= 2
                continue
            if status >= 400:
                raise BackendError(
                    f"the decision server at {target.url} refused {path}: HTTP {status}: {_detail(data)}"
                )
            try:
                return json.loads(data)
            except ValueError as exc:
                raise BackendError(f"the decision server at {target.url} sent invalid JSON for {path}") from exc
        hint = (
            " Is it running? e.g. python -m llama_cpp.server --model MODEL.gguf --port PORT"
            if last.startswith(("ConnectionRefusedError", "ConnectionResetError", "RemoteDisconnected"))
            else ""
        )
        raise BackendError(f"cannot reach the decision server at {target.url} ({last}; {n} attempts).{hint}")

    # ------------------------------------------------------------------ probing

    @property
    def model_id(self) -> str:
        """The server's model name (probed once)."""
        self._probe_models()
        assert self.caps.model_id is not None
        return self.caps.model_id

    def _probe_models(self) -> None:
        if self.caps.model_id is not None:
            return
        with self._probe_lock:
            if self.caps.model_id is not None:
                return
            data = self._request("GET", "/v1/models", ep=self.endpoints[0])
            ids = [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict)]
            if self.model is not None:
                self.caps.model_id = self.model
            elif ids:
                self.caps.model_id = ids[0]
            else:
                raise BackendError(f"the server at {self.endpoints[0].url} lists no model under /v1/models")

    def probe(self, *, prompt_logprobs: bool = False) -> Capabilities:
        """Check that the server is reachable and returns next-token top log-probabilities (and, if asked,
        prompt log-probabilities). Raises a :class:`BackendError` naming what is missing."""
        self._probe_models()
        self._probe_top()
        if prompt_logprobs:
            self._probe_prompt()
        return self.caps

    def _probe_top(self) -> None:
        if self.caps.top_logprobs:
            return
        with self._probe_lock:
            if self.caps.top_logprobs:
                return
            choice, _ = self._complete(
                {"prompt": "Yes or no? Answer:", "max_tokens": 1, "logprobs": 2},
                retries=0,
                what="top log-probabilities",
            )
            try:
                top_logprobs(choice)
            except (KeyError, TypeError, IndexError, AttributeError) as exc:
                self.caps.top_logprobs = False
                raise BackendError(
                    f"the server at {self.url} returns no top log-probabilities on /v1/completions "
                    "(binary and choice need `logprobs`; llama-cpp-python: --logits_all true)"
                ) from exc
            self.caps.top_logprobs = True

    def _probe_prompt(self) -> None:
        if self.caps.prompt_logprobs:
            return
        with self._probe_lock:
            if self.caps.prompt_logprobs:
                return
            prompt = "Hello world"
            choice, _ = self._complete(
                {"prompt": prompt, "max_tokens": 1, "logprobs": 1, "echo": True},
                retries=0,
                what="prompt log-probabilities",
            )
            try:  # the first prompt token has no log-probability (nothing predicts it); the second must
                ok = len(query_logprobs(choice, len("Hello"), len(prompt))) > 0
            except (KeyError, TypeError, IndexError, AttributeError, BackendError):
                ok = False
            self.caps.prompt_logprobs = ok
            if not ok:
                raise BackendError(
                    f"the server at {self.url} returns no prompt log-probabilities (`echo` with `logprobs` "
                    "on /v1/completions), which likelihood needs; use the binary readout, or a server that "
                    "has them (llama-cpp-python's server, vLLM)"
                )

    def _complete(
        self,
        params: dict[str, Any],
        *,
        ep: _Endpoint | None = None,
        retries: int | None = None,
        what: str = "",
    ) -> tuple[dict[str, Any], Cost]:
        self._probe_models()
        payload = {"model": self.caps.model_id, "temperature": 0.0, **params}
        try:
            data = self._request("POST", "/v1/completions", payload, ep=ep, retries=retries)
        except BackendError as exc:
            if what:
                raise BackendError(f"{exc} (while checking that the server returns {what})") from exc
            raise
        try:
            choice = data["choices"][0]
        except (KeyError, IndexError, TypeError) as exc:
            raise BackendError(f"the server at {self.url} returned no completion choice") from exc
        return choice, _usage_cost(data)

    # ------------------------------------------------------------------ fan-out

    def _fan_out(self, fn: Callable[[_T], _R], items: Sequence[_T], cancel: CancelCheck | None) -> list[_R]:
        """``fn`` over ``items`` on the worker pool (in flight bounded by the semaphore), results in input
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
        per question, each to the least busy server of the pool), normalised over ``yes``/``no``; a missing
        readout token is bounded."""
        t0 = time.perf_counter()
        if not questions:
            return Scores([], Cost())
        check_cancel(cancel)
        self._probe_top()

        def one(q: str) -> tuple[float, Cost, int]:
            choice, cost = self._complete({"prompt": context + q, "max_tokens": 1, "logprobs": TOP_LOGPROBS})
            (ly, ln), bounded = readout_logprobs(self._top(choice), (yes, no))
            return yes_probability(ly, ln), cost, bounded

        results = self._fan_out(one, list(questions), cancel)
        cost = Cost()
        for _, c, b in results:
            cost.add(c)
            self.bounded_readouts += b
        cost.seconds = time.perf_counter() - t0
        return Scores([p for p, _, _ in results], cost)

    def choice(self, context: str, options: Sequence[str], *, cancel: CancelCheck | None = None) -> Scores:
        """Options labelled A, B, C... (``prompts.choice_prompt``); softmax over the labels' top
        log-probabilities (a label missing from the top list is bounded), so the values sum to 1."""
        t0 = time.perf_counter()
        if not options:
            return Scores([], Cost())
        try:
            labels = choice_labels(len(options))
        except ValueError as exc:
            raise BackendError(str(exc)) from exc
        check_cancel(cancel)
        self._probe_top()
        choice, cost = self._complete(
            {"prompt": choice_prompt(context, options), "max_tokens": 1, "logprobs": TOP_LOGPROBS}
        )
        values, bounded = readout_logprobs(self._top(choice), labels)
        self.bounded_readouts += bounded
        cost.seconds = time.perf_counter() - t0
        return Scores(softmax(values), cost)

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
        self._probe_prompt()

        def one(cand: str) -> tuple[float, int, Cost]:
            prompt = context + cand + query
            choice, cost = self._complete({"prompt": prompt, "max_tokens": 1, "logprobs": 1, "echo": True})
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

    def _top(self, choice: dict[str, Any]) -> dict[str, float]:
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
        seed: int | None = None,
    ) -> Generator[str, None, Generation]:
        """Stream text pieces over server-sent events. Stops at the server's end (``stopped_by`` "stop" when
        stop strings were given, else "eos"), ``max_tokens`` ("length") or ``cancel`` ("cancelled": the
        connection is closed so the server stops too). Connection errors are retried only before the first
        piece."""
        t0 = time.perf_counter()
        self._probe_models()
        payload: dict[str, Any] = {
            "model": self.caps.model_id,
            "prompt": prompt,
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": True,
        }
        if stop:
            payload["stop"] = list(stop)
        if seed is not None:
            payload["seed"] = seed
        stream = StreamText(stop)
        cost = Cost(requests=1)
        stopped_by = "length"
        with self._slots:
            ep = self._acquire(None)
            try:
                conn, resp = self._open_stream(ep, payload)
                try:
                    for event in _sse_events(resp, ep, self.timeout):
                        if cancel is not None and cancel():
                            stopped_by = "cancelled"
                            break
                        c = (event.get("choices") or [{}])[0]
                        text = c.get("text") or ""
                        if text:
                            cost.tokens += 1
                            out = stream.feed(text.encode("utf-8"))
                            if out:
                                yield out
                        usage = event.get("usage")
                        if usage:
                            cost.tokens = int(usage.get("total_tokens") or cost.tokens)
                        reason = c.get("finish_reason")
                        if reason:
                            stopped_by = "length" if reason == "length" else ("stop" if stop else "eos")
                        if stream.stopped:
                            stopped_by = "stop"
                            break
                finally:
                    conn.close()  # a stream is long: a fresh connection per stream costs nothing that matters
            finally:
                self._release(ep)
        tail = stream.finish()
        if tail:
            yield tail
        cost.seconds = time.perf_counter() - t0
        return Generation(stream.text, cost, stopped_by)

    def _open_stream(
        self, ep: _Endpoint, payload: dict[str, Any]
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        body = json.dumps(payload).encode("utf-8")
        delay = self.backoff
        last = ""
        for attempt in range(1 + self.retries):
            conn, _ = ep.connect()
            try:
                conn.request(
                    "POST",
                    ep.prefix + "/v1/completions",
                    body=body,
                    headers={"Content-Type": "application/json", "Accept": "text/event-stream"},
                )
                resp = conn.getresponse()
            except TimeoutError as exc:
                conn.close()
                raise BackendError(
                    f"the decision server at {ep.url} did not answer within {self.timeout:g} s"
                ) from exc
            except (ConnectionError, http.client.HTTPException, OSError) as exc:
                conn.close()
                last = f"{type(exc).__name__}: {exc}"
            else:
                if resp.status == 200:
                    return conn, resp
                detail = _detail(resp.read())
                conn.close()
                if resp.status not in RETRY_STATUS:
                    raise BackendError(
                        f"the decision server at {ep.url} refused generation: HTTP {resp.status}: {detail}"
                    )
                last = f"HTTP {resp.status}: {detail}"
            if attempt < self.retries:
                time.sleep(delay)
                delay *= 2
        raise BackendError(
            f"cannot reach the decision server at {ep.url} ({last}; {1 + self.retries} attempts)"
        )

    # ------------------------------------------------------------------ tokens

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the server's tokenizer (llama-cpp-python ``/extras/tokenize``, llama.cpp
        and vLLM ``/tokenize``), without the BOS token; ``ceil(bytes / 4)`` when the server has no tokenize
        endpoint."""
        self._probe_tokenize()
        path = self.caps.tokenize_path
        if not path:
            return math.ceil(len(text.encode("utf-8")) / 4)
        return max(0, len(self._tokenize(path, text)) - self.caps.bos_tokens)

    def _tokenize(self, path: str, text: str) -> list[int]:
        payload = (
            {"input": text}
            if path == "/extras/tokenize"
            else {
                "content": text,
                "prompt": text,
                "add_special": False,
                "add_special_tokens": False,
                "model": self.caps.model_id,
            }
        )
        data = self._request("POST", path, payload)
        return [int(t) if not isinstance(t, dict) else int(t["id"]) for t in data["tokens"]]

    def _probe_tokenize(self) -> None:
        if self.caps.tokenize_path is not None:
            return
        self._probe_models()
        with self._probe_lock:
            if self.caps.tokenize_path is not None:
                return
            for path in ("/extras/tokenize", "/tokenize"):
                try:
                    self.caps.bos_tokens = len(self._tokenize(path, ""))
                except (BackendError, KeyError, TypeError, ValueError):
                    continue
                self.caps.tokenize_path = path
                return
            self.caps.tokenize_path = ""

    def info(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "url": self.url,
            "model": self.model_id,
            "max_concurrency": self.max_concurrency,
            "timeout": self.timeout,
            "retries": self.retries,
        }


# --------------------------------------------------------------------------- helpers


def _detail(data: bytes) -> str:
    """The server's error message (OpenAI ``{"error": {"message": ...}}``, FastAPI ``{"detail": ...}``) or
    text."""
    text = data.decode("utf-8", errors="replace").strip()
    try:
        obj = json.loads(text)
    except ValueError:
        return text[:300] or "(no body)"
    if isinstance(obj, dict):
        err = obj.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
        if err:
            return str(err)[:300]
        if obj.get("detail"):
            return str(obj["detail"])[:300]
    return text[:300]


def _usage_cost(data: dict[str, Any]) -> Cost:
    usage = data.get("usage") or {}
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    details = usage.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0)
    timings = data.get("timings") or {}
    if not cached and timings.get("cache_n") is not None:
        cached = int(timings["cache_n"])
    cached = min(cached, prompt)
    return Cost(requests=1, tokens=prompt - cached + completion, reused_tokens=cached)


def _sse_events(resp: http.client.HTTPResponse, ep: _Endpoint, timeout: float) -> Iterator[dict[str, Any]]:
    """JSON objects of a server-sent event stream up to ``data: [DONE]`` (comments and other fields
    skipped)."""
    while True:
        try:
            raw = resp.readline()
        except TimeoutError as exc:
            raise BackendError(
                f"the decision server at {ep.url} stopped streaming for {timeout:g} s"
            ) from exc
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            raise BackendError(f"the decision server at {ep.url} broke off the stream: {exc}") from exc
        if not raw:
            return
        line = raw.decode("utf-8", errors="replace").strip()
        if not line.startswith("data:"):
            continue
        data = line[len("data:") :].strip()
        if data == "[DONE]":
            return
        try:
            event = json.loads(data)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("error"):
            raise BackendError(f"the decision server at {ep.url} failed while streaming: {_detail(raw)}")
        if isinstance(event, dict):
            yield event
