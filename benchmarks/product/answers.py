"""What the user reads, graded, side by side with the release before, in one run (issue 48).

Each tree (this checkout, and the release before it: a checkout of another commit, e.g. ``git worktree add --detach
/tmp/before cb39674``) answers the same questions through its own ``shelfwise eval ... --answers`` (the walk, the
extracted sentence, the model's text and its check, as ``ask`` does) with the default encoder; this script grades
the rows both write:

* ``short_contains_gold``: the value shown first (``Answer.short``) holds a gold answer (as whole words after SQuAD
  normalisation; for the sample's free-text golds, every number/date of the gold and half its other words). The
  release before shows no value (0 by construction);
* ``first_contains_gold``: what is shown first holds a gold answer (the value and the sentence; before: the sentence);
* ``wrong_text_shown``: the share of questions with a gold span answer where a model text is shown and holds no
  gold answer;
* ``not_found_precision`` / ``not_found_recall``: of the answers said "not found", the share whose question is not
  answerable; of the not-answerable questions, the share said "not found" (sets that have such questions).

The release before runs from a ``PYTHONPATH`` shim (``shelfwise/{core,app,ingest,resources}`` linked to its tree)
with its own ``SHELFWISE_HOME`` (its schema is older); its evaluation libraries are built there.

    .venv/bin/python benchmarks/product/answers.py --before /tmp/before --sets sample,cqa-tune,cqa-test \\
        --out docs/eval/answers-issue48.json
    sets: sample, cqa-tune, cqa-test (--limit-cqa N), squad (--limit-squad 500), xquad-de, xquad-zh (--limit-xquad
    300); --no-generate: the value and the sentence only; --after: a frozen checkout to run as this tree
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from shelfwise.core.answers.matching import answer_matches
from shelfwise.evaluation.answer_modes import fact_match

ROOT = Path(__file__).resolve().parents[2]
CLI = "from shelfwise.app.cli.main import main; main()"


def eval_args(name: str, args: argparse.Namespace, db: Path) -> tuple[list[str], str]:
    """The ``shelfwise eval`` arguments for a set, and the stem of the answers file it writes."""
    common = ["--answers", "--methods", "navigation", "--no-sweep", *(["--no-generate"] if args.no_generate else [])]
    if name == "sample":
        return ["--db", str(db), "eval", str(ROOT / "resources" / "sample_questions.jsonl"), *common], \
            "answers-sample_questions-all"
    if name.startswith("cqa-"):
        split = name.split("-", 1)[1]
        limit = ["--limit", str(args.limit_cqa)] if args.limit_cqa else []
        return ["eval", "conditionalqa", "--split", split, *limit, *common], f"answers-conditionalqa-{split}"
    if name == "squad":
        return ["eval", "squad", "--limit", str(args.limit_squad), *common], "answers-squad-all"
    lang = name.split("-", 1)[1]
    return ["eval", "xquad", "--lang", lang, "--limit", str(args.limit_xquad), *common], "answers-xquad-all"


def run_tree(tree: str, name: str, args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    """Answer the set with one tree's code; its rows."""
    out = work / tree / name
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.pop("SHELFWISE_EMBEDDER", None)  # the default encoder, as a new user gets
    db = work / tree / "sample.db"
    checkout = args.before if tree == "before" else args.after
    if checkout:
        # the tree's own code ahead of the installed package (a frozen snapshot keeps a long run on one commit)
        shim = work / f"{tree}-shim" / "shelfwise"
        shim.mkdir(parents=True, exist_ok=True)
        for d in ("core", "app", "ingest", "resources", "evaluation"):
            link = shim / d
            if not link.exists() and (Path(checkout) / d).exists():
                link.symlink_to(Path(checkout).resolve() / d)
        env["PYTHONPATH"] = str(shim.parent)
    if tree == "before":
        env["SHELFWISE_HOME"] = str(args.before_home)
    if name == "sample" and not db.exists():
        subprocess.run([sys.executable, "-c", CLI, "--db", str(db), "ingest",
                        str(ROOT / "resources" / "sample")], env=env, check=True, cwd="/tmp",
                       stdout=subprocess.DEVNULL)
    cli, stem = eval_args(name, args, db)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", CLI, *cli, "--out", str(out)], env=env, check=True,
                   cwd="/tmp", stdout=subprocess.DEVNULL)
    print(f"  {tree} {name}: {time.perf_counter() - t0:.0f} s", flush=True)
    files = sorted(out.glob(f"{stem}*.json")) or sorted(out.glob("answers-*.json"))
    return list(json.loads(files[0].read_text())["rows"])


def grade(rows: list[dict[str, Any]], free_text: bool) -> dict[str, Any]:
    def holds(text: str, gold: list[str]) -> bool:
        return bool(text) and (fact_match(text, gold) if free_text else answer_matches(text, gold))

    span = [r for r in rows if r["kind"] == "span"]
    unanswerable = [r for r in rows if r["kind"] == "unanswerable"]
    not_found = [r for r in rows if not r["found"]]
    short = [holds(r["texts"].get("short", ""), r["gold"]) for r in span]
    first = [holds(" ".join(x for x in (r["texts"].get("short", ""), r["texts"]["extractive"]) if x), r["gold"])
             for r in span]
    shown_text = [r for r in span if r["texts"]["grounded_generated"] != r["texts"]["extractive"]]
    wrong = [r for r in shown_text if not holds(r["texts"]["grounded_generated"], r["gold"])]
    hit = sum(r["kind"] == "unanswerable" for r in not_found)
    return {
        "questions": len(rows), "span_questions": len(span),
        "short_contains_gold": round(sum(short) / len(span), 4) if span else None,
        "first_contains_gold": round(sum(first) / len(span), 4) if span else None,
        "model_text_shown": len(shown_text),
        "wrong_text_shown": round(len(wrong) / len(span), 4) if span else None,
        "wrong_texts": [{"qid": r["qid"], "text": r["texts"]["grounded_generated"][:200], "gold": r["gold"]}
                        for r in wrong[:20]],
        "unanswerable_questions": len(unanswerable),
        "not_found_precision": round(hit / len(not_found), 4) if not_found and unanswerable else None,
        "not_found_recall": round(hit / len(unanswerable), 4) if unanswerable else None,
        "not_found_answerable": sum(r["kind"] != "unanswerable" for r in not_found),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", help="a checkout of the release before (e.g. cb39674); without it only 'after' runs")
    ap.add_argument("--after", help="a checkout to run as 'after' (default: the installed package, this tree)")
    ap.add_argument("--no-generate", action="store_true",
                    help="no model text: the value and the sentence only (wrong_text_shown is then 0 by construction)")
    ap.add_argument("--before-home", type=Path, default=Path("/tmp/shelfwise-before-home"),
                    help="its SHELFWISE_HOME (models linked in; its evaluation libraries are built there)")
    ap.add_argument("--sets", default="sample,cqa-tune,cqa-test")
    ap.add_argument("--limit-cqa", type=int, default=None, help="only the first N questions of a ConditionalQA half")
    ap.add_argument("--limit-squad", type=int, default=500)
    ap.add_argument("--limit-xquad", type=int, default=300)
    ap.add_argument("--work", type=Path, default=Path("/tmp/answers-bench"))
    ap.add_argument("--out", type=Path, default=Path("/tmp/answers-bench.json"))
    args = ap.parse_args()
    result: dict[str, Any] = {"before": str(args.before), "after": str(args.after or ROOT),
                              "generate": not args.no_generate, "sets": {}}
    for name in args.sets.split(","):
        result["sets"][name] = {}
        for tree in ("before", "after") if args.before else ("after",):
            rows = run_tree(tree, name, args, args.work)
            result["sets"][name][tree] = grade(rows, free_text=name == "sample")
            g = result["sets"][name][tree]
            print(f"{name} {tree}: short {g['short_contains_gold']} first {g['first_contains_gold']} wrong text "
                  f"{g['wrong_text_shown']} ({g['model_text_shown']} shown) not found P {g['not_found_precision']} "
                  f"R {g['not_found_recall']}", flush=True)
            args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
