"""Training data from adaptive retrieval's calibration search (DeepRAG): the trajectories it found, exported for
fine-tuning. Research, not the product: ``shelfwise calibrate-adaptive`` fits and stores the threshold only.

    .venv/bin/python -m training.adaptive_export --qa labelled.jsonl --out adaptive-data [--db LIB] [-c COLL]

Runs :func:`shelfwise.core.answers.adaptive_search.calibrate_adaptive` without storing the threshold, then writes:

* ``supervised.jsonl``, one found trajectory per line, the chat-messages format common fine-tuning tools read:
  ``messages`` = ``[{"role": "user", "content": question}, {"role": "assistant", "content": narrative}]`` where
  the narrative is ``Follow up: <sub-question>`` / ``Decision: retrieve`` or ``Decision: answer from own knowledge``
  / ``Intermediate answer: <answer>`` per step, then ``So the final answer is: <answer>``; plus ``question``,
  ``answer`` (the gold), ``final_answer``, ``retrievals`` and ``trajectory``: per step ``question``, ``answer``,
  ``source`` ("documents" | "model"), ``p_retrieve``, ``passages`` (``node_id``, ``path``, ``title``,
  ``heading_path``, ``location``, ``text`` of the passages retrieved for it; empty for model steps).
* ``preference.jsonl``, one line per step of a found trajectory, the DPO format TRL reads: ``prompt`` (the question
  and the narrative so far, ending with ``Decision:``), ``chosen`` (the cheaper-correct choice and its
  intermediate answer), ``rejected`` (the other branch and its answer). A step that answered from the model
  prefers not retrieving (it was enough); a step that retrieved prefers retrieving (the cheaper branch, explored
  first, did not lead to the gold answer).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from shelfwise.core.answers.adaptive_search import QuestionOutcome, TreeResult
from shelfwise.core.answers.types import Step
from shelfwise.core.navigation.trace import Hit, to_dict

DECISION_TEXT = {"model": "answer from own knowledge", "documents": "retrieve"}


def narrative(steps: Sequence[Step]) -> str:
    lines = []
    for s in steps:
        lines += [f"Follow up: {s.question}", f"Decision: {DECISION_TEXT[s.source]}",
                  f"Intermediate answer: {s.answer}"]
    return "\n".join(lines)


def _passage(h: Hit) -> dict[str, Any]:
    return {"node_id": h.node_id, "path": h.path, "title": h.title, "heading_path": list(h.heading_path),
            "location": to_dict(h.location), "text": h.text}


def supervised_record(question: str, gold: Sequence[str], tree: TreeResult) -> dict[str, Any]:
    assert tree.trajectory is not None
    steps = tree.trajectory
    content = narrative(steps) + f"\nSo the final answer is: {tree.final_answer}"
    return {
        "messages": [{"role": "user", "content": question}, {"role": "assistant", "content": content}],
        "question": question, "answer": list(gold), "final_answer": tree.final_answer,
        "retrievals": tree.retrievals,
        "trajectory": [{"question": s.question, "answer": s.answer, "source": s.source,
                        "p_retrieve": round(s.p_retrieve, 6), "passages": [_passage(h) for h in s.hits]}
                       for s in steps],
    }


def preference_records(question: str, tree: TreeResult) -> list[dict[str, str]]:
    """One DPO pair per step of the found trajectory: the choice taken vs the other branch at the same point."""
    assert tree.trajectory is not None
    out = []
    for i, (choice, step) in enumerate(zip(tree.choices, tree.trajectory, strict=True)):
        other = "documents" if choice == "model" else "model"
        alt = tree.children.get((*tree.choices[:i], other))
        if alt is None:
            continue
        prefix = narrative(tree.trajectory[:i])
        prompt = f"Question: {question}\n" + (prefix + "\n" if prefix else "") + f"Follow up: {step.question}\n"
        prompt += "Decision:"
        out.append({
            "prompt": prompt,
            "chosen": f" {DECISION_TEXT[choice]}\nIntermediate answer: {step.answer}",
            "rejected": f" {DECISION_TEXT[other]}\nIntermediate answer: {alt.answer}",
        })
    return out


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    return n


def export(outcomes: Sequence[QuestionOutcome], out_dir: Path) -> dict[str, str]:
    """Write the two files for the solved outcomes into ``out_dir``; returns their paths by kind."""
    solved = [o for o in outcomes if o.solved]
    out_dir.mkdir(parents=True, exist_ok=True)
    sup, pref = out_dir / "supervised.jsonl", out_dir / "preference.jsonl"
    write_jsonl(sup, (supervised_record(o.item.question, o.item.answers, o.tree) for o in solved))
    write_jsonl(pref, (r for o in solved for r in preference_records(o.item.question, o.tree)))
    return {"supervised": str(sup), "preference": str(pref)}


def main(argv: list[str] | None = None) -> int:
    from shelfwise.core.answers.adaptive_search import calibrate_adaptive, load_qa
    from shelfwise.core.paths import default_db
    from shelfwise.core.settings import Settings
    from shelfwise.core.shelf import Shelf

    p = argparse.ArgumentParser(prog="python -m training.adaptive_export", description=__doc__.split("\n\n")[0])
    p.add_argument("--qa", type=Path, required=True, help="JSON Lines: question, answer, optional collection")
    p.add_argument("--out", type=Path, default=Path("adaptive-data"))
    p.add_argument("--db", type=Path, default=None, help="the library (default: the user's)")
    p.add_argument("-c", "--collection", default="default")
    p.add_argument("--max-sub", type=int, default=3)
    p.add_argument("--max-expansions", type=int, default=16)
    a = p.parse_args(argv)
    items = load_qa(a.qa)
    with Shelf(Settings(db_path=a.db or default_db())) as shelf:
        for name in {it.collection or a.collection for it in items}:
            shelf.refresh(name)
        report = calibrate_adaptive(shelf, items, collection=a.collection, max_sub=a.max_sub,
                                    max_expansions=a.max_expansions, save=False)
    for kind, path in export(report.outcomes, a.out).items():
        print(f"{kind}: {path}")
    print(f"{report.solved}/{report.questions} questions solved")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
