"""Pure preparation: prompt texts, request planning, readout maths, the state cache and the text stream."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shelfwise.core.models.generation import StreamText, sample_token
from shelfwise.core.models.llama.state_cache import StateCache, tokens_key
from shelfwise.core.models.prompts import (
    Limits,
    PlanError,
    common_prefix_len,
    item_question,
    listing_context,
    plan_requests,
    softmax,
    yes_probability,
)

LIM = Limits(n_ctx=1000, n_batch=100, max_seqs=3, max_outputs=10)


def test_listing_puts_query_after_listing_for_prefix_reuse() -> None:
    a = listing_context(["alpha  beta", "gamma"], "first query")
    b = listing_context(["alpha  beta", "gamma"], "another one")
    assert "[1] alpha beta\n[2] gamma" in a
    assert a.endswith("Question: first query")
    shared = common_prefix_len(a, b)
    assert a[:shared].endswith("Question: ")
    assert "[2]" in item_question(1) and item_question(1).endswith("Answer:")



def test_common_prefix_len() -> None:
    assert common_prefix_len([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix_len([], [1]) == 0
    assert common_prefix_len([1, 2], [1, 2]) == 2


def test_plan_splits_by_sequences_batch_outputs_and_cells() -> None:
    # max 3 sequences per request
    assert plan_requests(10, [5] * 7, [1] * 7, LIM) == [[0, 1, 2], [3, 4, 5], [6]]
    # batch of 100 tokens
    assert plan_requests(10, [60, 30, 20, 50], [1] * 4, LIM) == [[0, 1], [2, 3]]
    # 10 outputs per request
    assert plan_requests(10, [5, 5, 5], [6, 4, 1], LIM) == [[0, 1], [2]]
    # KV cells: 1000 - 900 = 100 cells after the prefix; cells may exceed the evaluated tokens
    assert plan_requests(900, [5, 5, 5], [1, 1, 1], LIM, cells=[50, 40, 20]) == [[0, 1], [2]]


def test_plan_rejects_what_cannot_fit_with_numbers() -> None:
    with pytest.raises(PlanError, match="1000"):
        plan_requests(1000, [1], [1], LIM)
    with pytest.raises(PlanError, match="item 1 needs 101"):
        plan_requests(10, [5, 101], [1, 1], LIM)
    with pytest.raises(PlanError, match="no tokens"):
        plan_requests(10, [0], [1], LIM)
    with pytest.raises(PlanError, match="outputs"):
        plan_requests(10, [5], [11], LIM)


def test_readout_maths() -> None:
    assert yes_probability(2.0, 2.0) == pytest.approx(0.5)
    assert yes_probability(1.0, 0.0) == pytest.approx(1 / (1 + math.exp(-1)))
    assert yes_probability(1000.0, 0.0) == pytest.approx(1.0)
    assert yes_probability(0.0, 1000.0) == pytest.approx(0.0)
    p = softmax([1.0, 2.0, 3.0, 1000.0])
    assert sum(p) == pytest.approx(1.0)
    assert p[3] == pytest.approx(1.0)
    assert softmax([]) == []


def test_state_cache_lru_by_bytes() -> None:
    c = StateCache(10)
    k1, k2, k3 = tokens_key([1], [2]), tokens_key([1, 2]), tokens_key([1], [3])
    assert k1 != k2  # part boundaries are part of the key
    assert c.put(k1, 1, b"aaaa") and c.put(k2, 1, b"bbbb")
    assert c.get(k1) == (1, b"aaaa")  # k1 is now the most recent
    assert c.put(k3, 1, b"cccc")  # evicts k2
    assert k2 not in c and k1 in c and k3 in c
    assert c.bytes == 8
    assert not c.put(tokens_key([9]), 1, b"x" * 11)  # larger than the budget
    assert StateCache(0).put(k1, 1, b"a") is False


def test_stream_text_utf8_across_pieces() -> None:
    s = StreamText()
    data = "héllo €".encode()
    out = [s.feed(data[i : i + 1]) for i in range(len(data))]
    assert "".join(out) + s.finish() == "héllo €"
    assert all("\ufffd" not in o for o in out)


def test_stream_text_stop_string_held_back_and_cut() -> None:
    s = StreamText(stop=["\n\nQ:"])
    shown = [s.feed(p.encode()) for p in ["Answer is 4", ".\n", "\nQ", ": next"]]
    assert "".join(shown) == "Answer is 4."
    assert s.stopped and s.text == "Answer is 4."
    assert s.finish() == ""
    s2 = StreamText(stop=["END"])
    assert s2.feed(b"the EN") == "the "
    assert s2.feed(b"D") == "" and s2.stopped
    s3 = StreamText(stop=["END"])
    s3.feed(b"EN")
    assert s3.finish() == "EN"  # a partial stop string is shown at the end


def test_sample_token_respects_temperature() -> None:
    logits = np.array([0.0, 10.0, 0.0], dtype=np.float32)
    rng = np.random.default_rng(0)
    draws = [sample_token(logits, 0.5, rng) for _ in range(50)]
    assert draws.count(1) == 50
    flat = [sample_token(np.zeros(4, dtype=np.float32), 1.0, rng) for _ in range(200)]
    assert len(set(flat)) == 4
