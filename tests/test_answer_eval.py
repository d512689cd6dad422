"""Answer evaluation (evaluation/answers.py, core/answers/matching.py): SQuAD-style scoring and the three
strategies, with scripted models."""

from __future__ import annotations

import pytest

from shelfwise.core.answers.matching import answer_matches, exact_match, f1_score, normalize_answer
from shelfwise.evaluation.answers import run_answer_eval
from shelfwise.evaluation.datasets import EvalQuestion
from tests.test_adaptive import _router
from tests.test_answer import FakeShelf


def test_normalisation_and_scores() -> None:
    assert normalize_answer("The  Answer, is: [1] 'Paris'!") == "answer is paris"
    assert exact_match("Paris [1].", ["paris"]) == 1.0 and exact_match("in Paris", ["Paris"]) == 0.0
    assert f1_score("in Paris", ["Paris"]) == pytest.approx(2 / 3)
    assert f1_score("", ["x"]) == 0.0 and f1_score("yes", ["no", "yes"]) == 1.0
    assert answer_matches("It is in Paris [1].", "paris") and answer_matches("Paris", ["Lyon", "Paris"])
    assert not answer_matches("Parisian food", "paris") and not answer_matches("anything", [""])


def test_three_strategies(tmp_path) -> None:
    closed = {"What is the capital of France?": ("Paris", -0.2), "How much leave do new staff get?": ("10", -3.0)}
    s = FakeShelf(tmp_path, _router(closed, docs_answer="25 days [1]."))
    qs = [EvalQuestion("1", "What is the capital of France?", [], answers=["Paris"]),
          EvalQuestion("2", "How much leave do new staff get?", [], answers=["25 days"]),
          EvalQuestion("3", "Unlabelled?", [], answers=[])]
    report = run_answer_eval(s, qs)
    m = {k: v.metrics for k, v in report.strategies.items()}
    assert report.questions == 2  # questions without gold answers are skipped
    assert m["no_retrieval"]["exact_match"] == 0.5 and m["no_retrieval"]["retrievals_per_question"] == 0
    assert m["always_retrieve"]["exact_match"] == 0.5 and m["always_retrieve"]["retrievals_per_question"] == 1
    # adaptive scores what the app shows: the documents' answer; "Paris" came from the model's own knowledge (a
    # step, not the answer: core/answers/adaptive.py), so only the retrieved question counts
    assert m["adaptive"]["exact_match"] == 0.5 and m["adaptive"]["retrievals_per_question"] == 0.5
    rows = {r["qid"]: r for r in report.strategies["adaptive"].per_query}
    assert rows["1"]["prediction"] == "" and rows["2"]["prediction"] == "25 days"
    assert "| adaptive | 0.5 |" in report.markdown()
    assert set(report.to_json()["strategies"]) == {"no_retrieval", "always_retrieve", "adaptive"}
    with pytest.raises(ValueError, match="unknown strategies"):
        run_answer_eval(s, qs, strategies=("oracle",))
    s.store.close()


def test_answer_modes_on_a_fake_shelf(tmp_path) -> None:
    from shelfwise.evaluation.answer_modes import fact_match, markdown, run_mode_eval
    from tests.test_answer import ScriptedBackend

    assert fact_match("A: Come to reception at 09:00 on your first day.", ["09:00 at reception"])
    assert not fact_match("Come to reception at 10:00.", ["09:00 at reception"])
    s = FakeShelf(tmp_path, ScriptedBackend("New staff get 10 days [1]."))
    qs = [EvalQuestion("1", "How much paid annual leave do new employees receive?", [], answers=["25 days"]),
          EvalQuestion("2", "Is leave paid?", [], answers=["yes"])]
    report = run_mode_eval(s, qs)
    m = report.metrics
    assert m["span_questions"] == 1 and m["yes_no_questions_marked"] == 1
    assert m["extractive"]["contains_gold"] == 1.0 and m["generated"]["contains_gold"] == 0.0
    assert m["generated"]["answers_with_facts_not_in_cited"] == 2  # "10" is in no passage, for either question
    assert m["shown"]["answers_with_facts_not_in_cited"] == 0 and m["generated_rejected_share"] == 1.0
    assert "| shown |" in markdown(report)
