"""How many node rows the walk reads a question, and its CPU seconds, on a library ``growth.py`` built.

    PYTHONPATH=BEFORE python benchmarks/research/walk_rows.py DIR/growth-1000000.db --questions 3
    python benchmarks/research/walk_rows.py DIR/growth-1000000.db --questions 3

In one process (the library's encoder loaded once, generation off): one warm-up question, then ``--questions``
more, each the words of another passage next to the middle one (``growth.question_for``), their vectors encoded
first; the rows a question's snapshot view read from the library (``NodeTable`` makes one node per row read) and
the process's CPU seconds, per question. Run it with the code before and after a change of the walk, alternated:
the row count does not depend on the machine's load, the CPU seconds a little.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "product"))
from growth import question_for

from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store import snapshot


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db", type=Path)
    ap.add_argument("--questions", type=int, default=3)
    args = ap.parse_args()
    questions = [question_for(args.db, k) for k in range(args.questions + 1)]
    made = [0]
    node = snapshot.NodeTable._node

    def counted(self: snapshot.NodeTable, row: tuple) -> snapshot.NodeInfo:  # type: ignore[type-arg]
        made[0] += 1
        return node(self, row)

    snapshot.NodeTable._node = counted  # type: ignore[method-assign]
    with Shelf(Settings(db_path=args.db, use_calibration=False, answer_generate=False)) as shelf:
        shelf.before_question("synthetic")
        shelf.ask(questions[0], "synthetic")
        for q in questions[1:]:
            shelf.embedder.embed_query(q)
        made[0] = 0
        c0 = time.process_time()
        for q in questions[1:]:
            shelf.before_question("synthetic")
            shelf.ask(q, "synthetic")
        cpu = time.process_time() - c0
    print(json.dumps({"rows_read_a_question": round(made[0] / args.questions, 1),
                      "cpu_s_a_question": round(cpu / args.questions, 3), "questions": args.questions}))


if __name__ == "__main__":
    main()
