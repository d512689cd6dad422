"""The training-data export of adaptive retrieval's calibration search (training/adaptive_export.py, outside the
product): the chat-messages and DPO records, and the files written from a report's outcomes."""

from __future__ import annotations

import json
from pathlib import Path

from shelfwise.core.answers.adaptive_search import QAItem, TreeResult, calibrate_adaptive
from shelfwise.core.answers.types import Step
from tests.test_adaptive_search import _labelled_shelf
from tests.test_answer import HITS
from training.adaptive_export import export, preference_records, supervised_record


def _solved_tree() -> TreeResult:
    s0 = Step("Who leads the team?", "Ann Lee", "model", 0.2, [])
    s1 = Step("Where does it meet?", "Room 4B [1].", "documents", 0.8, [HITS[0]])
    alt0 = Step("Who leads the team?", "Bob [2].", "documents", 0.2, [HITS[1]])
    alt1 = Step("Where does it meet?", "In Paris", "model", 0.8, [])
    children = {("model",): s0, ("documents",): alt0, ("model", "model"): alt1, ("model", "documents"): s1}
    return TreeResult([s0, s1], ("model", "documents"), "Room 4B [1].", 2, [], children)


def test_supervised_record_fields() -> None:
    rec = supervised_record("Where does Ann's team meet?", ["room 4B"], _solved_tree())
    assert [m["role"] for m in rec["messages"]] == ["user", "assistant"]
    assert rec["messages"][0]["content"] == "Where does Ann's team meet?"
    content = rec["messages"][1]["content"]
    assert content.startswith("Follow up: Who leads the team?\nDecision: answer from own knowledge\n")
    assert "Decision: retrieve\nIntermediate answer: Room 4B [1]." in content
    assert content.endswith("So the final answer is: Room 4B [1].")
    assert rec["answer"] == ["room 4B"] and rec["retrievals"] == 1
    step = rec["trajectory"][1]
    assert set(step) == {"question", "answer", "source", "p_retrieve", "passages"}
    assert step["passages"][0]["path"] == "/docs/hr.pdf" and step["passages"][0]["location"]["label"] == "p. 1"
    json.dumps(rec)


def test_preference_records_prefer_the_cheaper_correct_choice() -> None:
    recs = preference_records("Where does Ann's team meet?", _solved_tree())
    assert [set(r) for r in recs] == [{"prompt", "chosen", "rejected"}] * 2
    assert recs[0]["prompt"].endswith("Follow up: Who leads the team?\nDecision:")
    assert recs[0]["chosen"].startswith(" answer from own knowledge") and "Bob [2]." in recs[0]["rejected"]
    assert "Intermediate answer: Ann Lee" in recs[1]["prompt"]
    assert recs[1]["chosen"].startswith(" retrieve") and recs[1]["rejected"].endswith("In Paris")




def test_export_writes_the_solved_trajectories(tmp_path: Path) -> None:
    s = _labelled_shelf(tmp_path)
    items = [QAItem("What is the capital of France?", ["Paris"]),
             QAItem("How much leave do new staff get?", ["25 days"]),
             QAItem("What colour is the sky on Mars?", ["butterscotch"])]
    report = calibrate_adaptive(s, items, save=False)
    files = export(report.outcomes, tmp_path / "out")
    assert files == {"supervised": str(tmp_path / "out" / "supervised.jsonl"),
                     "preference": str(tmp_path / "out" / "preference.jsonl")}
    sup = [json.loads(x) for x in (tmp_path / "out" / "supervised.jsonl").read_text().splitlines()]
    pref = [json.loads(x) for x in (tmp_path / "out" / "preference.jsonl").read_text().splitlines()]
    assert [r["trajectory"][0]["source"] for r in sup] == ["model", "documents"]
    assert len(pref) == 2 and pref[1]["chosen"].startswith(" retrieve")
    s.store.close()
