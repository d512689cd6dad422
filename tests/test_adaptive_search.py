"""DeepRAG's calibration tree search (core/adaptive_search.py): ordering, threshold fitting, command (the training
data export: tests/test_adaptive_export.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from shelfwise.core.answers.adaptive import get_threshold, set_threshold
from shelfwise.core.answers.adaptive_search import (
    QAItem,
    TreeResult,
    best_first_search,
    calibrate_adaptive,
    fit_threshold,
    load_qa,
)
from shelfwise.core.answers.types import Step
from tests.test_adaptive import _router
from tests.test_answer import FakeShelf


# --------------------------------------------------------------------------- the search, with an oracle
def _oracle(correct: set[tuple[str, ...]], n: int = 3, max_expansions: int = 16) -> tuple[TreeResult, list]:
    calls: list[tuple[int, str]] = []

    def step_fn(i: int, choice: str, prefix: list[Step]) -> Step:
        calls.append((i, choice))
        return Step(f"q{i}", f"{choice}-{i}", choice, p_retrieve=0.1 * i, hits=[])

    def final_fn(steps: list[Step]) -> str:
        return "|".join(s.source for s in steps)

    tree = best_first_search(n, step_fn, final_fn, lambda a: tuple(a.split("|")) in correct,
                             max_expansions=max_expansions)
    return tree, calls


def test_cheapest_correct_trajectory_is_found_first() -> None:
    expensive = ("documents", "documents", "documents")
    cheap = ("model", "documents", "model")
    tree, _ = _oracle({expensive, cheap})
    assert tree.choices == cheap and tree.retrievals == 1 and tree.final_answer == "model|documents|model"
    retrievals = [sum(c == "documents" for c in e.choices) for e in tree.explored]
    assert retrievals == sorted(retrievals)  # complete trajectories judged cheapest first
    assert retrievals[0] == 0 and all(not e.correct for e in tree.explored[:-1]) and tree.explored[-1].correct
    assert [s.source for s in tree.trajectory] == list(cheap)


def test_model_only_trajectory_needs_one_leaf() -> None:
    tree, calls = _oracle({("model", "model", "model")})
    assert tree.retrievals == 0 and len(tree.explored) == 1 and tree.expansions == 3
    assert len(calls) == 6  # both branches of each expanded node are computed


def test_expansion_bound_and_unsolvable() -> None:
    tree, _ = _oracle(set())
    assert tree.trajectory is None and len(tree.explored) == 8 and tree.expansions == 7
    tree, _ = _oracle({("documents", "documents", "documents")}, max_expansions=3)
    assert tree.trajectory is None and tree.expansions == 3


# --------------------------------------------------------------------------- threshold
def test_fit_threshold_separates_choices() -> None:
    t, agreement = fit_threshold([(0.1, False), (0.2, False), (0.7, True), (0.9, True)])
    assert agreement == 1.0 and t == 0.5  # the prior 0.5 lies inside the best interval (0.2, 0.7]
    t, agreement = fit_threshold([(0.6, False), (0.7, False), (0.8, True), (0.95, True)])
    assert agreement == 1.0 and t == pytest.approx(0.75)
    t, agreement = fit_threshold([(0.1, True), (0.2, False), (0.3, True), (0.4, True)])
    assert agreement == 0.75 and t == pytest.approx(0.25)  # ties with 'always retrieve': nearer the prior
    t, agreement = fit_threshold([(0.1, False), (0.2, True), (0.3, False), (0.9, True)], prior=0.25)
    assert agreement == 0.75 and t == pytest.approx(0.15)  # best intervals (0.1, 0.2] and (0.3, 0.9]
    assert fit_threshold([]) is None
    t, _ = fit_threshold([(0.3, True), (0.9, True)])
    assert t == 0.15  # all retrieved: midpoint of [0, 0.3]


def test_load_qa(tmp_path: Path) -> None:
    p = tmp_path / "qa.jsonl"
    p.write_text('{"question": "Q1?", "answer": "a"}\n\n{"question": "Q2?", "answer": ["b", "c"], '
                 '"collection": "x"}\n')
    assert load_qa(p) == [QAItem("Q1?", ["a"]), QAItem("Q2?", ["b", "c"], "x")]
    p.write_text('{"question": "Q1?"}\n')
    with pytest.raises(ValueError, match=r"qa\.jsonl:1"):
        load_qa(p)


# --------------------------------------------------------------------------- end to end with a scripted model
def _labelled_shelf(tmp_path: Path) -> FakeShelf:
    closed = {"What is the capital of France?": ("Paris", -0.2),  # known: p ~ 0.14
              "How much leave do new staff get?": ("10 days", -3.0)}  # wrong, p ~ 0.73
    return FakeShelf(tmp_path, _router(closed, docs_answer="25 days [1]."))


def test_calibrate_adaptive_fits_and_stores(tmp_path: Path) -> None:
    s = _labelled_shelf(tmp_path)
    items = [QAItem("What is the capital of France?", ["Paris"]),
             QAItem("How much leave do new staff get?", ["25 days"]),
             QAItem("What colour is the sky on Mars?", ["butterscotch"])]
    report = calibrate_adaptive(s, items)
    assert report.questions == 3 and report.solved == 2 and report.pairs == 2
    assert report.mean_retrievals == 0.5 and report.agreement == 1.0
    assert report.threshold == 0.5 and report.saved and get_threshold(s.store, s.backend) == 0.5
    assert [o.tree.trajectory[0].source for o in report.outcomes if o.solved] == ["model", "documents"]
    json.dumps(report.to_json())
    s.store.close()


def test_calibrate_adaptive_moves_a_bad_threshold(tmp_path: Path) -> None:
    s = _labelled_shelf(tmp_path)
    set_threshold(s.store, s.backend, 0.9)
    items = [QAItem("What is the capital of France?", ["Paris"]),
             QAItem("How much leave do new staff get?", ["25 days"])]
    report = calibrate_adaptive(s, items)
    assert report.previous_threshold == 0.9 and report.threshold is not None and 0.14 < report.threshold < 0.73
    assert get_threshold(s.store, s.backend) == report.threshold
    s.store.close()


def test_command_is_registered_with_an_example() -> None:
    from shelfwise.app.cli.main import main

    result = CliRunner().invoke(main, ["calibrate-adaptive", "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output and "--out" not in result.output  # training data: training/


def test_command_rejects_a_missing_collection(tmp_path: Path) -> None:
    from shelfwise.app.cli.main import main

    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"question": "Q?", "answer": "a"}\n')
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "lib.db"), "calibrate-adaptive", "--qa", str(qa),
                                       "--collection", "nope"])
    assert result.exit_code == 2 and "No collection named 'nope'" in result.output
