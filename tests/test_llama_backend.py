"""The llama.cpp decision backend on the REAL bundled model (Gemma 3 270M Q4_K_M)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from shelfwise.core.models.backend import BackendError, Cancelled, DecisionBackend, Generation
from shelfwise.core.models.llama.backend import LlamaBackend, gpu_offload_supported
from shelfwise.core.models.llama.bundled import bundled_model_path, resolve_model
from shelfwise.core.models.prompts import common_prefix_len, item_question, likelihood_query, listing_context

pytestmark = pytest.mark.model

TOPICS = [
    "travel expense claims and meal allowances",
    "parental leave and childcare support",
    "office printer setup and toner",
    "annual performance review process",
    "remote work equipment budget",
    "health insurance enrolment",
    "pension contributions and retirement",
    "company car policy",
    "data protection and privacy training",
    "fire safety and evacuation drills",
    "onboarding checklist",
    "sick leave reporting",
    "overtime compensation",
    "training budget and courses",
    "expense card limits",
    "visa sponsorship for employees",
    "relocation assistance",
    "laptop replacement cycle",
    "password and security rules",
    "holiday calendar and public holidays",
    "bicycle leasing scheme",
    "canteen opening hours",
    "parking permits",
    "whistleblower procedure",
    "conflict of interest rules",
    "gifts and hospitality register",
    "travel booking tool",
    "mobile phone allowance",
    "home office tax rules",
    "maternity pay",
    "paternity pay",
    "sabbatical leave",
    "flexible working hours",
    "dress code",
    "internal job applications",
    "referral bonus",
    "salary bands",
    "bonus payout dates",
    "stock options",
    "employee assistance programme",
    "first aid officers",
    "accident reporting",
    "meeting room booking",
    "visitor registration",
    "archive and records retention",
    "printing confidential documents",
    "software licence requests",
    "cloud storage rules",
    "email retention",
    "social media guidelines",
]
ITEMS = [f"This section explains {t}: who is eligible, how to apply and which form to use." for t in TOPICS]

# llama.cpp is deterministic for one request (same tokens, same batch layout, same threads) but not batch-invariant:
# which sequences share a decode, and where the prompt is split into evaluations, change the float summation order.
# Measured on the bundled model (tests/test_llama_backend.py's listings; x86-64, 1 and 2 threads gave identical
# figures): the same request twice differs by exactly 0; across batch compositions (shuffled orders, one
# question alone, a level split over two requests) a binary P(yes) moves by up to 0.28 logits (mean 0.07) and a
# likelihood by up to 0.08 nats/token (mean 0.018). The bounds below allow 3x that for other CPUs' kernels
# (the LLAMA_CPP_NOTES saw up to ~0.4 logits in other layouts); a wrong cache restore or a mis-indexed
# readout moves scores by far more (a different candidate's score).
BINARY_LOGIT_BOUND = 0.9
BINARY_LOGIT_MEAN_BOUND = 0.25
LIKELIHOOD_BOUND = 0.25
LIKELIHOOD_MEAN_BOUND = 0.06


def logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def assert_close_logits(a: list[float], b: list[float]) -> None:
    diffs = [abs(logit(x) - logit(y)) for x, y in zip(a, b, strict=True)]
    assert max(diffs) < BINARY_LOGIT_BOUND, diffs
    assert sum(diffs) / len(diffs) < BINARY_LOGIT_MEAN_BOUND, diffs


def assert_same_order_when_separated(a: list[float], b: list[float], gap: float) -> int:
    """Every pair whose scores differ by more than ``gap`` in ``a`` keeps its order in ``b``; returns how many
    pairs were checked (so a test can insist the check was not vacuous)."""
    checked = 0
    for i in range(len(a)):
        for j in range(len(a)):
            if a[i] - a[j] > gap:
                assert b[i] > b[j], (i, j, a[i], a[j], b[i], b[j])
                checked += 1
    return checked


def drain(gen) -> tuple[list[str], Generation]:
    pieces = []
    while True:
        try:
            pieces.append(next(gen))
        except StopIteration as stop:
            return pieces, stop.value


def test_protocol_info_and_template(llama_backend: LlamaBackend) -> None:
    assert isinstance(llama_backend, DecisionBackend)
    info = llama_backend.info()
    assert info["n_params"] > 200_000_000 and info["n_ctx"] == 8192 and info["n_seq_max"] == 64
    assert info["gpu_offload_supported"] == gpu_offload_supported()
    template = llama_backend.chat_template()
    assert template is None or "start_of_turn" in template
    assert llama_backend.count_tokens("Hello world") == len(llama_backend.tokenize("Hello world"))
    assert llama_backend.tokenize(" Yes") == [8438]


def test_binary_is_deterministic_and_batch_composition_moves_it_within_bounds(llama_backend: LlamaBackend) -> None:
    ctx = listing_context(ITEMS, "How much can I claim for meals when travelling?")
    questions = [item_question(i) for i in range(50)]
    llama_backend.reset()
    batch = llama_backend.binary(ctx, questions)
    assert len(batch.values) == 50 and all(0.0 < v < 1.0 for v in batch.values)
    assert batch.cost.requests == 1
    assert len({round(v, 4) for v in batch.values}) > 10  # the questions really differ
    llama_backend.reset()
    again = llama_backend.binary(ctx, questions)
    assert again.values == pytest.approx(batch.values, abs=1e-6)  # the same request: the same numbers
    # another order of the same questions: each question's score follows it (within the float bound)
    order = list(range(49, -1, -1))
    shuffled = llama_backend.binary(ctx, [questions[i] for i in order])
    assert_close_logits([shuffled.values[order.index(i)] for i in range(50)], batch.values)
    alone = []
    for i in (0, 7, 23, 41, 49):
        one = llama_backend.binary(ctx, [questions[i]])
        assert one.cost.reused_tokens > 0  # the listing stayed in sequence 0
        alone.append(one.values[0])
    assert_close_logits(alone, [batch.values[i] for i in (0, 7, 23, 41, 49)])


def test_binary_splits_requests_beyond_sequences(llama_backend: LlamaBackend) -> None:
    ctx = listing_context(ITEMS, "Who pays for my home office chair?")
    questions = [item_question(i % 50) for i in range(70)]
    s = llama_backend.binary(ctx, questions)
    assert s.cost.requests == 2  # 63 sequences per request
    # the same question in both requests gets the same score up to the batch-composition bound
    assert_close_logits(s.values[:20], s.values[50:70])


def test_binary_prefix_reuse_matches_fresh(llama_backend: LlamaBackend) -> None:
    be = llama_backend
    questions = [item_question(i) for i in range(0, 50, 2)]
    q_tokens = sum(be.count_tokens(q) for q in questions)
    ctx1 = listing_context(ITEMS, "Can I lease a bicycle?")
    ctx2 = listing_context(ITEMS, "When are bonuses paid out?")
    tok2 = be.tokenize(ctx2, add_bos=True)
    shared = common_prefix_len(be.tokenize(ctx1, add_bos=True), tok2)
    assert shared > 1000 and len(tok2) - shared < 20  # the listing is shared, the query is not
    # fresh: an empty cache, the listing evaluated, then the query (the evaluation boundaries of a reuse)
    be.prompt_eval(tok2[:shared])
    fresh = be.binary(ctx2, questions)
    # reuse: another query over the listing first; the second query keeps the listing (longer than the SWA window)
    be.reset()
    be.binary(ctx1, questions)
    warm = be.binary(ctx2, questions)
    assert warm.cost.reused_tokens == shared
    assert warm.cost.tokens == len(tok2) - shared + q_tokens
    assert_close_logits(fresh.values, warm.values)
    # fully cold, the whole context in one evaluation: equal up to the float noise of other batch boundaries
    be.reset()
    cold = be.binary(ctx2, questions)
    assert cold.cost.reused_tokens == 0 and cold.cost.tokens == len(tok2) + q_tokens
    assert warm.cost.tokens < 0.4 * cold.cost.tokens
    assert_close_logits(cold.values, warm.values)



def test_likelihood_batch_equals_alone_and_cache_reuse(llama_backend: LlamaBackend) -> None:
    ctx = "Passages from the staff handbook:"
    cands = ["\n" + t for t in ITEMS[:30]]
    query = likelihood_query("How do I apply for parental leave?")
    llama_backend.reset()
    batch = llama_backend.likelihood(ctx, cands, query)
    n_q = llama_backend.count_tokens(query)
    assert batch.n_tokens == n_q and len(batch.total) == 30
    assert all(t < 0 for t in batch.total)
    assert batch.mean[1] == pytest.approx(batch.total[1] / n_q)
    assert batch.cost.reused_tokens == 0
    # the per-candidate states are now cached: a second pass evaluates the last candidate token + the query
    warm = llama_backend.likelihood(ctx, cands, query)
    assert warm.cost.tokens == 30 * (n_q + 1)
    assert warm.cost.reused_tokens > 0
    # the cache restore changes only the evaluation boundaries: equal within the batch-composition bound
    diffs = [abs(a - b) for a, b in zip(batch.mean, warm.mean, strict=True)]
    assert sum(diffs) / len(diffs) < LIKELIHOOD_MEAN_BOUND and max(diffs) < LIKELIHOOD_BOUND
    # the same cold request twice: the same numbers
    llama_backend.reset()
    again = llama_backend.likelihood(ctx, cands, query)
    assert again.mean == pytest.approx(batch.mean, abs=1e-6)
    # each candidate scored alone, with no cache: within the bound, and candidates clearly apart keep their order
    llama_backend.reset()
    picked = (0, 1, 5, 9, 13, 17, 21, 25, 29)
    alone = [llama_backend.likelihood(ctx, [cands[i]], query).mean[0] for i in picked]
    in_batch = [batch.mean[i] for i in picked]
    assert max(abs(a - b) for a, b in zip(alone, in_batch, strict=True)) < LIKELIHOOD_BOUND
    assert assert_same_order_when_separated(in_batch, alone, gap=2 * LIKELIHOOD_BOUND) > 0
    # a different query over the same candidates reuses their states
    other = llama_backend.likelihood(ctx, cands, likelihood_query("Where do I park?"))
    assert other.cost.reused_tokens > 0


def test_generate_streams_and_stops(llama_backend: LlamaBackend) -> None:
    prompt = "The capital of France is Paris. The capital of Germany is"
    pieces, gen = drain(llama_backend.generate(prompt, max_tokens=12))
    assert gen.text == "".join(pieces) and len(pieces) >= 2
    assert gen.cost.requests <= 12 and gen.stopped_by in ("length", "eos")
    assert gen.cost.tokens <= llama_backend.count_tokens(prompt) + 1 + 12
    _, short = drain(llama_backend.generate(prompt, max_tokens=3))
    assert short.stopped_by == "length" and short.cost.requests == 3
    assert gen.text.startswith(short.text)  # greedy: the same continuation
    # a stop string that the greedy continuation contains: cut before it
    word = gen.text.strip().split()[0]
    _, stopped = drain(llama_backend.generate(prompt, max_tokens=12, stop=[word]))
    assert stopped.stopped_by == "stop" and word not in stopped.text
    _, cancelled = drain(llama_backend.generate(prompt, cancel=lambda: True))
    assert cancelled.stopped_by == "cancelled" and cancelled.text == ""


def test_errors(llama_backend: LlamaBackend, bundled_model: Path, tmp_path: Path) -> None:
    with pytest.raises(BackendError, match="not found"):
        LlamaBackend(tmp_path / "missing.gguf")
    not_gguf = tmp_path / "notes.gguf"
    not_gguf.write_bytes(b"hello world")
    with pytest.raises(BackendError, match="GGUF"):
        resolve_model(not_gguf)
    truncated = tmp_path / "truncated.gguf"
    with bundled_model.open("rb") as src, truncated.open("wb") as dst:
        dst.write(src.read(bundled_model.stat().st_size // 3))
    with pytest.raises(BackendError, match="corrupt or truncated"):
        LlamaBackend(truncated, n_ctx=512, n_seq_max=2)
    with pytest.raises(BackendError, match="Xyzzyplugh"):
        llama_backend.binary("Context", ["Question?"], yes=" Xyzzyplugh")
    with pytest.raises(BackendError, match="8192"):
        llama_backend.binary("word " * 9000, ["Question?"])
    with pytest.raises(Cancelled):
        llama_backend.binary("Context", ["Question?"], cancel=lambda: True)
    # after errors the backend still answers
    assert len(llama_backend.binary("Context", ["Is it?"]).values) == 1


def test_bundled_model_is_assembled_once(bundled_model: Path) -> None:
    mtime = bundled_model.stat().st_mtime_ns
    assert bundled_model_path() == bundled_model
    assert bundled_model.stat().st_mtime_ns == mtime  # not rewritten
    assert resolve_model(None) == bundled_model
    with bundled_model.open("rb") as fh:
        assert fh.read(4) == b"GGUF"


def test_bundled_model_reassembled_when_corrupt(tmp_path: Path, bundled_model: Path) -> None:
    target = bundled_model_path(tmp_path)
    assert target.stat().st_size == bundled_model.stat().st_size
    with target.open("r+b") as fh:
        fh.truncate(1000)
    again = bundled_model_path(tmp_path)
    assert again.stat().st_size == bundled_model.stat().st_size
    shutil.rmtree(tmp_path)


def _generated(backend: LlamaBackend, prompt: str) -> str:
    return "".join(backend.generate(prompt, max_tokens=12, repeat_penalty=1.15))


def test_greedy_generation_depends_on_the_prompt_only_not_on_what_ran_before(llama_backend: LlamaBackend) -> None:
    """Issue 38: one question, then others (generation, binary, likelihood), then the first again through one
    loaded backend gives the same answer. The prompt is one whose greedy continuation is a near-tie: when the
    second call reused the cached prompt and evaluated its last token alone, the logits differed in the last bits
    and the answer changed (" on level 2.\\n[4] The restaurant is" then " on level 2.\\n[4] Visitors park at")."""
    first = ("[1] The helpdesk is on floor 4.\n[2] Visitors park on level two.\n[3] Meals are refunded up to 40 "
             "euros a day.\nVisitors park")
    answers = [_generated(llama_backend, first), _generated(llama_backend, first)]
    _generated(llama_backend, "[1] The capital of France is Paris.\nThe capital of France is")
    llama_backend.binary(listing_context(["Parking", "Meals", "Helpdesk"], "Where do visitors park?"),
                         [item_question(i) for i in range(3)])
    llama_backend.likelihood("Documents:", ["Parking rules", "Meal allowance"], "Where do visitors park?")
    answers += [_generated(llama_backend, first), _generated(llama_backend, first)]
    assert len(set(answers)) == 1, answers
