"""What a follow-up adds to a question's cost: the same follow-up questions timed alone (walk + extracted answer)
and as the next turn of their dialogue (reading against the history: the topic-shift test's embedding and BM25
query, as ``ask_turn`` runs them, the preferred branches, the longer query; then the same walk + extracted
answer). The history turns are answered first and not timed; each timing is the median of ``--repeat`` runs; no
generation (it does not depend on the history). Two follow-up sides: **cold**, the embedder's kept question vectors
emptied first (as after a restart: the history's turns carry what the library stores with them, the vector of a
first, alone or shifted question's own text; tests/test_conversation.py checks that a reopened conversation has
it), and **live**, the embedder holding what it kept after the history's last turn
(as in a running chat or window; never the timed question's own vector); the alone side is always cold. Writes
docs/eval/conversation-cost.json.

    .venv/bin/python benchmarks/research/conversation_cost.py --db LIB [--split test]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import OrderedDict
from dataclasses import asdict
from pathlib import Path
from typing import Any

from reading_research import SHIPPED, decision_for, read, with_rule

from shelfwise.core.answers.ask import answer_question
from shelfwise.core.conversation.model import Conversation
from shelfwise.core.conversation.turn import lexical_search, turn_from
from shelfwise.core.navigation.snapshots import snapshot_for
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.evaluation.dialogues import load_dialogues

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--data", default=str(ROOT / "tests" / "data" / "dialogues.jsonl"))
    ap.add_argument("--split", default="test")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rule", default="{}", help="JSON of ReadingRule fields over SHIPPED (default: what ships)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "eval" / "conversation-cost.json"))
    args = ap.parse_args()
    rule = with_rule(SHIPPED, **json.loads(args.rule))
    dialogues = load_dialogues(args.data, args.split)
    alone_s: list[float] = []
    turn_s: list[float] = []
    live_s: list[float] = []
    rows = []
    with Shelf(Settings(db_path=Path(args.db), answer_generate=False)) as opened:
        shelf = opened.walk  # the answer path's library
        coll = shelf.store.find_collection("default")
        assert coll is not None
        snap = snapshot_for(shelf.store, coll.id, shelf.embedder.model_id)
        search = lexical_search(shelf.store, snap)  # the topic-shift test's BM25, as a turn runs it
        answer_question(shelf, "warm-up question", generate=False)  # load the models before timing
        cache = shelf.embedder.__dict__.setdefault("_query_cache", {})
        for d in dialogues:
            conv = Conversation(None, "default")
            live: OrderedDict[str, Any] = OrderedDict()
            for i, t in enumerate(d.turns):
                if i > 0:
                    a, b, c = [], [], []
                    for _ in range(args.repeat):  # interleaved, so load changes hit every side alike
                        for side, kept in ((a, None), (b, None), (c, live)):
                            cache.clear()  # cold: no question vector kept from an earlier timing
                            if kept is not None:  # live: what the embedder kept after the history's last turn
                                cache.update((k, v) for k, v in kept.items() if k != t.question)
                            t0 = time.perf_counter()
                            if side is a:
                                answer_question(shelf, t.question, generate=False)
                            else:
                                reading, q_vec = read(t.question, conv.turns, snap, shelf.embedder, rule,
                                                      search=search, decision=decision_for(shelf, snap, rule))
                                answer_question(shelf, reading.query, generate=False, prior=reading.prior or None,
                                                q_vec=q_vec)
                            side.append(time.perf_counter() - t0)
                    alone_s.append(statistics.median(a))
                    turn_s.append(statistics.median(b))
                    live_s.append(statistics.median(c))
                    rows.append({"dialogue": d.id, "position": i + 1, "kind": t.kind, "mode": reading.mode,
                                 "alone_s": round(alone_s[-1], 4), "followup_s": round(turn_s[-1], 4),
                                 "followup_live_s": round(live_s[-1], 4)})
                reading, q_vec = read(t.question, conv.turns, snap, shelf.embedder, rule, search=search,
                                      decision=decision_for(shelf, snap, rule))
                answer = answer_question(shelf, reading.query, generate=False, prior=reading.prior or None,
                                         q_vec=q_vec)
                conv.turns.append(turn_from(t.question, reading, answer))
                live = OrderedDict(cache)  # the embedder's kept vectors as a session has them after this turn
    ratio = sum(turn_s) / sum(alone_s)
    report = {"data": args.data, "split": args.split, "turns_timed": len(rows), "repeat": args.repeat,
              "alone_total_s": round(sum(alone_s), 3), "followup_total_s": round(sum(turn_s), 3),
              "ratio": round(ratio, 3), "followup_live_total_s": round(sum(live_s), 3),
              "live_ratio": round(sum(live_s) / sum(alone_s), 3), "median_ratio": round(statistics.median(
                  b / a for a, b in zip(alone_s, turn_s, strict=True)), 3),
              "load_average": os.getloadavg(), "rule": asdict(rule), "rows": rows}
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"{len(rows)} follow-up turns: alone {sum(alone_s):.2f} s, as follow-ups {sum(turn_s):.2f} s, "
          f"ratio {ratio:.3f} (median per turn {report['median_ratio']}); live {sum(live_s):.2f} s, "
          f"ratio {report['live_ratio']}")


if __name__ == "__main__":
    main()
