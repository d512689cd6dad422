"""Latency model check: tokens evaluated per query grow with the number of levels, not with the number of passages.

Synthetic trees of 1k, 10k and 100k passages (generated text, in the real SQLite store;
``benchmarks/product/synthetic.py``)
are navigated in process by the real bundled model with the ``binary`` readout (every candidate of a level is
judged by the generative model; a level is split into requests of ``--request-size``). Printed side by side:
passages, levels, candidates judged, requests and tokens evaluated per query, and the ratio of tokens to the
1k-passage tree's.

    python benchmarks/product/latency_model.py [--sizes 1000,10000,100000] [--queries 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import cached

from shelfwise.core.models.encoders.embedder import Embedder
from shelfwise.core.models.llama.backend import LlamaBackend
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.navigator import Navigator
from shelfwise.core.navigation.request import SearchRequest
from shelfwise.core.paths import data_dir
from shelfwise.core.settings import Budgets, Settings
from shelfwise.core.store.db import Store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--queries", type=int, default=2)
    ap.add_argument("--branching", type=int, default=16)
    ap.add_argument("--keep", type=int, default=2)
    ap.add_argument("--request-size", type=int, default=48)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    backend = LlamaBackend()
    embedder = Embedder()
    budgets = Budgets(first_keep_ratio=args.keep / args.branching, keep=args.keep, passages=5, hybrid=0,
                      request_size=args.request_size, branching=args.branching)
    settings = Settings(readout="binary", budgets=budgets)
    rows = []
    for n in sizes:
        tree = cached(data_dir() / "bench", n, branching=args.branching)
        store = Store(tree.path)
        coll = store.conn.execute("SELECT name FROM collections WHERE id = ?", (tree.collection_id,)).fetchone()[0]
        nav = Navigator(store, backend, embedder, settings, decision=DecisionModel())
        tokens, requests, judged, seconds, levels = [], [], [], [], []
        for q in range(args.queries):
            t = time.perf_counter()
            res = nav.navigate(SearchRequest(f"question {q} about {tree.kinds[-1]} number {q * 7 + 3}", coll))
            seconds.append(time.perf_counter() - t)
            tokens.append(res.trace.tokens)
            requests.append(res.trace.requests)
            judged.append(sum(len(lv.candidates) for lv in res.trace.levels))
            levels.append(len(res.trace.levels))
        store.close()
        rows.append({"passages": n, "levels": max(levels), "candidates_per_query": sum(judged) / len(judged),
                     "requests_per_query": sum(requests) / len(requests),
                     "tokens_per_query": sum(tokens) / len(tokens), "seconds_per_query": sum(seconds) / len(seconds)})
    base = rows[0]["tokens_per_query"] or 1
    for r in rows:
        r["tokens_vs_smallest"] = round(r["tokens_per_query"] / base, 2)
        r["passages_vs_smallest"] = r["passages"] / rows[0]["passages"]
    if args.json:
        print(json.dumps({"rows": rows}, indent=1))
        return
    print(f"{'passages':>9} {'levels':>6} {'judged':>7} {'requests':>8} {'tokens':>8} {'seconds':>8} "
          f"{'tokens x':>8} {'passages x':>10}")
    for r in rows:
        print(f"{r['passages']:>9} {r['levels']:>6} {r['candidates_per_query']:>7.0f} {r['requests_per_query']:>8.1f} "
              f"{r['tokens_per_query']:>8.0f} {r['seconds_per_query']:>8.2f} {r['tokens_vs_smallest']:>8.2f} "
              f"{r['passages_vs_smallest']:>10.0f}")


if __name__ == "__main__":
    main()
