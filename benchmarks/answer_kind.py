"""Does a kept generated answer answer the question? The grounding check's last rule (issue 38, case 5:
:func:`~shelfwise.core.answers.grounding.off_the_question`) replayed on recorded answers, no model run:

* the ConditionalQA TUNE half: the answers the bundled model wrote and the check kept in
  ``docs/eval/answers-conditionalqa-tune.json`` (the question as the walk read it: scenario and question);
* the sample: the model's answers in ``docs/eval/answer-models.json`` (the bundled model, both inputs);
* the traps in ``tests/data/answer_traps.jsonl``: a wrong answer whose facts are all in the source, and a right one.

Per set: answers kept before, how many the rule now rejects, and of those how many held the gold answer (a good
answer lost) or did not (a wrong answer no longer shown).

    .venv/bin/python benchmarks/answer_kind.py --out docs/eval/answer-kind.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from shelfwise.core.answers.grounding import asked_kind, off_the_question
from shelfwise.core.answers.matching import answer_matches
from shelfwise.core.evaluation.datasets import load_conditionalqa
from shelfwise.core.evaluation.run import shared_dir

ROOT = Path(__file__).resolve().parents[1]


def tally(items: list[tuple[str, str, bool]]) -> dict[str, Any]:
    """``items``: (question, kept answer, holds the gold). What the rule does to them."""
    rejected = [(q, a, good) for q, a, good in items if off_the_question(a, q)]
    return {"kept_before": len(items), "rejected_now": len(rejected),
            "rejected_holding_gold": sum(1 for _, _, good in rejected if good),
            "rejected_without_gold": sum(1 for _, _, good in rejected if not good),
            "kinds_asked": {k: sum(1 for q, _, _ in items if asked_kind(q) == k)
                            for k in ("address", "date", "number", "person", "")},
            "examples": [{"question": q[:160], "answer": a[:160], "holds_gold": good,
                          "reason": off_the_question(a, q)} for q, a, good in rejected[:12]]}


def conditionalqa_tune() -> dict[str, Any]:
    recorded = json.loads((ROOT / "docs" / "eval" / "answers-conditionalqa-tune.json").read_text())
    ds = load_conditionalqa(shared_dir() / "evaldata" / "conditionalqa_dev", answerable_only=False, split="tune")
    query = {q.qid: q.query for q in ds.questions}
    items = [(query[r["qid"]], r["texts"]["grounded_generated"], bool(r["contains"].get("grounded_generated")))
             for r in recorded["rows"] if r["texts"].get("grounded_generated") and r["qid"] in query]
    return tally(items)


def sample() -> dict[str, Any]:
    recorded = json.loads((ROOT / "docs" / "eval" / "answer-models.json").read_text())
    items = []
    for cell, data in recorded["cells"].items():
        if not cell.startswith("gemma-3-270m"):
            continue
        for ex in data.get("examples", []):
            if ex.get("accepted") and ex.get("generated"):
                items.append((ex["q"], ex["generated"], answer_matches(ex["generated"], [ex["gold"]])))
    return tally(items)


def traps() -> dict[str, Any]:
    rows = [json.loads(line) for line in (ROOT / "tests" / "data" / "answer_traps.jsonl").read_text().splitlines()
            if line.strip()]
    wrong = [(t["question"], t["wrong"], False) for t in rows if t["wrong"]]
    right = [(t["question"], t["right"], True) for t in rows]
    return {"wrong": tally(wrong), "right": tally(right)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    report = {"conditionalqa_tune": conditionalqa_tune(), "sample": sample(), "traps": traps()}
    text = json.dumps(report, indent=1, ensure_ascii=False)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
