"""Same behaviour before and after a restructuring, to the question: run a tree's CLI over a copy of a frozen
library and write what it answered, timing fields dropped, so two trees' files compare exactly.

    # a tree's code is put first on the path by PYTHONPATH=TREE/.pyroot (shelfwise/{core,app,ingest,resources}
    # linked to the tree's folders); the libraries are built once, by the older tree, and copied before use
    python benchmarks/product/behaviour_check.py sample TREE FROZEN.db OUT.json          # 21 questions, generation on
    python benchmarks/product/behaviour_check.py nav TREE FROZEN.db QUESTIONS.jsonl COLLECTION OUT.json  # passages
    python benchmarks/product/behaviour_check.py compare BEFORE.json AFTER.json

``sample`` asks every question of ``resources/sample_questions.jsonl`` with ``shelfwise ask --json --generate``
(the defaults: no encoder named) and keeps the whole answer (text, model answer, notes, citations, sentence
offsets, trace); ``nav`` navigates each question of a JSONL with ``--no-answer`` under MiniLM and keeps the
passages (node ids, scores). Used for issue 36 (docs/eval/restructure-issue36.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SHELFWISE = str(Path(sys.executable).parent / "shelfwise")


def _clean(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items() if not (k in {"seconds", "elapsed", "time"}
                                                            or k.endswith(("_seconds", "_s")))}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    return x


def _ask(tree: str, db: str, env: dict[str, str], args: list[str]) -> tuple[int, Any]:
    r = subprocess.run(["nice", "-n", "5", SHELFWISE, "--db", db, "ask", *args], capture_output=True, text=True,
                       env=env, cwd=tree, timeout=900)
    try:
        return r.returncode, json.loads(r.stdout)
    except json.JSONDecodeError:
        return r.returncode, {"stdout": r.stdout[-1500:], "stderr": r.stderr[-1500:]}


def _copy(frozen: str) -> str:
    db = str(Path(tempfile.mkdtemp()) / "lib.db")
    shutil.copy(frozen, db)
    return db


def sample(tree: str, frozen: str, out: str) -> None:
    questions = [json.loads(line)["question"] for line in
                 (Path(tree) / "resources" / "sample_questions.jsonl").read_text().splitlines() if line.strip()]
    db = _copy(frozen)
    env = {k: v for k, v in os.environ.items() if k != "SHELFWISE_EMBEDDER"}
    env["PYTHONPATH"] = str(Path(tree) / ".pyroot")
    rows = []
    for q in questions:
        rc, obj = _ask(tree, db, env, [q, "--json", "--generate"])
        rows.append({"question": q, "rc": rc, "out": _clean(obj)})
    Path(out).write_text(json.dumps(rows, indent=1, ensure_ascii=False, sort_keys=True))


def nav(tree: str, frozen: str, questions_file: str, collection: str, out: str) -> None:
    questions = [json.loads(line)["question"] for line in Path(questions_file).read_text().splitlines() if line]
    db = _copy(frozen)
    env = dict(os.environ, SHELFWISE_EMBEDDER="minilm", PYTHONPATH=str(Path(tree) / ".pyroot"))
    rows = []
    for q in questions:
        rc, obj = _ask(tree, db, env, [q, "--json", "--no-answer", "--collection", collection])
        hits = obj.get("passages", []) if isinstance(obj, dict) else []
        rows.append({"question": q, "rc": rc,
                     "passages": [[h.get("node_id"), round(float(h.get("score", 0)), 5)] for h in hits]})
    Path(out).write_text(json.dumps(rows, indent=1, ensure_ascii=False))


def compare(before: str, after: str) -> int:
    a, b = json.loads(Path(before).read_text()), json.loads(Path(after).read_text())
    differ = [x["question"] for x, y in zip(a, b, strict=True) if x != y]
    for q in differ:
        print("differs:", q)
    print(f"{len(a)} questions, {len(differ)} differ")
    return 1 if differ else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("tree"), s.add_argument("frozen"), s.add_argument("out")
    n = sub.add_parser("nav")
    for name in ("tree", "frozen", "questions", "collection", "out"):
        n.add_argument(name)
    c = sub.add_parser("compare")
    c.add_argument("before"), c.add_argument("after")
    args = ap.parse_args()
    if args.cmd == "sample":
        sample(args.tree, args.frozen, args.out)
    elif args.cmd == "nav":
        nav(args.tree, args.frozen, args.questions, args.collection, args.out)
    else:
        sys.exit(compare(args.before, args.after))


if __name__ == "__main__":
    main()
