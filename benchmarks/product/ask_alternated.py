"""Whole ``shelfwise ask --no-generate`` processes of two codes, alternated, each on its own copy of one library.

    python benchmarks/product/ask_alternated.py --this-src SRC --this-db DIR/growth-1000000.db \
        --base-src BASE --base-db DIR/today/growth-1000000.db --settings DIR/settings.json --repeat 5

``SRC`` and ``BASE``: folders holding ``shelfwise/`` (as ``growth.py``'s ``--src`` and ``--baseline-src``). Each
process is ``growth.py``'s ``ask_process`` (the same subprocess call, the question the words of the library's middle
passage), each code compiled to bytecode first (``growth.compile_code``); one warm-up each, then ``--repeat`` each,
alternated so both see the same load. Prints the medians of wall and CPU seconds, the peak RSS, every run, and the
ratios base / this. Each code needs its own copy of the library,
closed cleanly once before (``shelfwise status``): a library another process holds or changed is checked whole on
opening, seconds at 10^6 passages.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from growth import ask_process, compile_code, question_for


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--this-src", required=True)
    ap.add_argument("--this-db", type=Path, required=True)
    ap.add_argument("--base-src", required=True)
    ap.add_argument("--base-db", type=Path, required=True)
    ap.add_argument("--settings", type=Path, required=True, help="the settings file both run with")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    question = question_for(a.this_db)
    sides = {"this": (a.this_src, a.this_db), "base": (a.base_src, a.base_db)}
    for src, db in sides.values():
        compile_code(src)
        ask_process(db, question, a.settings, src)  # warm-up
    runs: dict[str, list[tuple[float, float, float]]] = {side: [] for side in sides}
    for _ in range(a.repeat):
        for side, (src, db) in sides.items():
            runs[side].append(ask_process(db, question, a.settings, src))
    out: dict[str, object] = {
        side: {"wall_s": round(statistics.median(r[0] for r in rs), 3),
               "cpu_s": round(statistics.median(r[2] for r in rs), 3),
               "peak_rss_mb": round(max(r[1] for r in rs), 1),
               "runs_wall_rss_cpu": [[round(x, 3) for x in r] for r in rs]}
        for side, rs in runs.items()}
    this, base = out["this"], out["base"]
    assert isinstance(this, dict) and isinstance(base, dict)
    out["ratio_base_over_this"] = {k: round(float(base[k]) / float(this[k]), 2)
                                   for k in ("wall_s", "cpu_s", "peak_rss_mb")}
    out.update(question=question, load_average=[round(x, 1) for x in os.getloadavg()], this_code=a.this_src,
               base_code=a.base_src)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
