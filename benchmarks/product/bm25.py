"""BM25 queries with and without snippets, side by side in one run (``Store.search`` / ``Store.search_hits``).

The full-text index reads its text through a view (``core/store/fts.py``), so a snippet costs a read of the node's
text back through it. Asked for in the ranking statement itself (``SELECT ..., snippet(...) ... ORDER BY bm25
LIMIT n``), SQLite makes one for every matching row before it sorts. This runs the same questions three ways on
one library, interleaved: that single statement (as the store ran it before), ``Store.search_ids`` (ranking only,
what the walk and the conversation's topic-shift test read), ``Store.search`` (ranking, then the rows returned) and
``Store.search_hits`` (ranking, then rows and snippets for the rows returned), and checks that all four give the
same nodes, scores (and snippets) in the same order.

    .venv/bin/python benchmarks/product/bm25.py --db LIB [--questions tests/data/dialogues.jsonl] [--json OUT]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
from pathlib import Path

from shelfwise.core.store.db import Store
from shelfwise.core.store.fts import clean_snippet
from shelfwise.core.store.textutil import fts_query
from shelfwise.core.store.types import NODE_COLS, node_from_row

ROOT = Path(__file__).resolve().parents[2]


def questions(path: Path) -> list[str]:
    """Every turn's question, then each question joined with the one before it (a follow-up's composed query)."""
    qs = [t["question"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
          for t in json.loads(line)["turns"]]
    return qs + [f"{a} {b}" for a, b in itertools.pairwise(qs)]


def single_statement(store: Store, query: str, limit: int) -> list[tuple[int, float, str]]:
    """The ranking and the snippets in one statement, as ``Store.search_hits`` ran it before."""
    match = fts_query(query)
    if match is None:
        return []
    cols = ", ".join("n." + c.strip() for c in NODE_COLS.split(","))
    rows = store.conn.execute(
        f"SELECT {cols}, bm25(nodes_fts), snippet(nodes_fts, -1, '[', ']', '\u2026', 16) "
        f"FROM nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid "
        f"WHERE nodes_fts MATCH ? AND n.kind IN ('passage') ORDER BY bm25(nodes_fts) LIMIT ?", (match, limit))
    return [(node_from_row(r).id, -float(r[12]), clean_snippet(r[13])) for r in rows]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--questions", type=Path, default=ROOT / "tests" / "data" / "dialogues.jsonl")
    ap.add_argument("--limits", type=int, nargs="*", default=[50, 200])
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    qs = questions(args.questions)
    store = Store(Path(args.db), read_only=True)
    report: dict = {"db": args.db, "questions": len(qs), "passages": store.conn.execute(
        "SELECT count(*) FROM nodes WHERE kind = 'passage'").fetchone()[0], "load_average": os.getloadavg(),
        "limits": {}}
    for limit in args.limits:
        seconds = {"single_statement": 0.0, "search_ids": 0.0, "search": 0.0, "search_hits": 0.0}
        differ = 0
        for q in qs:  # interleaved, so a change in load hits every side alike
            t0 = time.perf_counter()
            old = single_statement(store, q, limit)
            t1 = time.perf_counter()
            ids = store.search_ids(q, limit=limit)
            t15 = time.perf_counter()
            ranked = [(n.id, s) for n, s in store.search(q, limit=limit)]
            t2 = time.perf_counter()
            hits = [(h.node.id, h.score, h.snippet) for h in store.search_hits(q, limit=limit)]
            t3 = time.perf_counter()
            seconds["single_statement"] += t1 - t0
            seconds["search_ids"] += t15 - t1
            seconds["search"] += t2 - t15
            seconds["search_hits"] += t3 - t2
            differ += int(hits != old or ranked != [(i, s) for i, s, _ in old] or ids != ranked)
        ms = {k: round(v / len(qs) * 1000, 3) for k, v in seconds.items()}
        report["limits"][str(limit)] = {"ms_per_query": ms, "results_differ": differ,
                                        "ids_vs_single": round(ms["search_ids"] / ms["single_statement"], 3),
                                        "search_vs_single": round(ms["search"] / ms["single_statement"], 3),
                                        "hits_vs_single": round(ms["search_hits"] / ms["single_statement"], 3)}
        print(f"limit {limit}: {len(qs)} queries, ms per query: single statement {ms['single_statement']}, "
              f"search_ids {ms['search_ids']} ({report['limits'][str(limit)]['ids_vs_single']}x), "
              f"search {ms['search']} ({report['limits'][str(limit)]['search_vs_single']}x), search_hits "
              f"{ms['search_hits']} ({report['limits'][str(limit)]['hits_vs_single']}x); results differ: {differ}")
    store.close()
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
