"""What a whole ``shelfwise ask --no-generate`` process spends compiling regular expressions, by the file that asks.

    python benchmarks/research/regex_compile.py --src SRC --db DIR/growth-100000.db --collection synthetic \
        --settings DIR/settings.json --question "..." --json

One ``ask`` process of the code at ``SRC`` (a folder holding ``shelfwise/``, as ``benchmarks/product/growth.py``'s
``--src``) runs with :func:`re.compile` recorded: every pattern it compiles (at import or on first use), the file
whose code asked for it, and whether a module was being imported then (import) or not (a lazy pattern's first use,
or a pattern compiled while answering). Then, in this process, the same patterns are compiled again from a
cleared cache, ``--rounds`` times, and the least CPU time per file kept: the cost without a profiler (cProfile
multiplies the pure-Python compiler's time several times over). Patterns a process compiles more than once count
once (``re`` caches them).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

RECORD = r"""
import json, os, re, sys
compile_, seen, out = re._compile, set(), []
HOPS = ("re/__init__.py", "enum.py", "functools.py", "languages.py")  # re itself, a lazy pattern's first use
HOP_NAMES = ("compile", "_compile", "compiled", "search", "match", "fullmatch", "finditer", "findall", "sub", "subn",
             "split", "__get__")
def recorded(pattern, flags):
    if isinstance(pattern, str) and (pattern, int(flags)) not in seen:
        seen.add((pattern, int(flags)))
        f = sys._getframe(1)
        while f is not None and f.f_code.co_filename.endswith(HOPS) and f.f_code.co_name in HOP_NAMES:
            f = f.f_back
        where = f.f_code.co_filename.split("/shelfwise/")[-1] if f is not None else "?"
        up, importing = f, False  # a module's top level (a Shelfwise module or a library it imports) below
        while up is not None and not importing:
            importing = up.f_code.co_name == "<module>" and up.f_code.co_filename != "<string>"
            up = up.f_back
        out.append([where, importing, pattern, int(flags)])
    return compile_(pattern, flags)
re._compile = recorded
exit_ = os._exit
def written(code):
    open(os.environ["RECORD_OUT"], "w").write(json.dumps(out))
    exit_(code)
os._exit = written
sys.argv = ["shelfwise", *sys.argv[1:]]
from shelfwise.app.cli.main import main
try:
    main()
finally:
    open(os.environ["RECORD_OUT"], "w").write(json.dumps(out))
"""


def record(src: str, db: Path, question: str, collection: str | None, settings: Path | None) -> list[list]:
    """The patterns one ``ask --no-generate`` process of the code at ``src`` compiles: [file, at import, pattern,
    flags] each."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "patterns.json"
        env = dict(os.environ, PYTHONPATH=src, RECORD_OUT=str(out))
        if settings is not None:
            env["SHELFWISE_SETTINGS"] = str(settings)
        args = ["--db", str(db), "ask", question, "--no-generate", *(["--collection", collection] if collection
                                                                       else [])]
        subprocess.run([sys.executable, "-c", RECORD, *args], env=env, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return json.loads(out.read_text())


def cost(patterns: list[list], rounds: int) -> dict[str, object]:
    """The least CPU seconds over ``rounds`` to compile ``patterns`` from a cleared cache, in all and by file."""
    groups: dict[tuple[str, bool], list[tuple[str, int]]] = defaultdict(list)
    for where, at_import, pattern, flags in patterns:
        groups[(where, at_import)].append((pattern, flags))
    best = {key: float("inf") for key in groups}
    for _ in range(rounds):
        for key, items in groups.items():
            re.purge()
            t0 = time.process_time()
            for pattern, flags in items:
                re.compile(pattern, flags)
            best[key] = min(best[key], time.process_time() - t0)
    rows = sorted(((round(s, 4), len(groups[k]), k[0], "import" if k[1] else "on use") for k, s in best.items()),
                  reverse=True)
    return {"patterns": len(patterns), "compile_cpu_s": round(sum(best.values()), 4),
            "at_import_cpu_s": round(sum(s for k, s in best.items() if k[1]), 4),
            "by_file": [list(r) for r in rows]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", action="append", required=True, help="a code to measure (repeat for several)")
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--question", required=True)
    ap.add_argument("--collection", default=None)
    ap.add_argument("--settings", type=Path, default=None)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    out: dict[str, object] = {"question": a.question, "db": str(a.db), "rounds": a.rounds, "codes": {}}
    for src in a.src:
        out["codes"][src] = cost(record(src, a.db, a.question, a.collection, a.settings), a.rounds)  # type: ignore
    print(json.dumps(out, indent=1) if a.json else
          {src: c["compile_cpu_s"] for src, c in out["codes"].items()})  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
