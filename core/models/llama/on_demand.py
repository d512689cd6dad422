"""The in-process answer model, loaded the first time it is asked to read or write.

A question that only searches (``ask --no-generate``, ``--no-answer``, an embedding readout) needs of the answer
model only what it is (its identity, which calibration and the adaptive threshold are keyed by), its context (a
question may use a share of it) and, for a question longer than that share in characters, its token count. The
identity comes from the file (:func:`~shelfwise.core.models.identity.model_identity`), the context is the one the
engine is given, and tokens are counted by the model's vocabulary alone (:class:`~.engine.Vocabulary`, no
weights); the weights and the context are loaded by the first call that reads or writes (``binary``,
``likelihood``, ``generate``, ``chat_template``, ``meta``, ``info``...), once, under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Generator, Sequence
from pathlib import Path

from shelfwise.core.json_types import JSONObject
from shelfwise.core.models.backend import (
    BackendBase,
    BackendError,
    CancelCheck,
    Generation,
    Likelihoods,
    Scores,
)
from shelfwise.core.models.found import ollama_chat
from shelfwise.core.models.gguf_meta import require_kind
from shelfwise.core.models.identity import model_identity
from shelfwise.core.models.llama.backend import LlamaBackend
from shelfwise.core.models.llama.bundled import resolve_model
from shelfwise.core.models.llama.engine import N_CTX, Vocabulary, legacy_ids_of


class OnDemandLlama(BackendBase):
    """:class:`~shelfwise.core.models.backend.DecisionBackend` on the in-process model, loaded on first use (see
    the module doc). A missing file or a file of the wrong kind is refused here, as the engine refuses it."""

    name = "llama.cpp"

    def __init__(self, model_path: str | Path | None = None, *, n_gpu_layers: int = -1,
                 n_threads: int | None = None) -> None:
        path = resolve_model(model_path)
        require_kind(path, "generator", "answer model")
        self.model_path: Path = path
        self._model_id = model_identity(path)
        self.legacy_ids = legacy_ids_of(path)
        self._n_gpu_layers = n_gpu_layers
        self._n_threads = n_threads
        self._backend: LlamaBackend | None = None
        self._vocabulary: Vocabulary | None = None
        self._closed = False
        self._lock = threading.Lock()

    @property
    def loaded(self) -> LlamaBackend:
        """The model with its context, loaded now if it is not yet."""
        with self._lock:
            if self._closed:
                raise BackendError("the backend is closed")
            if self._backend is None:
                self._backend = LlamaBackend(self.model_path, n_ctx=N_CTX, n_gpu_layers=self._n_gpu_layers,
                                             n_threads=self._n_threads)
                if self._vocabulary is not None:  # the model counts tokens from now on
                    self._vocabulary.close()
                    self._vocabulary = None
            return self._backend

    @property
    def is_loaded(self) -> bool:
        return self._backend is not None

    # -- known without loading ----------------------------------------------------------------------------------
    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def n_ctx(self) -> int:  # type: ignore[override]  # a property here, a plain attribute on the base
        return self._backend.n_ctx if self._backend is not None else N_CTX

    def count_tokens(self, text: str) -> int:
        with self._lock:
            if self._closed:
                raise BackendError("the backend is closed")
            backend = self._backend
            if backend is None and self._vocabulary is None:
                self._vocabulary = Vocabulary(self.model_path)
            vocabulary = self._vocabulary
        if backend is not None:
            return backend.count_tokens(text)
        assert vocabulary is not None
        return vocabulary.count_tokens(text)

    def made_for_chat(self) -> bool | None:
        return ollama_chat(self.model_path)

    # -- read or written by the model -----------------------------------------------------------------------------
    def binary(self, context: str, questions: Sequence[str], *, yes: str = " Yes", no: str = " No",
               cancel: CancelCheck | None = None) -> Scores:
        return self.loaded.binary(context, questions, yes=yes, no=no, cancel=cancel)

    def likelihood(self, context: str, candidates: Sequence[str], query: str, *,
                   cancel: CancelCheck | None = None) -> Likelihoods:
        return self.loaded.likelihood(context, candidates, query, cancel=cancel)

    def continuations(self, context: str, options: Sequence[str], *,
                      cancel: CancelCheck | None = None) -> Likelihoods:
        return self.loaded.continuations(context, options, cancel=cancel)

    def generate(self, prompt: str, *, max_tokens: int = 256, stop: Sequence[str] = (), temperature: float = 0.0,
                 cancel: CancelCheck | None = None, repeat_penalty: float = 1.0) -> Generator[str, None, Generation]:
        return self.loaded.generate(prompt, max_tokens=max_tokens, stop=stop, temperature=temperature,
                                    cancel=cancel, repeat_penalty=repeat_penalty)

    def chat_template(self) -> str | None:
        return self.loaded.chat_template()

    def chat_prompt(self, user: str) -> str | None:
        return self.loaded.chat_prompt(user)

    def meta(self, key: str) -> str | None:
        return self.loaded.meta(key)

    def info(self) -> JSONObject:
        return self.loaded.info()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for part in (self._backend, self._vocabulary):
                if part is not None:
                    part.close()
            self._backend = None
            self._vocabulary = None

    def __enter__(self) -> OnDemandLlama:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
