"""The OpenAI-compatible completions API as the remote backend uses it: reading log-probabilities and usage out
of ``/v1/completions`` answers (pure functions), and :class:`CompletionsAPI`, which probes what a server can do
(``GET /v1/models``; top log-probabilities; prompt log-probabilities; a tokenize endpoint), each once and with a
tiny request, sends completions with the probed model name, and counts tokens with the server's tokenizer.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from shelfwise.core.json_types import JSONObject
from shelfwise.core.models.backend import BackendError, Cost
from shelfwise.core.models.identity import served_identity
from shelfwise.core.models.remote.client import ServerClient


def top_logprobs(choice: JSONObject) -> dict[str, float]:
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


def query_logprobs(choice: JSONObject, start: int, end: int) -> list[float]:
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




@dataclass
class Capabilities:
    """What the probe found. ``None`` = not probed yet."""

    model_id: str | None = None  # the model name requests are sent with
    identity: str | None = None  # the model's identity (core/models/identity.py), else the name
    top_logprobs: bool | None = None
    prompt_logprobs: bool | None = None
    tokenize_path: str | None = None  # "" = no tokenize endpoint (count_tokens estimates)
    bos_tokens: int = 0  # tokens the tokenize endpoint adds to any text


def usage_cost(data: JSONObject) -> Cost:
    """The request's cost from the answer's ``usage`` (and llama.cpp's ``timings``): prompt tokens served from the
    server's cache go to ``reused_tokens``."""
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


class CompletionsAPI:
    """``/v1/completions`` and friends on a :class:`~shelfwise.core.models.remote.client.ServerClient`; the probes run
    once per instance (thread-safe). ``model``: the model name sent with each request (default: the first one the
    server lists)."""

    def __init__(self, http: ServerClient, model: str | None = None) -> None:
        self.http = http
        self.model = model
        self.caps = Capabilities()
        self._probe_lock = threading.RLock()
        self._one_token: dict[str, bool] = {}


    @property
    def model_id(self) -> str:
        """The server's model name (probed once), sent with each request."""
        self.probe_models()
        assert self.caps.model_id is not None
        return self.caps.model_id

    @property
    def identity(self) -> str:
        """The served model's identity (:func:`~shelfwise.core.models.identity.served_identity`: the same as the
        file's in process), else its name on the server (which no file's identity equals)."""
        self.probe_models()
        assert self.caps.identity is not None
        return self.caps.identity

    def _reported_path(self) -> str:
        """The model file llama-server says it serves (``/props``); empty from a server without that endpoint."""
        try:
            props = self.http.request("GET", "/props", retries=0)
        except BackendError:
            return ""
        return str(props.get("model_path") or "")

    def probe_models(self) -> None:
        if self.caps.model_id is not None:
            return
        with self._probe_lock:
            if self.caps.model_id is not None:
                return
            data = self.http.request("GET", "/v1/models")
            ids = [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict)]
            if self.model is not None:
                name = self.model
            elif ids:
                name = ids[0]
            else:
                raise BackendError(f"the server at {self.http.url} lists no model under /v1/models")
            self.caps.identity = served_identity(name, self._reported_path()) or name
            self.caps.model_id = name

    def probe(self, *, prompt_logprobs: bool = False) -> Capabilities:
        """Check that the server is reachable and returns next-token top log-probabilities (and, if asked,
        prompt log-probabilities). Raises a :class:`BackendError` naming what is missing."""
        self.probe_models()
        self.probe_top()
        if prompt_logprobs:
            self.probe_prompt()
        return self.caps

    def probe_top(self) -> None:
        if self.caps.top_logprobs:
            return
        with self._probe_lock:
            if self.caps.top_logprobs:
                return
            choice, _ = self.complete(
                {"prompt": "Yes or no? Answer:", "max_tokens": 1, "logprobs": 2},
                retries=0,
                what="top log-probabilities",
            )
            try:
                top_logprobs(choice)
            except (KeyError, TypeError, IndexError, AttributeError) as exc:
                self.caps.top_logprobs = False
                raise BackendError(
                    f"the server at {self.http.url} returns no top log-probabilities on /v1/completions "
                    "(binary and choice need `logprobs`; llama-cpp-python: --logits_all true)"
                ) from exc
            self.caps.top_logprobs = True

    def probe_prompt(self) -> None:
        if self.caps.prompt_logprobs:
            return
        with self._probe_lock:
            if self.caps.prompt_logprobs:
                return
            prompt = "Hello world"
            choice, _ = self.complete(
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
                    f"the server at {self.http.url} returns no prompt log-probabilities (`echo` with `logprobs` "
                    "on /v1/completions), which likelihood needs; use the binary readout, or a server that "
                    "has them (llama-cpp-python's server, vLLM)"
                )

    def complete(
        self,
        params: JSONObject,
        *,
        retries: int | None = None,
        what: str = "",
    ) -> tuple[JSONObject, Cost]:
        self.probe_models()
        payload = {"model": self.caps.model_id, "temperature": 0.0, **params}
        try:
            data = self.http.request("POST", "/v1/completions", payload, retries=retries)
        except BackendError as exc:
            if what:
                raise BackendError(f"{exc} (while checking that the server returns {what})") from exc
            raise
        try:
            choice = data["choices"][0]
        except (KeyError, IndexError, TypeError) as exc:
            raise BackendError(f"the server at {self.http.url} returned no completion choice") from exc
        return choice, usage_cost(data)


    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` by the server's tokenizer (llama-cpp-python ``/extras/tokenize``, llama.cpp
        and vLLM ``/tokenize``), without the BOS token; ``ceil(bytes / 4)`` when the server has no tokenize
        endpoint."""
        self._probe_tokenize()
        path = self.caps.tokenize_path
        if not path:
            return math.ceil(len(text.encode("utf-8")) / 4)
        return max(0, len(self._tokenize(path, text)) - self.caps.bos_tokens)

    def is_one_token(self, word: str) -> bool | None:
        """Whether the server's tokenizer reads ``word`` as one token (asked once per word); None when the server
        has no tokenize endpoint."""
        self._probe_tokenize()
        path = self.caps.tokenize_path
        if not path:
            return None
        if word not in self._one_token:
            self._one_token[word] = len(self._tokenize(path, word)) - self.caps.bos_tokens == 1
        return self._one_token[word]

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
        data = self.http.request("POST", path, payload)
        return [int(t) if not isinstance(t, dict) else int(t["id"]) for t in data["tokens"]]

    def _probe_tokenize(self) -> None:
        if self.caps.tokenize_path is not None:
            return
        self.probe_models()
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
