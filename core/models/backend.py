"""The decision-model protocol every backend implements (llama.cpp in-process, remote server, deterministic fake).

A decision model generates no tokens to decide: one forward pass over a shared context returns a probability (or
a log-likelihood) per candidate. Everything above this module (navigation, answers, adaptive retrieval, the GUI)
talks to a :class:`DecisionBackend` only.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from shelfwise.core.environment import variable
from shelfwise.core.json_types import JSONObject


@dataclass
class Cost:
    """What a call cost: requests sent (forward passes / HTTP calls), tokens actually evaluated, wall seconds."""

    requests: int = 0
    tokens: int = 0
    seconds: float = 0.0
    reused_tokens: int = 0  # tokens whose KV state came from a cache instead of being evaluated
    judged: int = 0  # (query, candidate) pairs scored by the relevance judge (not generative-model tokens)

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.requests + other.requests,
            self.tokens + other.tokens,
            self.seconds + other.seconds,
            self.reused_tokens + other.reused_tokens,
            self.judged + other.judged,
        )

    def add(self, other: Cost) -> None:
        self.requests += other.requests
        self.tokens += other.tokens
        self.seconds += other.seconds
        self.reused_tokens += other.reused_tokens
        self.judged += other.judged


@dataclass
class Scores:
    """One value per question/option, in input order, and the cost of computing them."""

    values: list[float]
    cost: Cost = field(default_factory=Cost)


@dataclass
class Likelihoods:
    """Per candidate: log P(query | context, candidate) summed over the query's tokens, its mean, and token count."""

    total: list[float]
    mean: list[float]
    n_tokens: int
    cost: Cost = field(default_factory=Cost)


@dataclass
class Generation:
    """Result of :meth:`DecisionBackend.generate` once the stream is exhausted."""

    text: str
    cost: Cost = field(default_factory=Cost)
    stopped_by: str = "length"  # "length" | "stop" | "eos" | "cancelled"


class BackendError(RuntimeError):
    """A backend cannot do what was asked (missing/corrupt model, readout word not one token, server down...)."""


class Cancelled(RuntimeError):
    """Raised between requests when the caller's cancel check returns True."""


CancelCheck = Callable[[], bool]


def check_cancel(cancel: CancelCheck | None, message: str = "cancelled") -> None:
    """Raise :class:`Cancelled` if the caller's cancel check says so (called between requests)."""
    if cancel is not None and cancel():
        raise Cancelled(message)


@runtime_checkable
class DecisionBackend(Protocol):
    """The protocol. Implementations: ``models/llama/backend.py``, ``models/fake.py``, ``models/remote/backend.py``;
    each derives from :class:`BackendBase`, which declares the capabilities a backend may lack with their
    defaults."""

    name: str

    @property
    def n_ctx(self) -> int:
        """The model's context in tokens; 0 when not known (a server)."""
        ...

    @property
    def max_concurrency(self) -> int:
        """Requests of one level worth sending at once (1: one after another)."""
        ...

    @property
    def model_path(self) -> Path | None:
        """The GGUF file when the model runs in this process."""
        ...

    @property
    def model_id(self) -> str:
        """The model's identity: what calibration and the adaptive threshold are keyed by (see BackendBase)."""
        ...

    @property
    def legacy_ids(self) -> tuple[str, ...]:
        """Names older releases stored this model's calibration and threshold under (read when nothing is stored
        under ``model_id``)."""
        ...

    def binary(
        self, context: str, questions: Sequence[str], *, yes: str = " Yes", no: str = " No",
        cancel: CancelCheck | None = None,
    ) -> Scores:
        """P(yes | context, question_i) for each question, normalised over the yes/no readout only."""
        ...

    def likelihood(
        self, context: str, candidates: Sequence[str], query: str, *, cancel: CancelCheck | None = None
    ) -> Likelihoods:
        """log P(query | context + candidate_i) per candidate (sum and mean over the query's tokens)."""
        ...

    def continuations(
        self, context: str, options: Sequence[str], *, cancel: CancelCheck | None = None
    ) -> Likelihoods:
        """log P(option_i | context) per option, summed over the option's own tokens and per token (``mean``
        divides by each option's count; ``n_tokens`` is 0). :class:`BackendError` where the backend cannot read
        it (:class:`BackendBase`'s default)."""
        ...

    def generate(
        self, prompt: str, *, max_tokens: int = 256, stop: Sequence[str] = (), temperature: float = 0.0,
        cancel: CancelCheck | None = None, repeat_penalty: float = 1.0,
    ) -> Generator[str, None, Generation]:
        """Stream text pieces. ``repeat_penalty`` > 1 makes tokens already generated in this call less likely
        (llama.cpp's rule: a positive logit divided by it, a negative one multiplied). The generator's return value
        (``StopIteration.value``) is a :class:`Generation`."""
        ...

    def count_tokens(self, text: str) -> int:
        ...

    def chat_template(self) -> str | None:
        """The model's chat template (GGUF ``tokenizer.chat_template``), or None."""
        ...

    def chat_prompt(self, user: str) -> str | None:
        """One user turn and the opening of the model's answer in the model's own chat template (the GGUF's
        ``tokenizer.chat_template``, rendered); None when the model has none or it cannot be rendered."""
        ...

    def made_for_chat(self) -> bool | None:
        """What the place the model came from says: True when it is kept there as a chat model (Ollama prompts it
        with a template of turns), False when as a base model, None when it does not say (its names decide)."""
        ...

    def meta(self, key: str) -> str | None:
        """A metadata value of the model (GGUF ``general.name``...), or None."""
        ...

    def info(self) -> JSONObject:
        """What ``shelfwise models`` shows of the model (its name at least; the file, parameters, server...)."""
        ...

    def close(self) -> None:
        """Free the model or the connections; idempotent. A backend holding a model in this process raises
        :class:`BackendError` when called after it."""
        ...


class BackendBase:
    """The capabilities of :class:`DecisionBackend` a backend may lack, declared with their defaults; a backend
    overrides what it has.

    ``model_id`` is the model's identity by one rule (``core/models/identity.py``): the GGUF's content identity,
    whether the file is loaded in process or served (a server's is read from what it reports), the fake's its
    name. Calibration (``navigation/snapshots.model_set``) and the adaptive threshold (``answers/adaptive``) are
    both keyed by it, so loading another model redoes both. ``legacy_ids``: what a library written before this
    rule keyed the same model by (read only when nothing is stored under ``model_id``)."""

    name: str = "backend"
    n_ctx: int = 0
    max_concurrency: int = 1
    model_path: Path | None = None
    legacy_ids: tuple[str, ...] = ()

    @property
    def model_id(self) -> str:
        return self.name

    def continuations(self, context: str, options: Sequence[str], *,
                      cancel: CancelCheck | None = None) -> Likelihoods:
        raise BackendError(f"{self.name} does not read the likelihood of a continuation")

    def count_tokens(self, text: str) -> int:
        """Whitespace words stand in for tokens where the backend cannot count them."""
        return len(text.split())

    def chat_template(self) -> str | None:
        return None

    def chat_prompt(self, user: str) -> str | None:
        return None

    def made_for_chat(self) -> bool | None:
        return None

    def meta(self, key: str) -> str | None:
        return None

    def info(self) -> JSONObject:
        return {"name": self.name}

    def close(self) -> None:
        pass


class RelevanceJudge(Protocol):
    """A relevance judge: one logit per (query, text) pair, higher = more relevant. Implementations:
    ``models/encoders/judges.py`` (the cross-encoder on llama.cpp, a rerank server, the fake)."""

    @property
    def model_id(self) -> str: ...

    @property
    def whole_query(self) -> bool:
        """True: the judge reads the whole query (a situation and its question); False: the question sentence."""
        ...

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray: ...

    def probabilities(self, query: str, texts: Sequence[str]) -> np.ndarray: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class EncoderProfile:
    """How one family of embedding GGUFs is asked (chosen by the file's ``general.architecture``).

    ``query_prompt`` goes before a question, ``document_prompt`` before a stored text (``{title}`` is the text's
    title, ``none`` without one); both are plain text the model was trained with. MiniLM has none."""

    name: str
    query_prompt: str = ""
    document_prompt: str = ""
    languages: tuple[str, ...] | None = None  # ISO 639-1 codes it reads well; None: many (not listed)

    def document_prefix(self, title: str | None = None) -> str:
        return self.document_prompt.format(title=title or "none")


@runtime_checkable
class Embedder(Protocol):
    """A sentence encoder: texts -> one L2-normalised float32 row each. Questions and stored texts may be embedded
    differently (EmbeddingGemma's prompts); an encoder that embeds both alike derives from
    ``encoders.embedder.SymmetricEncoder`` and defines ``embed`` only. Implementations: ``models/encoders/embedder.py``
    (llama.cpp: all-MiniLM-L6-v2, EmbeddingGemma) and the test doubles, each deriving from :class:`EmbedderBase`
    (the defaults of what an encoder may lack). ``window`` (tokens; 0: not cut) enters the vector-cache key
    (:func:`text_sha`); ``n_threads``/``set_threads`` let indexing lend a core to a parser."""

    @property
    def window(self) -> int:
        """Tokens a text is cut to (0: not cut)."""
        ...

    @property
    def path(self) -> Path | None:
        """The GGUF file, where there is one."""
        ...

    @property
    def n_threads(self) -> int | None:
        """llama.cpp threads; None: not a llama.cpp encoder."""
        ...

    @property
    def ran(self) -> str:
        """Where the vectors are computed, for the trace: ``in process``, or on a server (which one, and whether
        this process stood in for it: ``core/models/remote/fallback.py``)."""
        ...

    @property
    def model_id(self) -> str:
        """The model's identity (``core/models/identity.py``): what its vectors are stored under."""
        ...

    @property
    def legacy_ids(self) -> tuple[str, ...]:
        """Names older releases stored this model's vectors under (a library's are renamed to ``model_id`` when
        it is next used with them: ``core/indexing/encoder.py``, ``adopt_identity``)."""
        ...

    @property
    def profile(self) -> EncoderProfile | None:
        """How the family is asked and which languages it reads; None: not known (reads them all)."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Stored texts (passages, descriptions), in order."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def embed_queries_kept(self, texts: Sequence[str]) -> np.ndarray:
        """Questions' vectors, rows in input order, reusing the ones the encoder kept where it keeps any."""
        ...

    def embed_one(self, text: str) -> np.ndarray: ...

    def embed_query_and_documents(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Row 0: the question; rows 1..: the texts (one call)."""
        ...

    def document_tokens(self, texts: Sequence[str]) -> int:
        """Tokens the texts take as stored texts (with the document prompt)."""
        ...

    def set_threads(self, n_threads: int) -> None: ...

    def close(self) -> None:
        """Free the model; idempotent (a model in this process raises :class:`BackendError` when used after)."""
        ...


class EmbedderBase:
    """What an :class:`Embedder` may lack, declared with its defaults (an encoder overrides what it has)."""

    window: int = 0
    path: Path | None = None
    n_threads: int | None = None
    profile: EncoderProfile | None = None
    ran: str = "in process"
    legacy_ids: tuple[str, ...] = ()

    def embed_query(self, text: str) -> np.ndarray:
        raise NotImplementedError

    def embed_queries_kept(self, texts: Sequence[str]) -> np.ndarray:
        """One :meth:`embed_query` per text (an encoder that keeps no vectors)."""
        rows = [self.embed_query(t) for t in texts]
        return np.stack(rows) if rows else np.zeros((0, 0), np.float32)

    def document_tokens(self, texts: Sequence[str]) -> int:
        """An encoder that cannot tokenize: its words and two special tokens stand in for a text's tokens."""
        return sum(len(t.split()) + 2 for t in texts)

    def set_threads(self, n_threads: int) -> None:
        pass

    def close(self) -> None:
        pass


def text_sha(embedder: Embedder, text: str) -> str:
    """Key of a cached vector: the text and what the embedder makes of it (its window)."""
    return hashlib.sha256(f"{embedder.window}\x00{text}".encode("utf-8", errors="surrogatepass")).hexdigest()


def default_threads() -> int:
    """Threads for llama.cpp when none are given: ``SHELFWISE_THREADS`` if set (the test suite is run with 1 and
    with all cores this way), else every core this process may use."""
    env = (variable("SHELFWISE_THREADS") or "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS/Windows
        return max(1, os.cpu_count() or 1)
