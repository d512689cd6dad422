"""The traindata collections and the leave-one-collection-out passage combiner (issue 23, item 5)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

from shelfwise.core.navigation.decision import prior_model
from shelfwise.core.navigation.features import FEATURES
from shelfwise.evaluation.traindata import load_traindata
from shelfwise.evaluation.tune import Pool, fit_listwise, hit1, loco


def _write(root: Path, folder: str, recs: list[dict]) -> None:
    d = root / folder / "derived"
    d.mkdir(parents=True)
    with gzip.open(d / "pairs.jsonl.gz", "wt", encoding="utf-8") as fh:
        for r in recs:
            fh.write(json.dumps(r) + "\n")


def test_orsharc_pages_become_sectioned_documents_with_gold_items(tmp_path: Path) -> None:
    page = "https://www.gov.uk/warm-home-discount"
    _write(tmp_path, "or_sharc", [
        {"id": "a", "question": "Can I apply directly?", "doc_id": page, "doc_title": None,
         "positives": ["# 3. Low income\n\nYou may apply directly to your supplier."], "positive_snippet_ids": ["9"],
         "negatives": ["## Eligibility\n\nThere are 2 ways to qualify."], "scenarios": ["I get Pension Credit."]},
        {"id": "b", "question": "How do I qualify?", "doc_id": page, "doc_title": None,
         "positives": ["## Eligibility\n\nThere are 2 ways to qualify."], "positive_snippet_ids": ["4"],
         "negatives": ["# 3. Low income\n\nYou may apply directly to your supplier."], "scenarios": []},
    ])
    ds = load_traindata(tmp_path, "orsharc")
    assert [d.parsed.title for d in ds.documents] == ["Warm home discount"]
    doc = ds.documents[0].parsed
    assert [s.title for s in doc.children] == ["Eligibility", "3. Low income"]  # snippet ids give reading order
    assert doc.count("passage") == 2  # the same snippet named by two records is one passage
    first, second = ds.questions
    assert first.query == "I get Pension Credit. Can I apply directly?"  # the scenario in front, as ConditionalQA
    assert first.gold[0].heading_path == ("3. Low income",) and first.gold[0].item == 1
    assert second.gold[0].heading_path == ("Eligibility",) and second.gold[0].item == 0


def test_pubmedqa_abstract_parts_are_sections_and_the_conclusion_is_gold(tmp_path: Path) -> None:
    _write(tmp_path, "pubmedqa_l", [
        {"id": "p1", "question": "Does it work?", "doc_id": "1", "doc_title": None,
         "positives": ["It works."], "positive_headings": ["CONCLUSIONS"], "negatives": [],
         "contexts": [{"heading": "BACKGROUND", "text": "We asked whether it works."},
                      {"heading": "RESULTS", "text": "It did."}]},
    ])
    ds = load_traindata(tmp_path, "pubmedqa")
    doc = ds.documents[0].parsed
    assert [s.title for s in doc.children] == ["BACKGROUND", "RESULTS", "CONCLUSIONS"]
    assert ds.questions[0].gold[0].heading_path == ("CONCLUSIONS",) and ds.questions[0].gold[0].item == 2


def _pools(rng: np.random.Generator, n: int, lex_signal: float) -> list[Pool]:
    """Pools where the gold's cosine is a little higher and its BM25 higher by ``lex_signal``."""
    out = []
    ci, li = FEATURES.index("g_cos_max"), FEATURES.index("g_lex_max")
    for _ in range(n):
        x = np.zeros((12, len(FEATURES)), np.float32)
        x[:, ci] = rng.normal(size=12)
        x[:, li] = rng.normal(size=12)
        x[0, ci] += 0.6
        x[0, li] += lex_signal
        gold = np.zeros((12, 3), np.float32)
        gold[0] = 1
        out.append(Pool(x, gold))
    return out


def test_listwise_fit_moves_weight_to_evidence_that_pays_and_inf_keeps_the_prior() -> None:
    rng = np.random.default_rng(0)
    prior = prior_model("passage").weights
    pools = _pools(rng, 200, lex_signal=2.0)
    assert np.array_equal(fit_listwise([pools], prior, float("inf")), prior)
    w = fit_listwise([pools], prior, 0.01)
    li, ci = FEATURES.index("g_lex_max"), FEATURES.index("g_cos_max")
    assert w[li] / w[ci] > prior[li] / prior[ci]
    assert hit1(pools, w)["passage"] > hit1(pools, prior)["passage"]


def test_loco_prefers_the_choice_that_costs_on_no_held_out_collection() -> None:
    rng = np.random.default_rng(1)
    prior = prior_model("passage").weights
    # lexical evidence pays on two collections and misleads on the third: fitting freely on two of them costs
    # the held-out third, so the strongest pull to the prior's ranking (or the prior itself) must win
    colls = {"a": _pools(rng, 120, 2.5), "b": _pools(rng, 120, 2.5), "c": _pools(rng, 120, -2.5)}
    out = loco(colls, prior, {"current": {"strength": float("inf")}, "free": {"strength": 0.001}})
    assert out["choices"]["free"]["worst_change"] < 0
    assert out["chosen"] == "current"
