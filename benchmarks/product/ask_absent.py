"""Whole ``shelfwise ask --no-generate`` processes of two codes, alternated: the growth question (the words of the
library's middle passage) and :data:`growth.ABSENT_QUESTION` (words the library does not hold, each looked up by
the not-found rule in the full-text index; issue 52, docs/scale.md "Session 29").

    python benchmarks/product/ask_absent.py THIS_SRC THIS_DB BASE_SRC BASE_DB SETTINGS REPEAT

``THIS_SRC`` / ``BASE_SRC``: folders holding ``shelfwise/`` (as ``growth.py``'s ``--src``); each code on its own copy
of the library (see ``ask_alternated.py``). Both codes are compiled to bytecode first; one warm-up each.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from growth import ABSENT_QUESTION, ask_process, compile_code, question_for


def main() -> None:
    this_src, this_db, base_src, base_db = sys.argv[1], Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4])
    settings, repeat = Path(sys.argv[5]), int(sys.argv[6])
    question = question_for(this_db)
    sides = {"this": (this_src, this_db), "base": (base_src, base_db)}
    for src, db in sides.values():
        compile_code(src)
        ask_process(db, question, settings, src)  # warm-up
    runs: dict[str, list[tuple[float, float, float]]] = {}
    for _ in range(repeat):
        for side, (src, db) in sides.items():
            runs.setdefault(f"{side}_passage", []).append(ask_process(db, question, settings, src))
            runs.setdefault(f"{side}_absent", []).append(ask_process(db, ABSENT_QUESTION, settings, src))
    out: dict[str, object] = {
        k: {"wall_s": round(statistics.median(r[0] for r in v), 3),
            "cpu_s": round(statistics.median(r[2] for r in v), 3), "peak_rss_mb": round(max(r[1] for r in v), 1),
            "runs": [[round(x, 3) for x in r] for r in v]}
        for k, v in runs.items()}
    out.update(load_average=[round(x, 1) for x in os.getloadavg()], question=question,
               absent_question=ABSENT_QUESTION, this_code=this_src, base_code=base_src)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
