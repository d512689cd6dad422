"""The word index's rebuild in plain SQL against sqlite-utils' ``rebuild_fts`` (``core/store/lite.py``, what the
migrations and ``shelfwise doctor`` call): the same statement, each in its own transaction, alternated on one
library (a copy: the index is rebuilt in place). Used for docs/eval/restructure-issue36.md (session 16).

    python benchmarks/product/fts_rebuild.py COPY_OF_LIBRARY.db [RUNS]
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import sys
import time

from shelfwise.core.store import fts
from shelfwise.core.store.lite import rebuild_fts


def main(path: str, runs: int = 3) -> None:
    conn = fts.register(sqlite3.connect(path, isolation_level=None))
    nodes = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
    took: dict[str, list[float]] = {"sql": [], "sqlite-utils": []}
    for _ in range(runs):
        for name in took:
            conn.execute("BEGIN IMMEDIATE")
            t0 = time.perf_counter()
            if name == "sql":
                conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES ('rebuild')")
            else:
                rebuild_fts(conn)
            conn.execute("COMMIT")
            took[name].append(time.perf_counter() - t0)
    print(f"nodes {nodes}, load average {os.getloadavg()[0]:.1f}")
    for name, seconds in took.items():
        print(f"{name}: {[round(s, 2) for s in seconds]} s, median {statistics.median(seconds):.3f}")
    print(f"ratio sqlite-utils / sql: {statistics.median(took['sqlite-utils']) / statistics.median(took['sql']):.3f}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3)
