"""The encoder server with this machine's copy of the same weights as its fallback.

:func:`open_served_embedder` is what ``--embedder http://host:port`` opens. While the server answers, vectors come
from it (:class:`~.embedder.RemoteEmbedder`). When it cannot be reached (down, restarted, too slow, failing with
5xx), the same GGUF in this process takes over, but only the same weights: the local file whose identity is the
server's model id (``core/models/identity.py``; ``packaging/server.sh`` declares it) is loaded, so a library never
gets vectors of two models. The last id each server gave is kept in the data dir
(``models/servers.json``), so a server that is down when Shelfwise starts still has its twin found. Without a twin
the error says what to do. The switch is logged once, and :attr:`ServedEmbedder.ran` says which ran (``on the
encoder server at URL`` or ``in process: the encoder server at URL did not answer``): the walk's trace shows it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from shelfwise.core.models.backend import BackendError, Embedder, EmbedderBase, EncoderProfile
from shelfwise.core.models.remote.client import ServerUnavailable
from shelfwise.core.models.remote.embedder import RemoteEmbedder
from shelfwise.core.paths import models_dir

log = logging.getLogger(__name__)
T = TypeVar("T")
RECORD = "servers.json"


def _record_path() -> Path:
    return models_dir() / RECORD


def as_sentence(exc: Exception) -> str:
    """An error's message ending as a sentence, so that advice can follow it."""
    text = str(exc).rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."


def remembered_id(url: str) -> str | None:
    """The model id the encoder server at ``url`` gave last time (None: never reached from here)."""
    try:
        data = json.loads(_record_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get(url) if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def remember_id(url: str, model_id: str) -> None:
    """Keep ``url``'s model id for a later start with the server down (best effort: a read-only data dir is fine)."""
    path = _record_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        if not isinstance(data, dict):
            data = {}
        if data.get(url) == model_id:
            return
        data[url] = model_id
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except (OSError, ValueError) as exc:
        log.debug("could not record the encoder server's model id: %s", exc)


def local_twin(model_id: str, n_threads: int | None = None, n_gpu_layers: int = -1) -> Embedder | None:
    """The in-process encoder on this machine's copy of ``model_id``'s weights (a GGUF in the models folder with
    that identity, :func:`~shelfwise.core.models.identity.local_copy`), or None when there is none."""
    from shelfwise.core.models.identity import local_copy

    folder = models_dir()
    path = local_copy(model_id, sorted(folder.glob("*.gguf")) if folder.is_dir() else [])
    if path is None:
        return None
    from shelfwise.core.models.encoders.embedder import Embedder as LlamaEmbedder

    return LlamaEmbedder(path, n_threads=n_threads, n_gpu_layers=n_gpu_layers)


class ServedEmbedder(EmbedderBase):
    """An :class:`~shelfwise.core.models.backend.Embedder`: the server while it answers, the same weights in this
    process once it does not (see the module doc). ``remote`` is None when the server was down at start."""

    def __init__(self, url: str, remote: RemoteEmbedder | None, model_id: str,
                 twin: Callable[[], Embedder | None]) -> None:
        self.url = url
        self._remote = remote
        self._model_id = model_id
        self._twin = twin
        self._local: Embedder | None = None
        self._lock = threading.Lock()
        self.window = remote.window if remote is not None else 256
        self.ran = f"on the encoder server at {url}"
        self.path: Path | None = None
        self.n_threads: int | None = None
        self.profile: EncoderProfile | None = remote.profile if remote is not None else None

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def legacy_ids(self) -> tuple[str, ...]:  # type: ignore[override]  # the server's, when it answered
        return self._remote.legacy_ids if self._remote is not None else ()

    def describe(self) -> str:
        if self._remote is not None:
            return f"{self._remote.describe()}, same weights in process if it stops answering"
        return f"{self._model_id} in process (the encoder server at {self.url} did not answer)"

    def _fallback(self, why: BackendError) -> Embedder:
        with self._lock:
            if self._local is None:
                local = self._twin()
                if local is None:
                    raise BackendError(
                        f"{as_sentence(why)} No copy of its model ({self._model_id}) is on this machine to stand in: "
                        "start the server (bash packaging/server.sh start), or name a local encoder with --embedder "
                        "(a library switched to another model is re-embedded)."
                    ) from why
                log.warning("%s Embedding in this process with the same weights (%s) from now on.",
                            as_sentence(why), self._model_id)
                self._local = local
                self.profile = local.profile
                self.ran = f"in process: the encoder server at {self.url} did not answer"
                remote, self._remote = self._remote, None
                if remote is not None:
                    remote.close()
            return self._local

    def _call(self, run: Callable[[Embedder], T]) -> T:
        remote = self._remote
        if remote is not None:
            try:
                return run(remote)
            except ServerUnavailable as exc:
                return run(self._fallback(exc))
        if self._local is None:
            raise BackendError(f"the encoder server at {self.url} is not available")
        return run(self._local)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._call(lambda e: e.embed(texts))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._call(lambda e: e.embed_queries(texts))

    def embed_query(self, text: str) -> np.ndarray:
        return self._call(lambda e: e.embed_query(text))

    def embed_queries_kept(self, texts: Sequence[str]) -> np.ndarray:
        return self._call(lambda e: e.embed_queries_kept(texts))

    def embed_one(self, text: str) -> np.ndarray:
        return self._call(lambda e: e.embed_one(text))

    def embed_query_and_documents(self, query: str, texts: Sequence[str]) -> np.ndarray:
        return self._call(lambda e: e.embed_query_and_documents(query, texts))

    def embed_documents(self, texts: Sequence[str], titles: Sequence[str | None] | None = None) -> np.ndarray:
        return self._call(lambda e: e.embed_documents(texts, titles))  # type: ignore[attr-defined]

    def document_tokens(self, texts: Sequence[str]) -> int:
        return self._call(lambda e: e.document_tokens(texts))

    def set_threads(self, n_threads: int) -> None:
        """Only the in-process fallback has threads to lend."""
        if self._local is not None:
            self._local.set_threads(n_threads)

    def close(self) -> None:
        for e in (self._remote, self._local):
            if e is not None:
                e.close()
        self._remote = self._local = None


def _normal(url: str) -> str:
    """``url`` as the pool writes it (``host:port`` -> ``http://host:port``, no ``/v1`` or trailing slash)."""
    parts = []
    for u in url.split(","):
        u = u.strip().rstrip("/").removesuffix("/v1")
        if u:
            parts.append(u if "://" in u else "http://" + u)
    return ",".join(parts)


def open_served_embedder(url: str, *, n_threads: int | None = None, n_gpu_layers: int = -1,
                         timeout: float = 300.0, retries: int = 2) -> ServedEmbedder:
    """The encoder server at ``url`` with its fallback (the module doc). Raises :class:`BackendError` when the
    server cannot be reached and this machine has no copy of the model it last served."""
    def twin(model_id: str) -> Callable[[], Embedder | None]:
        return lambda: local_twin(model_id, n_threads, n_gpu_layers)

    try:
        remote = RemoteEmbedder(url, timeout=timeout, retries=retries)
    except ServerUnavailable as exc:
        known = remembered_id(_normal(url))
        if known is None:
            raise BackendError(f"{as_sentence(exc)} Its model is not known here yet (it was never reached from "
                               "this machine), so no local copy can stand in.") from exc
        served = ServedEmbedder(url, None, known, twin(known))
        served._fallback(exc)
        return served
    remember_id(remote.url, remote.model_id)
    return ServedEmbedder(url, remote, remote.model_id, twin(remote.model_id))


__all__ = ["ServedEmbedder", "as_sentence", "local_twin", "open_served_embedder", "remember_id", "remembered_id"]
