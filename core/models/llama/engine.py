"""The llama.cpp engine under the decision backend: model, one multi-sequence context, tokens, prefix reuse.

:class:`LlamaEngine` loads a GGUF with llama-cpp-python's low-level API and creates its own context (the
high-level ``Llama`` class has no ``n_seq_max``): unified KV cache, ``n_seq_max`` sequences, ``swa_full``.
Sequence 0 holds the last shared prefix; :meth:`LlamaEngine._sync_prefix` keeps the longest common token prefix
(``llama_memory_seq_rm(mem, 0, L, -1)``) and evaluates only the new tokens.

Gemma 3 interleaves sliding-window attention (SWA) layers. In the SWA cache, a cell owned by one sequence and out
of that sequence's window may be reclaimed for new tokens; a trimmed prefix whose window before the cut was
reclaimed would attend to garbage, so it is re-evaluated instead (checked with ``llama_memory_seq_pos_min``, as
llama.cpp's server does). ``swa_full=True`` (default) sizes the SWA cache like the full one; with a unified cache
and 64 sequences llama.cpp chooses that size anyway (``n_swa * n_seq_max + n_ubatch`` > ``n_ctx``), so it costs
no memory here, and it keeps a smaller ``n_seq_max`` from shrinking the window cache. Measured: a listing kept
in sequence 0 across queries gives bit-identical scores to the same listing evaluated fresh.

Threading: public calls take the instance lock (calls from several threads are serialised); the intended use is
one worker thread.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Self

from shelfwise.core.json_types import JSONObject
from shelfwise.core.models.backend import BackendBase, BackendError, Cost, default_threads
from shelfwise.core.models.chat import render_user_turn
from shelfwise.core.models.found import ollama_chat
from shelfwise.core.models.gguf_meta import require_kind
from shelfwise.core.models.identity import model_identity
from shelfwise.core.models.llama.batch import TokenBatch
from shelfwise.core.models.llama.bindings import gpu_layers, llama_cpp
from shelfwise.core.models.llama.bundled import BUNDLED_FILENAME, resolve_model
from shelfwise.core.models.llama.logs import LOGGER as LLAMA_LOGGER
from shelfwise.core.models.llama.logs import route_llama_log
from shelfwise.core.models.llama.state_cache import StateCache
from shelfwise.core.models.prompts import Limits, PlanError, common_prefix_len, plan_requests

LOG = logging.getLogger(__name__)
_backend_lock = threading.Lock()
_backend_ready = False


def _init_llama(verbose: bool) -> None:
    global _backend_ready
    with _backend_lock:
        route_llama_log()  # llama.cpp's log to the shelfwise.llama logger (log file; stderr only if verbose)
        if verbose:
            logging.getLogger(LLAMA_LOGGER).setLevel(logging.DEBUG)
        if not _backend_ready:
            llama_cpp.llama_backend_init()
            _backend_ready = True


def gpu_offload_supported() -> bool:
    """Whether the installed llama.cpp build can offload layers to a GPU (CUDA, Vulkan, Metal...)."""
    return bool(llama_cpp.llama_supports_gpu_offload())


N_CTX = 8192  # the context the answer model is given (tokens; the question's budget is a share of it)


def legacy_ids_of(path: Path) -> tuple[str, ...]:
    """The names older releases keyed this answer model's calibration and threshold by: before the content
    identity, calibration was keyed by the backend's name whatever file was loaded (read for the bundled model
    only, which those calibrations were made with) and the threshold by the file name."""
    return (path.name, *(("llama.cpp",) if path.name == BUNDLED_FILENAME else ()))


def tokenize_with(vocab: llama_cpp.llama_vocab_p, text: str, add_bos: bool, special: bool) -> list[int]:
    """Token ids of ``text`` in ``vocab`` (a lone surrogate, bytes that were not UTF-8, becomes "?")."""
    raw = text.encode("utf-8", errors="replace")
    cap = len(raw) + 8
    buf = (llama_cpp.llama_token * cap)()
    n = llama_cpp.llama_tokenize(vocab, raw, len(raw), buf, cap, add_bos, special)
    if n < 0:
        cap = -n
        buf = (llama_cpp.llama_token * cap)()
        n = llama_cpp.llama_tokenize(vocab, raw, len(raw), buf, cap, add_bos, special)
    return list(buf[:n])


class Vocabulary:
    """Only the tokenizer of a GGUF (llama.cpp's ``vocab_only`` load: no weights, no context): the tokens a text
    is to the model, counted without loading the model."""

    def __init__(self, path: Path) -> None:
        _init_llama(False)
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        params.n_gpu_layers = 0
        self._model: llama_cpp.llama_model_p | None = llama_cpp.llama_model_load_from_file(str(path).encode(), params)
        if not self._model:
            raise BackendError(f"llama.cpp could not read the vocabulary of {path}: the file is corrupt or "
                               "truncated, or its architecture is not supported by the installed llama-cpp-python")
        self._vocab = llama_cpp.llama_model_get_vocab(self._model)
        self._lock = threading.Lock()

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as :meth:`LlamaEngine.count_tokens` counts them (no BOS, special tokens as text)."""
        with self._lock:
            if self._model is None:
                raise BackendError("the vocabulary is closed")
            return len(tokenize_with(self._vocab, text, False, False))

    def close(self) -> None:
        with self._lock:
            if self._model:
                llama_cpp.llama_model_free(self._model)
                self._model = None

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown or a half-built instance
            self.close()


class LlamaEngine(BackendBase):
    """One GGUF model and one multi-sequence llama.cpp context (see the module doc).

    ``model_path=None`` uses the bundled Gemma 3 270M. ``max_outputs`` caps the rows of logits per request (each
    row is n_vocab floats: 1 MB for Gemma's 262k vocabulary). ``cache_bytes`` bounds the LRU cache of saved
    per-candidate KV states (likelihood mode). ``flash_attn=None`` lets llama.cpp decide. Use as a context manager
    or call :meth:`close`; missing/corrupt model files raise :class:`BackendError`.
    """

    name = "llama.cpp"
    model_path: Path

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = N_CTX,
        n_batch: int = 2048,
        n_ubatch: int = 512,
        n_seq_max: int = 64,
        n_threads: int | None = None,
        n_gpu_layers: int = -1,
        cache_bytes: int = 256 * 1024 * 1024,
        max_outputs: int = 256,
        swa_full: bool = True,
        flash_attn: bool | None = None,
        verbose: bool = False,
    ) -> None:
        self._model: llama_cpp.llama_model_p | None = None
        self._ctx: llama_cpp.llama_context_p | None = None
        self._batch: TokenBatch | None = None
        self._lock = threading.Lock()
        self.model_path = resolve_model(model_path)
        require_kind(self.model_path, "generator", "answer model")  # an encoder here answered nothing, silently
        self._model_id = model_identity(self.model_path)
        self.legacy_ids = legacy_ids_of(self.model_path)
        if n_seq_max < 2:
            raise BackendError("n_seq_max must be >= 2 (sequence 0 holds the shared prefix)")
        _init_llama(verbose)
        self.n_threads = n_threads or default_threads()
        self.n_gpu_layers = gpu_layers(n_gpu_layers)  # -1: all on a GPU build, none on a CPU one
        mparams = llama_cpp.llama_model_default_params()
        mparams.n_gpu_layers = self.n_gpu_layers
        self._model = llama_cpp.llama_model_load_from_file(str(self.model_path).encode(), mparams)
        if not self._model:
            raise BackendError(
                f"llama.cpp could not load the model {self.model_path}: the file is corrupt or truncated, or "
                "its architecture is not supported by the installed llama-cpp-python"
            )
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx = n_ctx
        cparams.n_batch = n_batch
        cparams.n_ubatch = min(n_ubatch, n_batch)
        cparams.n_seq_max = n_seq_max
        cparams.n_threads = self.n_threads
        cparams.n_threads_batch = self.n_threads
        cparams.kv_unified = True
        cparams.swa_full = swa_full
        cparams.no_perf = True
        if flash_attn is not None:
            cparams.flash_attn_type = (
                llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED
                if flash_attn
                else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
            )
        self._ctx = llama_cpp.llama_init_from_model(self._model, cparams)
        if not self._ctx:
            llama_cpp.llama_model_free(self._model)
            self._model = None
            raise BackendError(f"llama.cpp could not create a context (n_ctx={n_ctx}, n_seq_max={n_seq_max})")
        self._mem = llama_cpp.llama_get_memory(self._ctx)
        self._vocab = llama_cpp.llama_model_get_vocab(self._model)
        self.n_vocab = llama_cpp.llama_vocab_n_tokens(self._vocab)
        self.n_ctx = llama_cpp.llama_n_ctx(self._ctx)
        self.n_batch = n_batch
        self.n_seq_max = llama_cpp.llama_n_seq_max(self._ctx)
        self.n_swa = llama_cpp.llama_model_n_swa(self._model)
        self.max_outputs = max(1, max_outputs)
        self.cache = StateCache(cache_bytes)
        self._batch = TokenBatch(n_batch)
        self._seq0: list[int] = []  # tokens whose KV is in sequence 0
        self._closed = False

    # ------------------------------------------------------------------ lifecycle and metadata

    def close(self) -> None:
        """Free the context and the model (idempotent)."""
        with self._lock:
            if self._batch is not None:
                self._batch.free()
                self._batch = None
            if self._ctx:
                llama_cpp.llama_free(self._ctx)
                self._ctx = None
            if self._model:
                llama_cpp.llama_model_free(self._model)
                self._model = None
            if hasattr(self, "cache"):
                self.cache.clear()
            self._closed = True

    def reset(self) -> None:
        """Forget every reusable state (the prefix in sequence 0 and the candidate cache): the next call is cold."""
        with self._lock:
            self._check_open()
            llama_cpp.llama_memory_clear(self._mem, True)
            self._seq0 = []
            self.cache.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown or a half-built instance
            self.close()

    def _check_open(self) -> None:
        if self._ctx is None:
            raise BackendError("the backend is closed")

    @property
    def _live(self) -> llama_cpp.llama_context_p:
        """The context, which must still be open."""
        if self._ctx is None:
            raise BackendError("the backend is closed")
        return self._ctx

    @property
    def model_id(self) -> str:
        """The GGUF's identity (:func:`~shelfwise.core.models.identity.model_identity`): another file loaded is
        another model."""
        return self._model_id

    def meta(self, key: str) -> str | None:
        """A GGUF metadata value as a string (e.g. ``general.name``), or None."""
        buf = ctypes.create_string_buffer(4096)
        n = llama_cpp.llama_model_meta_val_str(self._model, key.encode(), buf, len(buf))
        if n < 0:
            return None
        if n >= len(buf):
            buf = ctypes.create_string_buffer(n + 1)
            llama_cpp.llama_model_meta_val_str(self._model, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8", errors="replace")

    def chat_template(self) -> str | None:
        """The model's chat template (GGUF ``tokenizer.chat_template``), or None."""
        raw = llama_cpp.llama_model_chat_template(self._model, None)
        return raw.decode("utf-8", errors="replace") if raw else None

    def chat_prompt(self, user: str) -> str | None:
        """``user`` as one turn of the GGUF's own chat template, the model's answer opened (``render_user_turn``:
        Jinja, as llama-cpp-python renders it); None without a template or when it does not render. The template
        gets no BOS text: :meth:`generate` adds the model's BOS when it tokenizes."""
        template = self.chat_template()
        if not template:
            return None
        eos = llama_cpp.llama_vocab_eos(self._vocab)
        try:
            return render_user_turn(template, user, eos=self.piece(eos, special=True).decode("utf-8", "replace")
                                    if eos >= 0 else "")
        except ValueError as exc:
            LOG.info("the chat template of %s does not render (%s); the family's turn markers are used",
                     self.model_path.name, exc)
            return None

    def made_for_chat(self) -> bool | None:
        """Whether Ollama keeps this file as a chat model (``ollama_chat``); None for a file of no Ollama store."""
        return ollama_chat(self.model_path)

    def info(self) -> JSONObject:
        desc = ctypes.create_string_buffer(256)
        llama_cpp.llama_model_desc(self._model, desc, len(desc))
        return {
            "backend": self.name,
            "model": self.meta("general.name") or self.model_path.stem,
            "description": desc.value.decode("utf-8", errors="replace"),
            "path": str(self.model_path),
            "n_params": int(llama_cpp.llama_model_n_params(self._model)),
            "n_ctx": self.n_ctx,
            "n_seq_max": self.n_seq_max,
            "n_threads": self.n_threads,
            "n_gpu_layers": self.n_gpu_layers,
            "gpu_offload_supported": gpu_offload_supported(),
        }

    # ------------------------------------------------------------------ tokens

    def _tok(self, text: str, add_bos: bool, special: bool = False) -> list[int]:
        return tokenize_with(self._vocab, text, add_bos, special)

    def tokenize(self, text: str, add_bos: bool = False, special: bool = False) -> list[int]:
        """Token ids of ``text``. Decision modes never parse special tokens inside texts (documents cannot inject
        control tokens); ``generate`` does, so chat-template markers work."""
        with self._lock:
            self._check_open()
            return self._tok(text, add_bos, special)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenize(text))

    def piece(self, token: int, special: bool = False) -> bytes:
        """The bytes of ``token``; a control token (``<|im_end|>``) is rendered only when ``special``."""
        buf = ctypes.create_string_buffer(64)
        n = llama_cpp.llama_token_to_piece(self._vocab, token, buf, len(buf), 0, special)
        if n < 0:
            buf = ctypes.create_string_buffer(-n)
            n = llama_cpp.llama_token_to_piece(self._vocab, token, buf, len(buf), 0, special)
        return buf.raw[:n]

    def _single_token(self, word: str, role: str) -> int:
        toks = self._tok(word, add_bos=False)
        if len(toks) != 1:
            raise BackendError(
                f"the {role} word {word!r} is {len(toks)} tokens for this model ({toks}); it must be exactly one"
            )
        return toks[0]

    # ------------------------------------------------------------------ execution primitives

    def _decode(self) -> None:
        assert self._batch is not None
        rc = llama_cpp.llama_decode(self._ctx, self._batch.struct)
        if rc != 0:
            llama_cpp.llama_memory_clear(self._mem, True)
            self._seq0 = []
            raise BackendError(
                f"llama_decode failed (code {rc}) on a batch of {self._batch.n} tokens "
                f"(n_ctx {self.n_ctx}, n_batch {self.n_batch})"
            )

    def _clear_seqs(self, n: int) -> None:
        for s in range(1, n + 1):
            llama_cpp.llama_memory_seq_rm(self._mem, s, -1, -1)

    def _sync_prefix(self, tokens: Sequence[int], need_logits: bool) -> tuple[int, int, int]:
        """Make sequence 0 hold exactly ``tokens``, re-using the longest common prefix already there.

        Returns (tokens evaluated, tokens reused, batch index of the last token's logits or -1).
        """
        assert self._batch is not None
        if len(tokens) >= self.n_ctx:
            raise BackendError(f"the prompt is {len(tokens)} tokens; the model's context holds {self.n_ctx}")
        keep = common_prefix_len(self._seq0, tokens)
        if need_logits and keep == len(tokens):
            keep -= 1  # the last token must be evaluated to get its logits
        if keep < len(self._seq0):
            if not llama_cpp.llama_memory_seq_rm(self._mem, 0, keep, -1):
                keep = 0
            # SWA layers need the window before `keep`; cells that left the window may have been reclaimed.
            pos_min = llama_cpp.llama_memory_seq_pos_min(self._mem, 0)
            if keep > 0 and self.n_swa > 0 and pos_min > max(0, keep - self.n_swa):
                keep = 0
            if keep == 0:
                llama_cpp.llama_memory_seq_rm(self._mem, 0, -1, -1)
        self._seq0 = list(tokens[:keep])
        last = -1
        pos = keep
        while pos < len(tokens):
            chunk = tokens[pos : pos + self.n_batch]
            self._batch.clear()
            final = pos + len(chunk) == len(tokens)
            self._batch.add(chunk, pos, 0, -1 if (need_logits and final) else None)
            self._decode()
            self._seq0.extend(chunk)
            pos += len(chunk)
            last = len(chunk) - 1
        return len(tokens) - keep, keep, last

    def _limits(self) -> Limits:
        return Limits(self.n_ctx, self.n_batch, self.n_seq_max - 1, self.max_outputs)

    def _plan(
        self, prefix_len: int, lens: list[int], outputs: list[int], cells: list[int] | None = None
    ) -> list[list[int]]:
        try:
            return plan_requests(prefix_len, lens, outputs, self._limits(), cells)
        except PlanError as exc:
            raise BackendError(str(exc)) from exc

    def prompt_eval(self, tokens: Sequence[int], outputs: int = 1) -> Cost:
        """Evaluate ``tokens`` as one plain prompt from an empty cache: the throughput reference the benchmark
        compares the decision modes with. ``outputs`` rows of logits are computed, spread evenly over the prompt
        (the last token always has one); chunks hold at most ``n_batch`` tokens and ``max_outputs`` rows.
        Leaves the tokens in sequence 0 (reusable as a prefix)."""
        t0 = time.perf_counter()
        n = len(tokens)
        outputs = max(1, min(outputs, n))
        marked = {n - 1 - (i * n) // outputs for i in range(outputs)}
        with self._lock:
            self._check_open()
            assert self._batch is not None
            if n >= self.n_ctx:
                raise BackendError(f"the prompt is {n} tokens; the model's context holds {self.n_ctx}")
            llama_cpp.llama_memory_clear(self._mem, True)
            self._seq0 = []
            requests = pos = 0
            while pos < n:
                end = min(n, pos + self.n_batch)
                rows = [i for i in range(pos, end) if i in marked][: self.max_outputs]
                if len(rows) == self.max_outputs:
                    end = rows[-1] + 1
                self._batch.clear()
                self._batch.add(tokens[pos:end], pos, 0)
                for i in rows:
                    self._batch.set_output(i - pos)
                self._decode()
                self._seq0.extend(tokens[pos:end])
                requests += 1
                pos = end
        return Cost(requests=requests, tokens=n, seconds=time.perf_counter() - t0)
