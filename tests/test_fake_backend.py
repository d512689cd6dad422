"""The deterministic fake backend follows its documented rule and the protocol's contracts."""

from __future__ import annotations

import math

import pytest

from shelfwise.core.models.backend import BackendError, Cancelled, DecisionBackend, Generation
from shelfwise.core.models.fake import FakeBackend, overlap, query_of
from shelfwise.core.models.prompts import item_question, listing_context

ITEMS = ["Travel expenses and meal claims", "Parental leave policy", "Office printer setup"]


def drain(gen) -> tuple[list[str], Generation]:
    pieces = []
    while True:
        try:
            pieces.append(next(gen))
        except StopIteration as stop:
            return pieces, stop.value


def test_is_a_decision_backend() -> None:
    assert isinstance(FakeBackend(), DecisionBackend)


def test_query_and_overlap_rule() -> None:
    ctx = listing_context(ITEMS, "How do I claim meal expenses?")
    assert query_of(ctx) == "How do I claim meal expenses?"
    assert overlap("meal claims", "claim meal") == pytest.approx(0.5)  # "claims" != "claim"
    assert query_of("no marker") == "no marker"


def test_binary_scores_items_by_overlap_and_counts_cost() -> None:
    fb = FakeBackend()
    ctx = listing_context(ITEMS, "meal expenses travel")
    qs = [item_question(i) for i in range(len(ITEMS))]
    s = fb.binary(ctx, qs)
    assert s.values[0] == pytest.approx(0.05 + 0.9 * 1.0)
    assert s.values[1] == pytest.approx(0.05) and s.values[2] == pytest.approx(0.05)
    assert s.cost.requests == 1
    assert s.cost.tokens == len(ctx.split()) + sum(len(q.split()) for q in qs)
    assert s.cost.reused_tokens == 0
    # a second query over the same listing reuses the listing's words
    s2 = fb.binary(listing_context(ITEMS, "printer"), qs)
    assert s2.cost.reused_tokens > 0
    assert s2.cost.tokens < s.cost.tokens
    assert s2.values[2] > s2.values[0]


def test_binary_splits_requests_and_checks_readout_and_cancel() -> None:
    fb = FakeBackend()
    s = fb.binary("Question: x", ["q"] * 130)
    assert s.cost.requests == 3  # 63 per request
    with pytest.raises(BackendError, match="yes"):
        fb.binary("c", ["q"], yes=" Yes please")
    with pytest.raises(Cancelled):
        fb.binary("c", ["q"], cancel=lambda: True)
    assert fb.binary("c", []).values == []



def test_likelihood_rule_and_cache_accounting() -> None:
    fb = FakeBackend()
    lk = fb.likelihood("Passages:", ITEMS, "parental leave")
    assert lk.n_tokens == 2
    assert lk.total[1] == pytest.approx(2 * math.log(0.5))
    assert lk.total[0] == pytest.approx(2 * math.log(0.01))
    assert lk.mean[1] == pytest.approx(math.log(0.5))
    again = fb.likelihood("Passages:", ITEMS, "printer")
    assert again.cost.tokens < lk.cost.tokens
    assert again.cost.reused_tokens > 0
    with pytest.raises(BackendError):
        fb.likelihood("c", ITEMS, "   ")


def test_generate_streams_first_passage_and_respects_limits() -> None:
    fb = FakeBackend()
    prompt = "Answer from:\n[1] Meals are refunded up to 30 EUR.\n[2] Other.\nQuestion: meals?"
    pieces, gen = drain(fb.generate(prompt))
    assert "".join(pieces) == gen.text == "According to the passages, Meals are refunded up to 30 EUR."
    assert len(pieces) > 3 and gen.stopped_by == "eos"
    _, short = drain(fb.generate(prompt, max_tokens=3))
    assert short.text == "According to the" and short.stopped_by == "length"
    _, stopped = drain(fb.generate(prompt, stop=["refunded"]))
    assert stopped.text == "According to the passages, Meals are " and stopped.stopped_by == "stop"
    _, cancelled = drain(fb.generate(prompt, cancel=lambda: True))
    assert cancelled.text == "" and cancelled.stopped_by == "cancelled"
