"""The cosine scan on a thread of its own beside the keyword ranking (``features.scan_ahead``) or after it, in one
warm process: warm questions (each another passage's words, encoded first) alternated between the two ways.

    python benchmarks/research/scan_ahead.py DIR/growth-100000.db --questions 24 --json

Reports the median CPU and wall seconds of a question each way (``Shelf.ask``, generation off, as growth.py's warm
question: each encoded before its clock starts). Used to choose ``SCAN_AHEAD_MIN``: below it the scan is too short
for the thread to pay.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "product"))
from growth import question_for

from shelfwise.core.navigation import features
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db", type=Path)
    ap.add_argument("--questions", type=int, default=24)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    questions = [question_for(args.db, k) for k in range(1, args.questions + 1)]
    runs: dict[str, list[tuple[float, float]]] = {"beside": [], "after": []}
    with Shelf(Settings(db_path=args.db, use_calibration=False, answer_generate=False)) as shelf:
        shelf.before_question("synthetic")
        shelf.ask(question_for(args.db), "synthetic")  # warm-up
        for i, q in enumerate(questions):
            way = "beside" if i % 2 == 0 else "after"
            features.SCAN_AHEAD_MIN = 0 if way == "beside" else 10**12
            shelf.embedder.embed_query(q)  # encoded before the clock starts, as growth.py's warm questions
            c0, t0 = time.process_time(), time.perf_counter()
            shelf.before_question("synthetic")
            shelf.ask(q, "synthetic")
            runs[way].append((time.process_time() - c0, time.perf_counter() - t0))
    out = {way: {"cpu_s": round(statistics.median(c for c, _ in r), 4),
                 "wall_s": round(statistics.median(w for _, w in r), 4), "questions": len(r)}
           for way, r in runs.items()}
    out["load_average"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(out, indent=1) if args.json else out)


if __name__ == "__main__":
    main()
