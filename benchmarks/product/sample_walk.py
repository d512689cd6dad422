"""What a user reads on the bundled sample, question by question through ``shelfwise ask --json`` as typed (the
defaults: generation on), graded, side by side with the release before in one run (issue 48).

The questions (``sample_walk.jsonl``, written by the lead from the six sample documents, of every kind an employee
asks, with a few the documents do not answer) stand in for the tester's, which the team does not get. Each gold is
a list of strings that what is shown must all hold (case and spacing aside; "No|unpaid": either will do):

* ``first``: what is shown first holds the gold: the short answer when there is one (a wrong value shown large is
  wrong even when the sentence beneath it is right), else the sentence(s);
* ``short``: a short answer is shown and holds the gold;
* ``wrong_text``: a model text is shown and does not hold the gold (for a question the documents do not answer: any
  model text shown);
* ``not_found``: of the questions the documents do not answer, those said "Not found in your documents".

    .venv/bin/python benchmarks/product/sample_walk.py --db LIBRARY --before DIR --out docs/eval/X.json

``--db``: a library of the bundled sample (``shelfwise --db LIBRARY ingest resources/sample``); ``--before``: a
source tree of the release before, laid out as ``DIR/shelfwise/{app,core,ingest,resources}`` and put first on
``PYTHONPATH`` (the library is read, never written, by both).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CLI = "import sys; from shelfwise.app.cli.main import main; sys.argv[0] = 'shelfwise'; main()"


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").lower()


def holds(text: str, gold: list[str]) -> bool:
    return bool(gold) and all(any(_norm(g) in _norm(text) for g in alternatives.split("|")) for alternatives in gold)


def ask(question: str, db: Path, tree: str | None, extra: list[str]) -> dict[str, Any]:
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = tree + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", CLI, "--db", str(db), "ask", question, "--json", *extra],
                          capture_output=True, text=True, env=env, timeout=900)
    try:
        return dict(json.loads(done.stdout))
    except json.JSONDecodeError:
        return {"error": done.stderr[-500:]}


def grade(item: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    short = (out.get("short_answer") or {}).get("text") or ""
    first = out.get("answer") or ""
    generated = out.get("generated") or ""
    row = {"question": item["q"], "short": short, "answer": first[:400], "generated": generated,
           "found": bool(out.get("found")), "error": out.get("error", "")}
    if item.get("unanswerable"):
        row.update(unanswerable=True, not_found=not row["found"], wrong_text=bool(generated))
    else:
        gold = item["gold"]
        row.update(unanswerable=False, first=holds(short, gold) if short else holds(first, gold),
                   short=short, short_holds=bool(short) and holds(short, gold),
                   wrong_text=bool(generated) and not holds(generated, gold))
    return row


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    answerable = [r for r in rows if not r["unanswerable"]]
    unanswerable = [r for r in rows if r["unanswerable"]]
    return {"answerable": len(answerable), "first_holds_gold": sum(r["first"] for r in answerable),
            "short_holds_gold": sum(r["short_holds"] for r in answerable),
            "model_texts_shown": sum(bool(r["generated"]) for r in rows),
            "wrong_texts_shown": sum(r["wrong_text"] for r in rows),
            "unanswerable": len(unanswerable), "said_not_found": sum(r["not_found"] for r in unanswerable),
            "errors": sum(bool(r["error"]) for r in rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--questions", type=Path, default=HERE / "sample_walk.jsonl")
    parser.add_argument("--before", default=None, help="the release before's source tree (see above)")
    parser.add_argument("--no-generate", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    items = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    extra = ["--no-generate"] if args.no_generate else []
    trees = {"after": None, **({"before": args.before} if args.before else {})}
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for item in items:  # alternated question by question: both trees see the same load
        for name, tree in trees.items():
            t0 = time.perf_counter()
            row = grade(item, ask(item["q"], args.db, tree, extra))
            row["seconds"] = round(time.perf_counter() - t0, 2)
            rows[name].append(row)
        after = rows["after"][-1]
        mark = "ok " if after.get("first", after.get("not_found")) else "BAD"
        print(f"{mark} {item['q']} => {after['short']!r} | {after['answer'][:100]!r}", flush=True)
    report = {"questions": str(args.questions.name), "generate": not args.no_generate,
              "summary": {name: summary(r) for name, r in rows.items()}, "rows": rows}
    print(json.dumps(report["summary"], indent=1))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
