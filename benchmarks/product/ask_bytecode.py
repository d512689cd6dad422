"""One code with and without its bytecode: whole ``shelfwise ask --no-generate`` processes, alternated (issue 52,
docs/scale.md "Session 29"). Python does not write bytecode here (``PYTHONDONTWRITEBYTECODE=1``), so a tree
without ``__pycache__`` compiles every module in every process, and one compiled by ``compileall`` reads them.

    python benchmarks/product/ask_bytecode.py --with-src A --without-src B --db LIB --settings S --repeat 7

``A`` and ``B``: two copies of one code (folders holding ``shelfwise/``, as ``growth.py``'s ``--src``); ``A``'s
package folders compiled with ``growth.compile_code`` first, ``B``'s left without bytecode.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from growth import compile_code, question_for


def run(src: str, db: Path, question: str, settings: Path) -> tuple[float, float]:
    env = dict(os.environ, SHELFWISE_SETTINGS=str(settings), PYTHONPATH=src, PYTHONDONTWRITEBYTECODE="1")
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "from shelfwise.app.cli.main import main; main()", "--db", str(db),
                             "ask", question, "--collection", "synthetic", "--no-generate"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--with-src", required=True)
    ap.add_argument("--without-src", required=True)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--settings", type=Path, required=True)
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    compile_code(a.with_src)
    question = question_for(a.db)
    sides = {"with_bytecode": a.with_src, "without": a.without_src}
    for src in sides.values():
        run(src, a.db, question, a.settings)  # warm-up (the page cache)
    runs: dict[str, list[tuple[float, float]]] = {side: [] for side in sides}
    for _ in range(a.repeat):
        for side, src in sides.items():
            runs[side].append(run(src, a.db, question, a.settings))
    out: dict[str, object] = {
        side: {"wall_s": round(statistics.median(r[0] for r in rs), 3),
               "cpu_s": round(statistics.median(r[1] for r in rs), 3), "runs": [[round(x, 3) for x in r] for r in rs]}
        for side, rs in runs.items()}
    out.update(load_average=[round(x, 1) for x in os.getloadavg()], question=question)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
