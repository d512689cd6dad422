"""One contract suite for every implementation of the model protocols in ``core/models/backend.py``: each test
states a promise of :class:`DecisionBackend`, :class:`Embedder` or :class:`RelevanceJudge` and runs against every
implementation of it (Dangerzone's ``IsolationProviderTest``, Picard's ``CommonTests``).

- decision backends: the deterministic fake, llama.cpp in process (the bundled Gemma 3 270M), and the remote
  backend against llama-cpp-python's own OpenAI-compatible server on loopback (as ``tests/test_remote_backend.py``
  starts it);
- encoders: the logic tests' hashed bag of words (``tests/fakes.py``), all-MiniLM-L6-v2 and EmbeddingGemma-300M
  (GGUF, llama.cpp);
- relevance judges: the fake and the shipped cross-encoder (a rerank server is not available offline).

Each model is loaded once for the module; the texts are few and short (EmbeddingGemma is slow on a small CPU).
What differs between implementations on purpose is a trait of the implementation (:class:`Traits`), not a skip
inside a test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from shelfwise.core.models.backend import (
    BackendError,
    Cancelled,
    DecisionBackend,
    Embedder,
    Generation,
    RelevanceJudge,
)
from tests.test_remote_backend import server  # noqa: F401  (the module's own server on loopback, started once)


@dataclass(frozen=True)
class Traits:
    """What an implementation is, where the protocol leaves it open."""

    frees_model: bool = False  # holds a model in this process: after close() every call raises BackendError
    tolerance: float = 1e-6  # how far two evaluations of one input may differ (batching noise; x10 for a sum of
    #                         log-probabilities)
    window: bool = False  # cuts a long text to a token window (encoders)
    # how far one question's P(yes) may move with the other questions in its batch or between runs: llama.cpp's
    # float summation order follows the batch layout (../shared/LLAMA_CPP_NOTES.md, "Many questions over one
    # shared prefix"); on the session-8 machine's build, runs of the same batch differed by up to 0.05
    # (docs/development.md, "Batch noise")
    probability_noise: float = 1e-6
    continuations: bool = False  # reads log P(option | context) (the answer model in process; session 25)


def _models_or_skip(what: str) -> None:
    pytest.importorskip("llama_cpp", reason=f"{what} needs llama-cpp-python")


# --------------------------------------------------------------------------- the decision backends
LISTING = ("[1] Travel policy: meals are refunded up to 30 euros a day\n[2] Holiday allowance: 25 days a year\n"
           "[3] IT security: change passwords every 90 days\n\nQuestion: how much can I claim for meals?\n")
QUESTIONS = [f"Is item [{i}] about the question? Answer:" for i in (1, 2)]


def _fake_backend(request: pytest.FixtureRequest) -> Any:
    from shelfwise.core.models.fake import FakeBackend

    return FakeBackend()


def _llama_backend(request: pytest.FixtureRequest) -> Any:
    from shelfwise.core.models.llama.backend import LlamaBackend

    return LlamaBackend(request.getfixturevalue("bundled_model"))


def _on_demand_backend(request: pytest.FixtureRequest) -> Any:
    from shelfwise.core.models.llama.on_demand import OnDemandLlama

    return OnDemandLlama(request.getfixturevalue("bundled_model"))


SHARED = {"llama.cpp": "llama_backend"}  # the session's instance (tests/conftest.py), used and left open


def _remote_backend(request: pytest.FixtureRequest) -> Any:
    from shelfwise.core.models.remote.backend import RemoteBackend

    return RemoteBackend(request.getfixturevalue("server").url, timeout=300, max_concurrency=2)


BACKENDS: dict[str, tuple[Callable[[pytest.FixtureRequest], Any], Traits]] = {
    "fake": (_fake_backend, Traits()),
    "llama.cpp": (_llama_backend, Traits(frees_model=True, tolerance=1e-2, probability_noise=0.1,
                                         continuations=True)),
    "llama.cpp on demand": (_on_demand_backend, Traits(frees_model=True, tolerance=1e-2, probability_noise=0.1,
                                                       continuations=True)),
    "remote": (_remote_backend, Traits(tolerance=1e-2, probability_noise=0.1)),
}


def _params(names: dict[str, Any], slow: set[str]) -> list[Any]:
    return [pytest.param(n, id=n, marks=[pytest.mark.model] if n in slow else []) for n in names]


@dataclass
class Impl:
    name: str
    obj: Any
    traits: Traits
    fresh: Callable[[], Any]  # a new instance (for close(), which must not close the shared one)


@pytest.fixture(scope="module", params=_params(BACKENDS, {"llama.cpp", "llama.cpp on demand", "remote"}))
def backend(request: pytest.FixtureRequest) -> Iterator[Impl]:
    make, traits = BACKENDS[request.param]
    if request.param != "fake":
        _models_or_skip(request.param)
    shared = SHARED.get(request.param)
    obj = request.getfixturevalue(shared) if shared else make(request)
    try:
        yield Impl(request.param, obj, traits, lambda: make(request))
    finally:
        if not shared:
            obj.close()


def _drain(gen: Any) -> tuple[list[str], Generation]:
    pieces = []
    while True:
        try:
            pieces.append(next(gen))
        except StopIteration as done:
            return pieces, done.value


def test_backend_implements_the_protocol(backend: Impl) -> None:
    assert isinstance(backend.obj, DecisionBackend)
    assert isinstance(backend.obj.name, str) and backend.obj.name


def test_binary_gives_one_probability_per_question_the_same_in_any_batch(backend: Impl) -> None:
    """In input order; a question's score does not depend on the others asked with it (up to the batch noise)."""
    b, tol = backend.obj, max(backend.traits.tolerance, backend.traits.probability_noise)
    out = b.binary(LISTING, QUESTIONS)
    assert len(out.values) == 2 and all(0.0 < v < 1.0 for v in out.values)
    assert out.cost.requests >= 1 and out.cost.tokens >= 0 and out.cost.seconds >= 0.0
    assert b.binary(LISTING, QUESTIONS[::-1]).values[::-1] == pytest.approx(out.values, abs=tol)
    assert [b.binary(LISTING, [q]).values[0] for q in QUESTIONS] == pytest.approx(out.values, abs=tol)


def test_binary_takes_other_one_token_readouts_and_no_questions(backend: Impl) -> None:
    b = backend.obj
    out = b.binary(LISTING, QUESTIONS[:1], yes=" True", no=" False")
    assert len(out.values) == 1 and 0.0 < out.values[0] < 1.0
    assert b.binary(LISTING, []).values == []


def test_binary_refuses_a_readout_that_is_not_one_token(backend: Impl) -> None:
    with pytest.raises(BackendError):
        backend.obj.binary(LISTING, QUESTIONS[:1], yes=" Yes indeed and more")


def test_likelihood_is_a_log_probability_per_candidate(backend: Impl) -> None:
    """Tiny texts: llama-cpp-python's server is slow per echoed prompt token (tests/test_remote_backend.py)."""
    b, tol = backend.obj, 10 * backend.traits.tolerance
    cands, query = [" Cats purr.", " Tax rose."], "\nQ: do cats purr?"
    out = b.likelihood("Text:", cands, query)
    assert len(out.total) == len(out.mean) == 2 and out.n_tokens >= 1
    assert all(t <= 0.0 and math.isfinite(t) for t in out.total)
    assert all(m <= 0.0 for m in out.mean) and out.mean[0] > out.mean[1]  # the candidate that answers
    assert b.likelihood("Text:", cands[1:], query).total[0] == pytest.approx(out.total[1], abs=tol)  # alone
    empty = b.likelihood("Text:", [], query)
    assert empty.total == [] and empty.mean == []


def test_continuations_read_each_option_after_the_context_or_are_refused(backend: Impl) -> None:
    """The answer model's reading of a phrase as the answer (``core/answers/span_model.py``, session 25): log
    P(option | context) per option, the same in one batch as alone; a backend that cannot read it refuses with
    :class:`BackendError` (the short answer then keeps the phrase ranker alone)."""
    b, tol = backend.obj, 10 * backend.traits.tolerance
    context = "The capital of France is Paris.\nQuestion: What is the capital of France?\nAnswer:"
    options = [" Paris", " the weather in spring"]
    if not backend.traits.continuations:
        with pytest.raises(BackendError):
            b.continuations(context, options)
        return
    out = b.continuations(context, options)
    assert all(t < 0.0 and math.isfinite(t) for t in out.total) and out.n_tokens == 0
    assert out.mean[0] > out.mean[1] and out.total[0] > out.total[1]  # the option that answers
    assert out.mean[1] > out.total[1]  # the mean over the option's own several tokens
    assert b.continuations(context, options[1:]).total[0] == pytest.approx(out.total[1], abs=tol)  # alone
    assert b.continuations(context, []).total == []
    with pytest.raises(BackendError):
        b.continuations(context, [""])


def test_likelihood_needs_a_query(backend: Impl) -> None:
    with pytest.raises(BackendError):
        backend.obj.likelihood("Text:", [" Cats purr."], "")


def test_cancel_stops_before_any_request(backend: Impl) -> None:
    b = backend.obj
    with pytest.raises(Cancelled):
        b.binary(LISTING, QUESTIONS, cancel=lambda: True)
    with pytest.raises(Cancelled):
        b.likelihood("Text:", [" Cats purr."], "\nQ: do cats purr?", cancel=lambda: True)
    pieces, result = _drain(b.generate("The capital of France is", max_tokens=8, cancel=lambda: True))
    assert pieces == [] and result.text == "" and result.stopped_by == "cancelled"


def test_generate_streams_what_it_returns_within_max_tokens(backend: Impl) -> None:
    b = backend.obj
    pieces, result = _drain(b.generate("[1] The capital of France is Paris.\nThe capital of France is",
                                       max_tokens=6, repeat_penalty=1.15))
    assert pieces and all(isinstance(p, str) for p in pieces)
    assert "".join(pieces) == result.text and result.stopped_by in ("length", "eos", "stop")
    assert len(pieces) <= 6 and result.cost.tokens >= len(pieces)
    again, _ = _drain(b.generate("[1] The capital of France is Paris.\nThe capital of France is", max_tokens=6,
                                 repeat_penalty=1.15))
    assert "".join(again) == result.text  # greedy (temperature 0): the same text every time


def test_generate_ends_before_a_stop_string(backend: Impl) -> None:
    prompt = "[1] one, two, three, four, five, six, seven\nCount on: one, two, three,"
    pieces, result = _drain(backend.obj.generate(prompt, max_tokens=16, stop=[","]))
    assert "," not in result.text and "".join(pieces) == result.text and result.stopped_by == "stop"


def test_count_tokens(backend: Impl) -> None:
    b = backend.obj
    one, more = b.count_tokens("hello"), b.count_tokens("hello world, hello again, and hello once more")
    assert isinstance(one, int) and 1 <= one < more


def test_a_context_longer_than_the_model_is_refused_not_crashed(backend: Impl) -> None:
    """Navigation keeps every request inside the window; one that is not is a BackendError, never a crash."""
    b = backend.obj
    huge = "word " * 40_000
    try:
        out = b.binary(huge, QUESTIONS[:1])
    except BackendError:
        pass
    else:
        assert len(out.values) == 1 and 0.0 < out.values[0] < 1.0
    assert len(b.binary(LISTING, QUESTIONS[:1]).values) == 1  # and the backend still works afterwards


def test_close_is_idempotent(backend: Impl) -> None:
    other = backend.fresh()
    other.close()
    other.close()
    if backend.traits.frees_model:  # every call on a closed model is an error, none a crash
        for call in (lambda: other.binary(LISTING, QUESTIONS[:1]), lambda: other.count_tokens("hello"),
                     lambda: other.likelihood("Text:", [" Cats purr."], "\nQ: do cats purr?"),
                     lambda: _drain(other.generate("The capital of France is", max_tokens=2))):
            with pytest.raises(BackendError):
                call()


# --------------------------------------------------------------------------- the encoders
def _hash_encoder(request: pytest.FixtureRequest) -> Any:
    from tests.fakes import HashEmbedder

    return HashEmbedder()


def _minilm(request: pytest.FixtureRequest) -> Any:
    _models_or_skip("MiniLM")
    from shelfwise.core.models.encoders.embedder import Embedder as LlamaEmbedder

    return LlamaEmbedder("minilm")


def _embeddinggemma(request: pytest.FixtureRequest) -> Any:
    _models_or_skip("EmbeddingGemma")
    from shelfwise.core.models.encoders.embedder import Embedder as LlamaEmbedder

    return LlamaEmbedder(request.getfixturevalue("embeddinggemma_model"))  # (tests/conftest.py: fails, not skips)


ENCODERS: dict[str, tuple[Callable[[pytest.FixtureRequest], Any], Traits]] = {
    "hash-fake": (_hash_encoder, Traits()),
    "minilm": (_minilm, Traits(frees_model=True, tolerance=1e-4, window=True)),
    "embeddinggemma": (_embeddinggemma, Traits(frees_model=True, tolerance=1e-4, window=True)),
}
DOCS = ["Cats purr when they are happy.", "Taxes rose last year.", "The office opens at nine."]


@pytest.fixture(scope="module", params=_params(ENCODERS, {"minilm", "embeddinggemma"}))
def encoder(request: pytest.FixtureRequest) -> Iterator[Impl]:
    make, traits = ENCODERS[request.param]
    obj = make(request)
    try:
        yield Impl(request.param, obj, traits, lambda: make(request))
    finally:
        obj.close()


def _unit_rows(m: np.ndarray, n: int) -> None:
    assert isinstance(m, np.ndarray) and m.dtype == np.float32 and m.ndim == 2 and m.shape[0] == n
    assert np.all(np.isfinite(m))
    assert np.allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-3)


def test_encoder_implements_the_protocol_with_a_stable_model_id(encoder: Impl) -> None:
    e = encoder.obj
    assert isinstance(e, Embedder)
    assert isinstance(e.model_id, str) and e.model_id and e.model_id == e.model_id
    if encoder.traits.frees_model:  # a second load of the same file has the same id (the vector cache's key)
        other = encoder.fresh()
        try:
            assert other.model_id == e.model_id
        finally:
            other.close()


def test_every_method_gives_unit_float32_rows_of_one_width(encoder: Impl) -> None:
    e = encoder.obj
    docs = e.embed(DOCS)
    _unit_rows(docs, len(DOCS))
    dim = docs.shape[1]
    queries = e.embed_queries(["do cats purr?", "when does the office open?"])
    _unit_rows(queries, 2)
    both = e.embed_query_and_documents("do cats purr?", DOCS)
    _unit_rows(both, 1 + len(DOCS))
    for vec in (e.embed_query("do cats purr?"), e.embed_one(DOCS[0])):
        assert vec.shape == (dim,) and vec.dtype == np.float32 and abs(float(np.linalg.norm(vec)) - 1) < 1e-3
    assert queries.shape[1] == both.shape[1] == dim


def test_the_methods_agree_with_each_other(encoder: Impl) -> None:
    """One text gives the same vector whichever method or batch it goes through."""
    e, tol = encoder.obj, encoder.traits.tolerance
    docs = e.embed(DOCS)
    assert np.allclose(np.stack([e.embed_one(d) for d in DOCS]), docs, atol=tol)  # batch vs one at a time
    assert np.allclose(e.embed(DOCS[::-1])[::-1], docs, atol=tol)  # order kept
    assert np.allclose(e.embed(DOCS), docs, atol=tol)  # deterministic
    both = e.embed_query_and_documents("do cats purr?", DOCS)
    assert np.allclose(both[1:], docs, atol=tol)
    assert np.allclose(both[0], e.embed_query("do cats purr?"), atol=tol)
    assert np.allclose(e.embed_queries(["do cats purr?"])[0], both[0], atol=tol)


def test_a_question_is_closest_to_the_text_that_answers_it(encoder: Impl) -> None:
    e = encoder.obj
    m = e.embed_query_and_documents("Do cats purr when they are happy?", DOCS)
    cos = m[1:] @ m[0]
    assert int(np.argmax(cos)) == 0, cos


def test_empty_input(encoder: Impl) -> None:
    e = encoder.obj
    dim = e.embed_one(DOCS[0]).shape[0]
    for m in (e.embed([]), e.embed_queries([])):
        assert m.shape == (0, dim) and m.dtype == np.float32
    assert e.embed_query_and_documents("do cats purr?", []).shape == (1, dim)
    row = e.embed([""])
    assert row.shape == (1, dim) and np.all(np.isfinite(row))


def test_a_bare_string_is_refused_not_embedded_letter_by_letter(encoder: Impl) -> None:
    with pytest.raises(TypeError):
        encoder.obj.embed("Cats purr.")  # type: ignore[arg-type]


def test_a_long_text_is_embedded(encoder: Impl) -> None:
    e = encoder.obj
    head = "Cats purr when they are happy and sleep sixteen hours a day. " * 150
    a, b = e.embed([head + "The end is about dogs.", head + "The end is about taxes and forms."])
    _unit_rows(np.stack([a, b]), 2)
    if encoder.traits.window:  # cut to the window: what lies beyond it does not move the vector
        assert np.allclose(a, b, atol=encoder.traits.tolerance)


def test_a_query_vector_handed_out_is_the_callers_copy(encoder: Impl) -> None:
    e = encoder.obj
    v = e.embed_query("do cats purr?")
    v[:] = 0.0
    assert abs(float(np.linalg.norm(e.embed_query("do cats purr?"))) - 1) < 1e-3


def test_encoder_close_is_idempotent(encoder: Impl) -> None:
    other = encoder.fresh()
    other.close()
    other.close()
    if encoder.traits.frees_model:  # every call on a closed model is an error, none a crash
        for call in (lambda: other.embed(DOCS[:1]), lambda: other.embed_queries(["do cats purr?"]),
                     lambda: other.embed_query("do cats purr?"), lambda: other.embed_one(DOCS[0]),
                     lambda: other.embed_query_and_documents("do cats purr?", DOCS[:1])):
            with pytest.raises(BackendError):
                call()


# --------------------------------------------------------------------------- the relevance judges
def _fake_judge() -> Any:
    from shelfwise.core.models.encoders.judges import FakeJudge

    return FakeJudge()


def _bundled_judge() -> Any:
    _models_or_skip("the judge")
    from shelfwise.core.models.encoders.cross_encoder import Judge

    return Judge()


JUDGES: dict[str, tuple[Callable[[], Any], Traits]] = {
    "fake-judge": (_fake_judge, Traits()),
    "cross-encoder": (_bundled_judge, Traits(frees_model=True, tolerance=1e-3)),
}


@pytest.fixture(scope="module", params=_params(JUDGES, {"cross-encoder"}))
def judge(request: pytest.FixtureRequest) -> Iterator[Impl]:
    make, traits = JUDGES[request.param]
    obj = make()
    try:
        yield Impl(request.param, obj, traits, make)
    finally:
        obj.close()


def test_judge_scores_every_text_in_order(judge: Impl) -> None:
    j, tol = judge.obj, judge.traits.tolerance
    j_: RelevanceJudge = j
    assert isinstance(j_.model_id, str) and j_.model_id == j.model_id
    s = j.score("do cats purr?", DOCS)
    assert isinstance(s, np.ndarray) and s.dtype == np.float32 and s.shape == (len(DOCS),)
    assert np.all(np.isfinite(s)) and int(np.argmax(s)) == 0
    assert np.allclose(j.score("do cats purr?", DOCS[::-1])[::-1], s, atol=tol)
    assert np.allclose([j.score("do cats purr?", [d])[0] for d in DOCS], s, atol=tol)
    assert np.allclose(j.score("do cats purr?", DOCS), s, atol=tol)
    p = j.probabilities("do cats purr?", DOCS)
    assert p.shape == s.shape and np.all((p >= 0) & (p <= 1))
    assert np.allclose(p, 1 / (1 + np.exp(-s.astype(np.float64))), atol=1e-4)  # the logits' sigmoid
    assert j.score("do cats purr?", []).shape == (0,) and j.probabilities("do cats purr?", []).shape == (0,)


def test_judge_takes_a_long_text_and_refuses_a_bare_string(judge: Impl) -> None:
    j = judge.obj
    s = j.score("do cats purr?", ["Cats purr when they are happy. " * 400])
    assert s.shape == (1,) and np.isfinite(s[0])
    with pytest.raises(TypeError):
        j.score("do cats purr?", "Cats purr.")  # type: ignore[arg-type]


def test_judge_close_is_idempotent(judge: Impl) -> None:
    other = judge.fresh()
    other.close()
    other.close()
    if judge.traits.frees_model:  # every call on a closed model is an error, none a crash
        for call in (lambda: other.score("do cats purr?", DOCS[:1]),
                     lambda: other.probabilities("do cats purr?", DOCS[:1])):
            with pytest.raises(BackendError):
                call()
