"""The evaluation's fixed ConditionalQA split and its baselines (real evaluation files, no model)."""

from __future__ import annotations

import numpy as np
import pytest

from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.snapshots import snapshot_for
from shelfwise.core.settings import Settings
from shelfwise.evaluation.datasets import conditionalqa_split, load_conditionalqa
from shelfwise.evaluation.retrieval import Methods, summarise
from shelfwise.evaluation.run import load_dataset, shared_dir
from tests.test_navigation import shelf_store  # noqa: F401  (the fixture)

CQA = shared_dir() / "evaldata" / "conditionalqa_dev"


def test_conditionalqa_split_is_fixed_by_guide() -> None:
    every = load_conditionalqa(CQA)
    tune = load_conditionalqa(CQA, split="tune")
    test = load_conditionalqa(CQA, split="test")
    assert len(every.documents) == len(tune.documents) == len(test.documents) == 59  # retrieval sees all guides
    assert (len(tune.questions), len(test.questions), len(every.questions)) == (131, 140, 271)
    test_guides = {q.gold[0].path for q in test.questions}
    tune_guides = {q.gold[0].path for q in tune.questions}
    assert (len(tune_guides), len(test_guides)) == (29, 30) and not tune_guides & test_guides
    assert all(conditionalqa_split(u) == "test" for u in test_guides)
    assert {d.path for d in every.documents} == tune_guides | test_guides
    with pytest.raises(ValueError, match="split"):
        load_conditionalqa(CQA, split="dev")
    with pytest.raises(ValueError, match="no tune/test split"):
        load_dataset("squad", 5, split="test")


def test_rrf_fuses_dense_and_bm25_rankings(shelf_store) -> None:  # noqa: F811
    store, cid, emb = shelf_store
    snap = snapshot_for(store, cid, emb.model_id)
    m = Methods(store, cid, snap, emb, None, Settings(readout="embedding"), DecisionModel())
    query = "telescope galaxy unique token z21x1x2"
    vec = np.asarray(emb.embed_one(query), np.float32)
    fused = m.rrf(query, vec).passages
    dense, bm25 = m.dense(query, vec).passages, m.bm25(query, vec).passages
    assert len(fused) == len(set(fused)) and set(fused) <= set(dense) | set(bm25)
    # the passage both rankings put first (the one with the unique token) is first in the fusion
    assert dense[0] == bm25[0] == fused[0]
    # a passage only one ranking has still gets in, below those both rank high
    only_lexical = [p for p in bm25 if p not in dense[:200]]
    assert all(p in fused for p in only_lexical[:3])


def test_summary_reports_the_p90_of_seconds() -> None:
    per = [{"qid": str(i), "passage_hit1": float(i % 2), "seconds": float(i), "tokens": 0, "requests": 0}
           for i in range(1, 11)]
    s = summarise(per)
    assert s["median_seconds"] == 5.5 and s["p90_seconds"] == pytest.approx(9.1)
    assert s["passage_hit1"] == 0.5 and s["questions"] == 10


def test_fit_prior_refuses_anything_but_the_tune_half() -> None:
    from shelfwise.evaluation.run import run_eval

    for dataset, split in (("conditionalqa", "test"), ("conditionalqa", "all"), ("squad", "all")):
        with pytest.raises(ValueError, match="only on conditionalqa --split tune"):
            run_eval(dataset, limit=1, methods=["bm25"], embedder=None, backend=None, settings=Settings(),
                     split=split, fit_prior=True)
