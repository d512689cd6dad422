"""``shelfwise eval DATASET --answers`` answers the questions of the set named (evaluation/answers.py): SQuAD's and
XQuAD's in their own evaluation collection, ConditionalQA's half by split. Before, every dataset but a ``.jsonl``
file was answered with ConditionalQA's questions (docs/eval/answers.md). The answering itself is replaced by a
recorder here (what is checked is which questions go to which collection); the real answering through the CLI:
tests/test_sample_answers.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from shelfwise.evaluation import answer_modes
from shelfwise.evaluation.answers import run_answer_eval_cli

LIBRARY: Any = SimpleNamespace(models=SimpleNamespace(settings=None))  # only its models are handed on


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def record(library: Any, questions: list[Any], *, collection: str | None = None, progress: Any = None) -> Any:
        calls.append({"qids": [q.qid for q in questions], "queries": [q.query for q in questions],
                      "collection": collection, "library_collection": library.collection})
        return SimpleNamespace(metrics={}, rows=[])

    monkeypatch.setattr(answer_modes, "run_mode_eval", record)
    monkeypatch.setattr(answer_modes, "markdown", lambda report: "")
    return calls


@pytest.mark.parametrize(("dataset", "lang", "collection"), [("xquad", "de", "xquad-de"), ("squad", None, "squad")])
def test_squad_and_xquad_are_answered_with_their_own_questions(asked: list[dict[str, Any]], tmp_path: Path,
                                                               dataset: str, lang: str | None,
                                                               collection: str) -> None:
    run_answer_eval_cli(LIBRARY, dataset, limit=5, db_path=tmp_path / "e.db", lang=lang)
    (call,) = asked
    assert call["collection"] == call["library_collection"] and call["collection"].startswith(collection)
    assert len(call["qids"]) == 5 and not any(q.startswith("dev-") for q in call["qids"])  # ConditionalQA's are dev-N
    if lang == "de":
        assert any(" der " in q or " die " in q or " das " in q for q in call["queries"]), call["queries"]


def test_conditionalqa_is_answered_by_its_half(asked: list[dict[str, Any]], tmp_path: Path) -> None:
    run_answer_eval_cli(LIBRARY, "conditionalqa", limit=3, db_path=tmp_path / "e.db", split="test")
    (call,) = asked
    assert call["collection"] == "conditionalqa" and len(call["qids"]) == 3
    assert all(q.startswith("dev-") for q in call["qids"])
