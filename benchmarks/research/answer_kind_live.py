"""The number rule of the grounding check (:func:`~shelfwise.core.answers.grounding.off_the_subject`) on live answers:
``shelfwise eval QUESTIONS --answers`` runs in this process with the check's inputs recorded (the generated text, the
cited passages, the question, the extracted answer), then each recorded answer is judged with and without the rule.
:mod:`benchmarks.research.answer_kind` replays recorded answers with wider sources; this sees what the rule sees in
``ask``.

    shelfwise --db /tmp/s.db ingest resources/sample
    .venv/bin/python benchmarks/research/answer_kind_live.py --db /tmp/s.db eval \\
        resources/sample_questions.jsonl --answers \\
        --methods navigation --no-sweep --out /tmp/rep

    .venv/bin/python benchmarks/research/answer_kind_live.py eval conditionalqa --split tune --answers \\
        --methods navigation --no-sweep --out /tmp/rep

(every argument is passed to ``shelfwise``; the gold: the questions' ``answer`` field, ConditionalQA's answers).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from shelfwise.core.answers import from_passages
from shelfwise.core.answers.grounding import Grounding, asked_kind, check_grounding, off_the_subject
from shelfwise.core.answers.matching import answer_matches


def golds(argv: list[str]) -> dict[str, list[str]]:
    """The gold answers by question as the walk reads it: a .jsonl of questions, or ConditionalQA (scenario and
    question, the split given with --split)."""
    if "conditionalqa" in argv:
        from shelfwise.evaluation.datasets import load_conditionalqa
        from shelfwise.evaluation.run import shared_dir

        split = argv[argv.index("--split") + 1] if "--split" in argv else "test"
        ds = load_conditionalqa(shared_dir() / "evaldata" / "conditionalqa_dev", answerable_only=False, split=split)
        return {q.query: q.answers for q in ds.questions}
    questions = Path(next(a for a in argv if a.endswith(".jsonl")))
    return {q["question"]: [q["answer"]] for q in map(json.loads, questions.read_text().splitlines()) if q}


def main(argv: list[str]) -> None:
    calls: list[dict[str, Any]] = []
    real = from_passages.check_grounding

    def recording(text: str, sources: Sequence[str], question: str = "", evidence: str = "") -> Grounding:
        calls.append({"text": text, "sources": list(sources), "question": question, "evidence": evidence})
        return real(text, sources, question, evidence=evidence)

    from_passages.check_grounding = recording  # type: ignore[assignment]
    from shelfwise.app.cli.main import main as cli_main

    try:
        cli_main(argv, standalone_mode=False)
    except SystemExit:
        pass
    gold = golds(argv)
    out: dict[str, Any] = {"answers_checked": len(calls),
                           "number_questions": sum(asked_kind(c["question"]) == "number" for c in calls)}
    kept = []
    for c in calls:
        verdict = check_grounding(c["text"], c["sources"], c["question"], evidence=c["evidence"])
        if verdict.ok or verdict.reason.startswith("its number"):  # kept but for the number rule (the last one)
            kept.append((c, verdict.text or c["text"]))
    out["kept_before_the_number_rule"] = len(kept)
    for name, closest in (("any", False), ("closest", True)):
        rejected = [(c["question"], text, answer_matches(text, gold.get(c["question"], []))) for c, text in kept
                    if off_the_subject(text, c["question"], c["sources"], c["evidence"], closest=closest)]
        out[f"rejected_{name}"] = {"n": len(rejected), "holding_gold": sum(g for _, _, g in rejected),
                                   "examples": [{"question": q, "answer": t[:160], "holds_gold": g}
                                                for q, t, g in rejected]}
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1:])
