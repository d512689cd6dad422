"""The sentence encoder on llama.cpp's ``llama-server`` (``--embedding``): the same vectors as the in-process
:class:`~shelfwise.core.models.encoders.embedder.Embedder` on the same GGUF, computed by a server.

The client frames every text exactly as the in-process encoder does: the profile's prompt before it (EmbeddingGemma:
``task: search result | query: `` for questions, ``title: none | text: `` for stored texts), tokenized by the
server's ``/tokenize`` as one string without special tokens and without parsing special-token text, cut to
``window`` tokens with the model's own special frame (``[CLS]``/``[SEP]``, ``<bos>``/``<eos>``) around it; the token
ids then go to ``/v1/embeddings`` in batches (several requests in flight, keep-alive connections), and the pooled
rows come back L2-normalised here. So a text longer than the window is cut where the in-process encoder cuts it,
and a text holding ``[SEP]`` or ``<eos>`` is read as words, as it is in process.

Model identity (:attr:`RemoteEmbedder.model_id`): the in-process encoder's for the same file
(:func:`~shelfwise.core.models.identity.served_identity`: the alias ``packaging/server.sh start`` declares, else the
file the server reports when it is on this machine), so a library's vectors from the server and from the same file
in process are one model's; a server whose model cannot be told so gets ``FILE@server:PARAMS:BYTES``, which never
equals a file's identity, so its vectors are never mixed with a local model's.

Faults: connection errors and 5xx answers are retried (:class:`~.client.ServerClient`); a timeout or a refusal is a
:class:`~shelfwise.core.models.backend.BackendError` naming the server and its message. ``embed`` returns every
row or raises: nothing half-embedded comes back.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

import numpy as np

from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.encoders.embedder import EMBEDDINGGEMMA, MINILM, EncoderProfile, PromptedEncoder
from shelfwise.core.models.identity import FILE_SHA_ID, file_sha_id, served_identity

START_HINT = "bash packaging/server.sh start (see docs/server.md)"


def is_server_url(spec: object) -> bool:
    """True when an encoder/judge setting names a server (``http://`` / ``https://``) rather than a model."""
    return isinstance(spec, str) and spec.strip().lower().startswith(("http://", "https://"))


@dataclass(frozen=True)
class ServerModel:
    """What a ``llama-server`` says about the model it serves (``/v1/models`` and ``/props``)."""

    alias: str  # --alias, else the file name
    path: str  # the GGUF's path on the server
    n_params: int
    size: int  # bytes of tensors
    n_embd: int
    n_ctx: int  # tokens per slot
    slots: int  # --parallel

    @property
    def file(self) -> str:
        return PurePath(self.path).name if self.path else self.alias

    @property
    def model_id(self) -> str:
        """The file's identity when it can be told (:func:`served_identity`), else an id of the server's own form
        (never equal to a file's identity)."""
        return served_identity(self.alias, self.path) or f"{self.file}@server:{self.n_params}:{self.size}"

    @property
    def legacy_ids(self) -> tuple[str, ...]:
        """``FILE:SHA16`` of the served file when it is on this machine (what its vectors were stored under before
        the identity rule)."""
        local = Path(self.path) if self.path else None
        return (file_sha_id(local),) if local is not None and local.is_file() else ()

    def profile(self) -> EncoderProfile:
        """The prompts the in-process encoder would use for this file (by its name: the server does not report
        ``general.architecture``)."""
        alias = FILE_SHA_ID.match(self.alias)
        name = (alias.group("file") if alias else self.file).lower()
        return EMBEDDINGGEMMA if "embeddinggemma" in name else MINILM


def server_model(models: dict[str, Any], props: dict[str, Any]) -> ServerModel:
    """The :class:`ServerModel` from the two answers (pure: tests feed recorded answers)."""
    data = models.get("data")
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        raise BackendError("the server's /v1/models lists no model")
    first = data[0]
    raw_meta = first.get("meta")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    slot_ctx = meta.get("n_ctx") or (props.get("default_generation_settings") or {}).get("n_ctx") or 0
    return ServerModel(
        alias=str(props.get("model_alias") or first.get("id") or ""),
        path=str(props.get("model_path") or ""),
        n_params=int(meta.get("n_params") or 0),
        size=int(meta.get("size") or 0),
        n_embd=int(meta.get("n_embd") or 0),
        n_ctx=int(slot_ctx),
        slots=int(props.get("total_slots") or 1),
    )


def cut_points(text: str, body_max: int) -> list[int]:
    """The prefixes of ``text`` the in-process encoder tokenizes, in order, until one gives more than ``body_max``
    tokens or is the whole text (a prefix cut at a space, growing 4x: a token covers at least one character)."""
    cut = body_max * 8
    out = []
    while True:
        if cut >= len(text):
            out.append(len(text))
            return out
        space = text.rfind(" ", 0, cut)
        out.append(space if space > cut // 2 else cut)
        cut *= 4


class RemoteEmbedder(PromptedEncoder):
    """Sentence vectors from a ``llama-server --embedding`` (see the module doc).

    ``url`` is the server (``http://host:port``); ``window`` is the tokens a text is cut to, specials included (the
    in-process default, so both give the same vectors and the same cache keys); ``batch`` the texts per embeddings
    request; ``concurrency`` the requests in flight (at most the server's ``--parallel`` slots, which work on them
    at once); ``timeout`` the seconds one request may take (a batch of long texts on a busy CPU server takes
    minutes).
    Thread-safe.
    """

    profile: EncoderProfile

    def __init__(self, url: str, *, window: int = 256, batch: int = 32, concurrency: int = 4,
                 timeout: float = 300.0, retries: int = 2, backoff: float = 0.5) -> None:
        from shelfwise.core.models.remote.client import ServerClient

        if window < 3:
            raise ValueError("window must leave room for at least one token besides the special tokens")
        self.window = window
        self._model_id: str | None = None
        self.batch = max(1, batch)
        self.concurrency = max(1, concurrency)
        self._workers = ThreadPoolExecutor(max_workers=self.concurrency + 1, thread_name_prefix="remote-embed")
        try:
            # one extra connection: a tokenize call of the next batch need not wait for a slot an embedding holds
            self.pool = ServerClient(url, timeout=timeout, retries=retries, connections=self.concurrency + 1,
                                     backoff=backoff, role="encoder server", start_hint=START_HINT)
        except BaseException:
            self._workers.shutdown(wait=False)
            raise
        self.url = self.pool.url
        try:
            self.server = server_model(self.pool.request("GET", "/v1/models"), self._props())
            if self.server.n_ctx and window > self.server.n_ctx:
                raise BackendError(f"the encoder server at {self.url} gives each request {self.server.n_ctx} tokens, "
                                   f"fewer than the window of {window}: start it with a larger --ctx-size "
                                   f"(per slot: ctx-size / parallel)")
            # no more requests in flight than the server has slots: the rest would only queue there, their
            # waiting counted against the timeout (seen: 4 requests of 32 sentences on 2 CPU slots, 60 s passed)
            self.concurrency = max(1, min(self.concurrency, self.server.slots))
            self.profile = self.server.profile()
            self._prefix, self._suffix = self._special_frame()
            self._body_max = window - len(self._prefix) - len(self._suffix)
            probe = self._embed_ids([self._prefix + self._raw_tokens("hello") + self._suffix])
            self._dim = int(probe.shape[1])
        except BaseException:
            self.close()
            raise
        self.ran = f"on the encoder server at {self.url}"  # for the trace

    path: Path | None = None  # no GGUF file in this process
    n_threads: int | None = None  # not a llama.cpp encoder in this process

    def set_threads(self, n_threads: int) -> None:
        """Nothing to lend: the server's threads are its own."""

    # -- identity ---------------------------------------------------------------------------------------------------
    @property
    def model_id(self) -> str:
        if self._model_id is None:  # read once: the served file's identity reads a few MiB of it
            self._model_id = self.server.model_id
        return self._model_id

    @property
    def legacy_ids(self) -> tuple[str, ...]:  # type: ignore[override]  # the served file's, when it is here
        return self.server.legacy_ids

    @property
    def dim(self) -> int:
        return self._dim

    def describe(self) -> str:
        return f"{self.server.file} on {self.url} ({self.server.slots} slots)"

    def _props(self) -> dict[str, Any]:
        try:
            return self.pool.request("GET", "/props", retries=0)
        except BackendError:  # --no-endpoint-props or an older server: /v1/models alone
            return {}

    # -- tokens -----------------------------------------------------------------------------------------------------
    def _raw_tokens(self, text: str, add_special: bool = False) -> list[int]:
        data = self.pool.request("POST", "/tokenize", {"content": text, "add_special": add_special,
                                                        "parse_special": False})
        toks = data.get("tokens")
        if not isinstance(toks, list) or not all(isinstance(t, int) for t in toks):
            raise BackendError(f"the encoder server at {self.url} answered /tokenize without token ids")
        return toks

    def _special_frame(self) -> tuple[list[int], list[int]]:
        plain = self._raw_tokens("hello")
        framed = self._raw_tokens("hello", True)
        for i in range(len(framed) - len(plain) + 1):
            if framed[i : i + len(plain)] == plain:
                return framed[:i], framed[i + len(plain) :]
        raise BackendError(f"the encoder server at {self.url}: cannot tell its special tokens apart")

    def tokenize(self, text: str, prompt: str = "") -> list[int]:
        """Token ids as the in-process encoder makes them (``Embedder.tokenize``), from the server's tokenizer."""
        text = (prompt + text).encode("utf-8", errors="replace").decode("utf-8")
        body: list[int] = []
        for end in cut_points(text, self._body_max):
            body = self._raw_tokens(text[:end])
            if len(body) > self._body_max:
                break
        return self._prefix + body[: self._body_max] + self._suffix

    def document_tokens(self, texts: Sequence[str]) -> int:
        """Tokens the texts take as stored texts: each with the document prompt, cut to the window."""
        prompt = self.profile.document_prefix()
        return sum(len(s) for s in self._workers.map(lambda t: self.tokenize(t, prompt), texts))

    def count_tokens(self, text: str) -> int:
        return len(self._raw_tokens(text.encode("utf-8", errors="replace").decode("utf-8"), True))

    # -- embedding --------------------------------------------------------------------------------------------------
    def _embed_ids(self, seqs: Sequence[list[int]]) -> np.ndarray:
        data = self.pool.request("POST", "/v1/embeddings", {"input": list(seqs), "encoding_format": "float"})
        rows = data.get("data")
        if not isinstance(rows, list) or len(rows) != len(seqs):
            got = len(rows) if isinstance(rows, list) else 0
            raise BackendError(f"the encoder server at {self.url} returned {got} vectors for {len(seqs)} texts "
                               "(was it started with --embedding?)")
        out: list[np.ndarray | None] = [None] * len(seqs)
        for j, r in enumerate(rows):
            i = int(r.get("index", j)) if isinstance(r, dict) else -1
            vec = r.get("embedding") if isinstance(r, dict) else None
            if not 0 <= i < len(seqs) or not isinstance(vec, list) or not vec or isinstance(vec[0], list):
                raise BackendError(f"the encoder server at {self.url} sent an embedding that is not one pooled "
                                   "vector (start it with --pooling mean)")
            out[i] = np.asarray(vec, dtype=np.float32)
        return np.stack(out)  # type: ignore[arg-type]

    def _embed(self, texts: Sequence[str], prompts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; use embed_one() for a single string")
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        seqs = list(self._workers.map(self.tokenize, texts, prompts))
        groups = [seqs[i : i + self.batch] for i in range(0, len(seqs), self.batch)]
        out = np.concatenate(list(self._workers.map(self._embed_ids, groups)), axis=0)
        if out.shape != (len(texts), self._dim):
            raise BackendError(f"the encoder server at {self.url} returned vectors of shape {out.shape}")
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)
        return out

    def close(self) -> None:
        """Close the connections (idempotent)."""
        self._workers.shutdown(wait=False, cancel_futures=True)
        self.pool.close()


__all__ = ["RemoteEmbedder", "ServerModel", "cut_points", "is_server_url", "server_model"]
