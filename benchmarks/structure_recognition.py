"""How well the structural-question rules recognise structural questions and leave ordinary ones alone.

The question set (benchmarks/structure_questions.jsonl: over the bundled sample and ../shared/corpus files) is split
by a hash of each question into a tune part (the rules were adjusted looking at its misses only) and a test part
(reported). Usage::

    .venv/bin/python benchmarks/structure_recognition.py [--split tune|test|all] [--misses] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from shelfwise.core.answers.structure_intent import recognise
from shelfwise.core.navigation.scope import parse_question

QUESTIONS = Path(__file__).with_name("structure_questions.jsonl")


def load(split: str = "all") -> list[dict]:
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if split == "all" or r["split"] == split]


def measure(rows: list[dict]) -> dict:
    structural = [r for r in rows if r["kind"] != "ordinary"]
    ordinary = [r for r in rows if r["kind"] == "ordinary"]
    misses, wrong_kind, misfires = [], [], []
    for r in structural:
        intent = recognise(parse_question(r["q"]).text)
        if intent is None:
            misses.append(r["q"])
        elif intent.kind != r["kind"]:
            wrong_kind.append(f"{r['q']} -> {intent.kind} (expected {r['kind']})")
    for r in ordinary:
        intent = recognise(parse_question(r["q"]).text)
        if intent is not None:
            misfires.append(f"{r['q']} -> {intent.kind}")
    n_s, n_o = len(structural), len(ordinary)
    return {
        "structural": n_s, "ordinary": n_o,
        "recognised": round((n_s - len(misses)) / n_s, 3) if n_s else None,
        "kind_correct": round((n_s - len(misses) - len(wrong_kind)) / n_s, 3) if n_s else None,
        "misfire": round(len(misfires) / n_o, 3) if n_o else None,
        "misses": misses, "wrong_kind": wrong_kind, "misfires": misfires,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=["tune", "test", "all"], default="test")
    ap.add_argument("--misses", action="store_true", help="List the misses, wrong kinds and misfires.")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    report = measure(load(args.split))
    shown = report if args.misses else {k: v for k, v in report.items()
                                         if k not in ("misses", "wrong_kind", "misfires")}
    print(json.dumps(shown, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"split": args.split, **report}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
