"""What a follow-up adds to a question's cost: the same follow-up questions timed alone (walk + extracted answer)
and as the next turn of their dialogue (reading against the history: the topic-shift test's embedding and BM25
query, as ``ask_turn`` runs them, the preferred branches, the longer query; then the same walk + extracted
answer). The history turns are answered
first and not timed; each timing is the median of ``--repeat`` runs; no generation (it does not depend on the
history). Writes docs/eval/conversation-cost.json.

    .venv/bin/python benchmarks/conversation_cost.py --db LIB [--split test]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from dataclasses import asdict
from pathlib import Path

from shelfwise.core.answers.ask import answer_question
from shelfwise.core.conversation.model import Conversation
from shelfwise.core.conversation.reading import SHIPPED, read
from shelfwise.core.conversation.turn import lexical_search, turn_from
from shelfwise.core.evaluation.dialogues import load_dialogues
from shelfwise.core.navigation.snapshots import snapshot_for
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--data", default=str(ROOT / "tests" / "data" / "dialogues.jsonl"))
    ap.add_argument("--split", default="test")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "docs" / "eval" / "conversation-cost.json"))
    args = ap.parse_args()
    dialogues = load_dialogues(args.data, args.split)
    alone_s: list[float] = []
    turn_s: list[float] = []
    rows = []
    with Shelf(Settings(db_path=Path(args.db), answer_generate=False)) as shelf:
        coll = shelf.store.find_collection("default")
        assert coll is not None
        snap = snapshot_for(shelf.store, coll.id, shelf.embedder.model_id)
        search = lexical_search(shelf.store, snap)  # the topic-shift test's BM25, as a turn runs it
        answer_question(shelf, "warm-up question", generate=False)  # load the models before timing
        cache = shelf.embedder.__dict__.setdefault("_query_cache", {})
        for d in dialogues:
            conv = Conversation(None, "default")
            for i, t in enumerate(d.turns):
                if i > 0:
                    a, b = [], []
                    for _ in range(args.repeat):  # interleaved, so load changes hit both alike
                        cache.clear()  # no question vector kept from an earlier timing (either side)
                        t0 = time.perf_counter()
                        answer_question(shelf, t.question, generate=False)
                        a.append(time.perf_counter() - t0)
                        cache.clear()
                        t0 = time.perf_counter()
                        reading, q_vec = read(t.question, conv.turns, snap, shelf.embedder, SHIPPED,
                                              search=search)
                        answer_question(shelf, reading.query, generate=False, prior=reading.prior or None, q_vec=q_vec)
                        b.append(time.perf_counter() - t0)
                    alone_s.append(statistics.median(a))
                    turn_s.append(statistics.median(b))
                    rows.append({"dialogue": d.id, "position": i + 1, "kind": t.kind, "mode": reading.mode,
                                 "alone_s": round(alone_s[-1], 4), "followup_s": round(turn_s[-1], 4)})
                reading, q_vec = read(t.question, conv.turns, snap, shelf.embedder, SHIPPED, search=search)
                answer = answer_question(shelf, reading.query, generate=False, prior=reading.prior or None,
                                         q_vec=q_vec)
                conv.turns.append(turn_from(t.question, reading, answer))
    ratio = sum(turn_s) / sum(alone_s)
    report = {"data": args.data, "split": args.split, "turns_timed": len(rows), "repeat": args.repeat,
              "alone_total_s": round(sum(alone_s), 3), "followup_total_s": round(sum(turn_s), 3),
              "ratio": round(ratio, 3), "median_ratio": round(statistics.median(
                  b / a for a, b in zip(alone_s, turn_s, strict=True)), 3),
              "load_average": os.getloadavg(), "rule": asdict(SHIPPED), "rows": rows}
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"{len(rows)} follow-up turns: alone {sum(alone_s):.2f} s, as follow-ups {sum(turn_s):.2f} s, "
          f"ratio {ratio:.3f} (median per turn {report['median_ratio']})")


if __name__ == "__main__":
    main()
