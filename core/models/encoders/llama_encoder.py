"""One llama.cpp encoder for BERT-style GGUFs: load the model, make a multi-sequence context, encode many token
sequences in small packed batches and read one pooled row per sequence.

The sentence embedder (:mod:`shelfwise.core.models.encoders.embedder`, mean pooling: one ``n_embd`` vector per
text) and the relevance judge (:mod:`shelfwise.core.models.encoders.cross_encoder`, rank pooling: one logit per
pair) both run through :class:`EncoderContext`; only tokenization and what they do with the rows differ.

Packing (:func:`pack`, pure): consecutive sequences share one ``llama_encode`` while their tokens fit
``batch_tokens`` and their number ``max_seqs``. An encoder needs every sequence inside one micro-batch, so the
context's ``n_ctx`` = ``n_batch`` = ``n_ubatch`` = ``batch_tokens``; attention cost grows with the square of a packed
batch, so batches stay small.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Self

import numpy as np

from shelfwise.core.models.backend import BackendError, default_threads
from shelfwise.core.models.gguf_meta import require_kind
from shelfwise.core.models.llama.logs import route_llama_log

if TYPE_CHECKING:
    import llama_cpp


def pack(lengths: Sequence[int], batch_tokens: int, max_seqs: int) -> Iterator[list[int]]:
    """Indices of consecutive sequences grouped so each group has at most ``batch_tokens`` tokens (a longer single
    sequence gets a group of its own) and at most ``max_seqs`` sequences."""
    group: list[int] = []
    used = 0
    for i, n in enumerate(lengths):
        if group and (used + n > batch_tokens or len(group) >= max_seqs):
            yield group
            group, used = [], 0
        group.append(i)
        used += n
    if group:
        yield group


def load_model(path: Path, what: str, n_gpu_layers: int = -1) -> llama_cpp.llama_model_p:
    """Load a GGUF (on the GPU when the build can: ``bindings.gpu_layers``) with llama.cpp's log routed to ours; a
    clear BackendError when it cannot be, or when its header says it is not an encoder
    (:func:`~shelfwise.core.models.gguf_meta.require_kind`). A load of the same file started earlier on another
    thread (``shelfwise ask``: :mod:`~shelfwise.core.models.encoders.preload`) is waited for and taken instead."""
    from shelfwise.core.models.encoders.preload import take
    from shelfwise.core.models.llama.bindings import gpu_layers, llama_cpp

    require_kind(Path(path), "encoder", what)

    route_llama_log()  # llama.cpp's log to the log file (stderr only with --verbose)
    layers = gpu_layers(n_gpu_layers)
    preloaded = take(Path(path), layers)
    if preloaded is not None:
        return preloaded
    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_default_params()
    params.n_gpu_layers = layers
    model = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
    if not model:
        raise BackendError(f"llama.cpp could not load the {what} {path}")
    return model


class EncoderContext:
    """A llama.cpp context over a loaded encoder model, with its own token batch.

    ``pooling`` is a ``LLAMA_POOLING_TYPE_*`` (MEAN for sentence vectors, RANK for a cross-encoder); ``width`` is how
    many floats each sequence's pooled row has (``n_embd`` for MEAN, the classifier outputs for RANK). Not
    thread-safe: the owner serialises calls. ``n_threads`` can be changed between calls (:meth:`set_threads`).
    """

    def __init__(self, model: llama_cpp.llama_model_p, *, pooling: int, width: int, batch_tokens: int, max_seqs: int,
                 n_threads: int | None = None, what: str = "encoder") -> None:
        from shelfwise.core.models.llama.bindings import llama_cpp

        self._ll = llama_cpp
        self.what = what
        self.width = width
        self.batch_tokens = batch_tokens
        self.max_seqs = max(1, min(max_seqs, batch_tokens, llama_cpp.llama_max_parallel_sequences()))
        self.n_threads = n_threads or min(4, default_threads())
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx = batch_tokens
        cparams.n_batch = batch_tokens
        cparams.n_ubatch = batch_tokens  # an encoder needs every sequence inside one micro-batch
        cparams.n_seq_max = self.max_seqs
        cparams.kv_unified = True
        cparams.embeddings = True
        cparams.pooling_type = pooling
        cparams.n_threads = self.n_threads
        cparams.n_threads_batch = self.n_threads
        self._batch: llama_cpp.llama_batch | None = None
        self._ctx = llama_cpp.llama_init_from_model(model, cparams)
        if not self._ctx:
            raise BackendError(f"llama.cpp could not create a context for the {what}")
        self._batch = llama_cpp.llama_batch_init(batch_tokens, 0, 1)
        self._token = np.ctypeslib.as_array(self._batch.token, shape=(batch_tokens,))
        self._pos = np.ctypeslib.as_array(self._batch.pos, shape=(batch_tokens,))
        self._n_seq = np.ctypeslib.as_array(self._batch.n_seq_id, shape=(batch_tokens,))
        self._logits = np.ctypeslib.as_array(self._batch.logits, shape=(batch_tokens,))
        self._n_seq[:] = 1
        self._logits[:] = 1

    @property
    def closed(self) -> bool:
        return self._ctx is None

    def set_threads(self, n_threads: int) -> None:
        """Threads for the next calls (e.g. fewer while a parse worker shares the cores)."""
        if self._ctx is not None and n_threads != self.n_threads:
            self._ll.llama_set_n_threads(self._ctx, n_threads, n_threads)
            self.n_threads = n_threads

    def groups(self, seqs: Sequence[Sequence[int]]) -> Iterator[list[int]]:
        return pack([len(s) for s in seqs], self.batch_tokens, self.max_seqs)

    def encode_rows(self, seqs: Sequence[Sequence[int]], rows: Sequence[int], out: np.ndarray) -> None:
        """One ``llama_encode`` of ``seqs[i] for i in rows`` (one sequence each); their pooled rows into ``out[i]``."""
        ll, batch = self._ll, self._batch
        if self._ctx is None or batch is None:  # closed: both are freed together
            raise BackendError(f"the {self.what} is closed")
        n = 0
        for s, i in enumerate(rows):
            toks = seqs[i]
            k = len(toks)
            if n + k > self.batch_tokens:
                raise BackendError(f"{self.what}: a batch of {n + k} tokens exceeds its {self.batch_tokens}")
            self._token[n:n + k] = toks
            self._pos[n:n + k] = np.arange(k, dtype=np.int32)
            seq_id = batch.seq_id
            for p in range(n, n + k):
                seq_id[p][0] = s
            n += k
        batch.n_tokens = n
        rc = ll.llama_encode(self._ctx, batch)
        if rc != 0:
            raise BackendError(f"llama_encode failed ({rc}) on {len(rows)} sequences / {n} tokens ({self.what})")
        for s, i in enumerate(rows):
            ptr = ll.llama_get_embeddings_seq(self._ctx, s)
            if not ptr:
                raise BackendError(f"llama.cpp returned no pooled output for the {self.what} (pooling missing?)")
            out[i] = np.ctypeslib.as_array(ptr, shape=(self.width,))

    def encode_sequences(self, seqs: Sequence[Sequence[int]]) -> np.ndarray:
        """Pooled rows of every sequence, float32, shape ``(len(seqs), width)``, in input order (not normalised)."""
        out = np.zeros((len(seqs), self.width), dtype=np.float32)
        for rows in self.groups(seqs):
            self.encode_rows(seqs, rows, out)
        return out

    def close(self) -> None:
        """Free the batch and the context (idempotent; the model is the owner's)."""
        if self._batch is not None:
            self._ll.llama_batch_free(self._batch)
            self._batch = None
        if self._ctx is not None:
            self._ll.llama_free(self._ctx)
            self._ctx = None


class LoadedEncoder:
    """What the sentence embedder and the relevance judge share once their model is loaded: the llama.cpp module,
    the model and its vocabulary, an :class:`EncoderContext`, a lock that serialises calls, tokenizing with the
    vocabulary, and freeing the context and the model exactly once (``close``, ``with``, or when collected)."""

    _vocab: llama_cpp.llama_vocab_p

    def __init__(self, what: str) -> None:
        """What :meth:`close` frees, set first (a subclass calls this before loading, so that closing an object whose
        loading failed half-way frees what was made)."""
        from shelfwise.core.models.llama.bindings import llama_cpp

        self._ll: ModuleType = llama_cpp
        self._what = what  # "embedder" / "judge": named in the errors
        self._lock = threading.Lock()
        self._model: llama_cpp.llama_model_p | None = None
        self._enc: EncoderContext | None = None

    def _raw_tokens(self, data: bytes, add_special: bool) -> list[int]:
        """The vocabulary's token ids for UTF-8 ``data`` (with the model's special tokens when ``add_special``)."""
        if self._model is None:  # the vocabulary went with the model: tokenizing would crash the process
            raise BackendError(f"{self._what} is closed")
        n_max = max(8, len(data) + 8)
        while True:
            buf = (self._ll.llama_token * n_max)()
            n = self._ll.llama_tokenize(self._vocab, data, len(data), buf, n_max, add_special, False)
            if n >= 0:
                return list(buf[:n])
            n_max = -n

    def close(self) -> None:
        """Free the llama.cpp context and model (idempotent; safe on an object whose loading failed)."""
        with self._lock:
            if self._enc is not None:
                self._enc.close()
            self._enc = None
            if self._model:
                self._ll.llama_model_free(self._model)
            self._model = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown may have torn llama_cpp down already
            self.close()


def meta_str(model: object, key: str) -> str:
    """A string value of a loaded model's GGUF metadata ("" when absent; booleans read "true"/"false")."""
    import ctypes

    from shelfwise.core.models.llama.bindings import llama_cpp

    buf = ctypes.create_string_buffer(256)
    n = llama_cpp.llama_model_meta_val_str(model, key.encode(), buf, len(buf))
    return buf.value.decode("utf-8", "replace") if n >= 0 else ""


__all__ = ["EncoderContext", "LoadedEncoder", "load_model", "meta_str", "pack"]
