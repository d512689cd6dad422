"""Does a kept generated answer answer the question? The grounding check's last rules (issue 38, case 5:
:func:`~shelfwise.core.answers.grounding.off_the_question`, the kind asked for; and for number questions
:func:`~shelfwise.core.answers.grounding.off_the_subject`, the number of the clause about what was asked) replayed on
recorded answers, no model run:

* the ConditionalQA TUNE half: the answers the bundled model wrote and the check kept in
  ``docs/eval/answers-conditionalqa-tune.json`` (the question as the walk read it: scenario and question);
* the sample: the model's answers in ``docs/eval/answer-models.json`` (the bundled model, both inputs);
* the traps in ``tests/data/answer_traps.jsonl``: a wrong answer whose facts are all in the source, and a right one.

Per set: answers kept before, how many each rule rejects, and of those how many held the gold answer (a good
answer lost) or did not (a wrong answer no longer shown). ``kind`` is the kind rule alone (before the number rule);
``subject`` what the number rule rejects on top of it, as shipped (``closest``: the answer's number must sit in a
clause about the question's subject at least as closely as another number) and relaxed (``any``: a clause sharing
one word with the subject suffices).

The recorded answers do not keep the passages they cited, so the number rule is replayed with wider sources than it
sees live: for ConditionalQA the whole guide the question is about (and the recorded extracted answer as the
evidence), for the sample the whole sample file the question is about (no evidence). More clauses compete there, so
these are upper bounds on what it rejects; the traps give their one source.

    .venv/bin/python benchmarks/research/answer_kind.py --out docs/eval/answer-kind.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from shelfwise.core.answers.grounding import asked_kind, off_the_question, off_the_subject
from shelfwise.core.answers.matching import answer_matches
from shelfwise.evaluation.datasets import load_conditionalqa
from shelfwise.evaluation.run import shared_dir

ROOT = Path(__file__).resolve().parents[2]


Item = tuple[str, str, bool, list[str], str]  # question, kept answer, holds the gold, sources, evidence


def tally(items: list[Item]) -> dict[str, Any]:
    """What the rules do to ``items``."""
    def summary(rejected: list[tuple[Item, str]]) -> dict[str, Any]:
        return {"rejected": len(rejected), "holding_gold": sum(1 for (_, _, good, _, _), _ in rejected if good),
                "without_gold": sum(1 for (_, _, good, _, _), _ in rejected if not good),
                "examples": [{"question": q[-160:], "answer": a[:160], "holds_gold": good, "reason": why}
                             for (q, a, good, _, _), why in rejected[:12]]}

    kind = [(it, off_the_question(it[1], it[0])) for it in items]
    rest = [it for it, why in kind if not why]
    out: dict[str, Any] = {
        "kept_before": len(items),
        "kinds_asked": {k: sum(1 for it in items if asked_kind(it[0]) == k)
                        for k in ("address", "date", "number", "person", "")},
        "kind": summary([(it, why) for it, why in kind if why]),
    }
    for name, closest in (("closest", True), ("any", False)):
        out[f"subject_{name}"] = summary([(it, why) for it in rest
                                          if (why := off_the_subject(it[1], it[0], it[3], it[4], closest=closest))])
    out["rejected_now"] = out["kind"]["rejected"] + out["subject_closest"]["rejected"]
    out["rejected_holding_gold"] = out["kind"]["holding_gold"] + out["subject_closest"]["holding_gold"]
    return out


def passages_text(parsed: Any) -> list[str]:
    return [n.text for n in parsed.nodes() if n.kind == "passage" and n.text]


def conditionalqa_tune() -> dict[str, Any]:
    recorded = json.loads((ROOT / "docs" / "eval" / "answers-conditionalqa-tune.json").read_text())
    root = shared_dir() / "evaldata" / "conditionalqa_dev"
    ds = load_conditionalqa(root, answerable_only=False, split="tune")
    query = {q.qid: q.query for q in ds.questions}
    guide = {d.path: passages_text(d.parsed) for d in ds.documents}
    with (root / "derived" / "dev_gold.jsonl").open(encoding="utf-8") as fh:
        url = {q["id"]: q["url"] for q in map(json.loads, fh)}
    items = [(query[r["qid"]], r["texts"]["grounded_generated"], bool(r["contains"].get("grounded_generated")),
              guide.get(url.get(r["qid"], ""), []), r["texts"].get("extractive", ""))
             for r in recorded["rows"] if r["texts"].get("grounded_generated") and r["qid"] in query]
    out = tally(items)
    # a stress figure: the number rule without the extracted answer (live, its numbers are always kept)
    bare = tally([(q, a, good, src, "") for q, a, good, src, _ in items])
    out["without_evidence"] = {k: bare[k] for k in ("subject_closest", "subject_any")}
    return out


def sample() -> dict[str, Any]:
    from shelfwise.ingest import registry

    recorded = json.loads((ROOT / "docs" / "eval" / "answer-models.json").read_text())
    asked = [json.loads(line) for line in (ROOT / "resources" / "sample_questions.jsonl").read_text().splitlines()
             if line.strip()]
    file_of = {a["question"]: a["file"] for a in asked}
    texts = {f: passages_text(registry.parse(ROOT / "resources" / "sample" / f)) for f in set(file_of.values())}
    items: list[Item] = []
    for cell, data in recorded["cells"].items():
        if not cell.startswith("gemma-3-270m"):
            continue
        for ex in data.get("examples", []):
            if ex.get("accepted") and ex.get("generated"):
                items.append((ex["q"], ex["generated"], answer_matches(ex["generated"], [ex["gold"]]),
                              texts.get(file_of.get(ex["q"], ""), []), ""))
    return tally(items)


def traps() -> dict[str, Any]:
    rows = [json.loads(line) for line in (ROOT / "tests" / "data" / "answer_traps.jsonl").read_text().splitlines()
            if line.strip()]
    wrong: list[Item] = [(t["question"], t["wrong"], False, [t["source"]], "") for t in rows if t["wrong"]]
    right: list[Item] = [(t["question"], t["right"], True, [t["source"]], "") for t in rows]
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
