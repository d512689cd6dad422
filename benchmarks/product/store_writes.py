"""The store's write path before and after sqlite-utils, side by side in one run, on the same parsed documents.

    python benchmarks/product/store_writes.py                  # ../shared/corpus, 5 rounds
    python benchmarks/product/store_writes.py --rounds 9 --json

Every file of the corpus is parsed once (outside the timing). Each round then writes all the parsed documents into
a fresh library once per write path, each variant first in turn: ``Store.write_document`` (the document row, its
node tree in bulk, the FTS5 index of the new range), one ``cache_vectors`` per document (a 384-float vector per
passage, as indexing keeps them) and one ``set_meta``. "old" is the hand-written SQL the store had before
(INSERT/UPDATE built from column names, ``executemany`` of one-row INSERTs, INSERT OR REPLACE, INSERT ... ON
CONFLICT), patched in for its turn; "new" is the code as it is (sqlite-utils, ``core/store/lite.py``: ``insert`` /
``update`` of the document row, ``insert_all(replace=True)`` for the vector cache, ``upsert`` for meta; the node
rows stay an ``executemany``); "all" is "new" with the node rows through sqlite-utils' ``insert_all`` as well
(tried, and slower). The figure is the ratio of the medians, new / old
(issue 36 asks for <= 1.1); docs/benchmarks.md has the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from shelfwise.core.store import db as store_db
from shelfwise.core.store import tree_rows
from shelfwise.core.store.db import Store
from shelfwise.core.store.lite import NODE_COLUMNS, insert_rows
from shelfwise.core.store.types import FileMeta, path_key
from shelfwise.ingest.model import ParsedDocument
from shelfwise.ingest.registry import is_candidate, parse

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
DIM = 384


def old_insert_rows(conn: sqlite3.Connection, table: str, columns: Sequence[str],
                    rows: Sequence[Sequence[object]], *, replace: bool = False) -> None:
    """The write before sqlite-utils: one prepared single-row INSERT run by ``executemany``."""
    verb = "INSERT OR REPLACE" if replace else "INSERT"
    conn.executemany(f"{verb} INTO {table}({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", rows)


def old_set_meta(self: Store, key: str, value: Any) -> None:
    with self.transaction():
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, json.dumps(value, ensure_ascii=False)),
        )


def old_put_document(self: Store, collection_id: int, path: str, record: dict[str, object],
                     doc_id: int | None) -> int:
    """The document row before sqlite-utils: an UPDATE or INSERT built from the column names."""
    cols = ", ".join(record)
    if doc_id is not None:
        sets = ", ".join(f"{c} = ?" for c in record)
        self.conn.execute(f"UPDATE documents SET {sets} WHERE id = ?", (*record.values(), doc_id))
        return doc_id
    cur = self.conn.execute(f"INSERT INTO documents(collection_id, path, {cols}) VALUES (?, ?{', ?' * len(record)})",
                            (collection_id, path_key(path), *record.values()))
    return int(cur.lastrowid or 0)


def nodes_through_sqlite_utils(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """The node rows through sqlite-utils' ``insert_all`` (tried, and measured slower: kept out of the store)."""
    insert_rows(conn, "nodes", NODE_COLUMNS, rows)


@contextlib.contextmanager
def variant(which: str) -> Iterator[None]:
    """``old``: the hand-written SQL before sqlite-utils; ``new``: the code as it is; ``all``: as it is, with the
    node rows through sqlite-utils too."""
    saved = tree_rows.insert_nodes, store_db.insert_rows, Store.set_meta, Store._put_document
    if which == "old":
        store_db.insert_rows = old_insert_rows  # type: ignore[assignment]
        Store.set_meta = old_set_meta  # type: ignore[method-assign]
        Store._put_document = old_put_document  # type: ignore[method-assign]
    elif which == "all":
        tree_rows.insert_nodes = nodes_through_sqlite_utils
    try:
        yield
    finally:
        tree_rows.insert_nodes, store_db.insert_rows, Store.set_meta, Store._put_document = saved  # type: ignore


def parsed_corpus(corpus: Path) -> list[tuple[Path, ParsedDocument]]:
    out = []
    for path in sorted(p for p in corpus.rglob("*") if p.is_file() and is_candidate(p)):
        try:
            out.append((path, parse(path)))
        except Exception:  # a file that does not parse is not part of the write benchmark
            continue
    return out


def write_all(docs: list[tuple[Path, ParsedDocument]], tmp: Path, vectors: np.ndarray) -> tuple[float, int]:
    """Seconds to write every document (tree, FTS, cached vectors, meta) into a fresh library; nodes written."""
    db_path = tmp / f"bench-{time.perf_counter_ns()}.db"
    store = Store(db_path, check=False)
    try:
        cid = store.collection("bench").id
        t0 = time.perf_counter()
        for i, (path, parsed) in enumerate(docs):
            store.write_document(cid, path, FileMeta(size=1, mtime=0.0, sha256=f"{i:064x}"), parsed)
            n = max(1, parsed.count("passage"))
            store.cache_vectors("bench-model", [(f"{i:08x}{j:056x}", vectors[j % len(vectors)]) for j in range(n)])
            store.set_meta(f"bench_{i}", {"passages": n})
        seconds = time.perf_counter() - t0
        nodes = int(store.conn.execute("SELECT count(*) FROM nodes").fetchone()[0])
    finally:
        store.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(db_path) + suffix).unlink(missing_ok=True)
    return seconds, nodes


def run(corpus: Path, rounds: int) -> dict[str, Any]:
    docs = parsed_corpus(corpus)
    vectors = np.random.default_rng(0).standard_normal((64, DIM)).astype(np.float32)
    names = ("old", "new", "all")
    times: dict[str, list[float]] = {name: [] for name in names}
    nodes: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="shelfwise-writes-") as tmp:
        write_all(docs, Path(tmp), vectors)  # warm the file cache and the code paths
        for r in range(rounds):
            for which in names[r % 3:] + names[:r % 3]:  # each variant first in turn
                with variant(which):
                    seconds, n = write_all(docs, Path(tmp), vectors)
                times[which].append(seconds)
                nodes[which] = n
    assert len(set(nodes.values())) == 1, nodes
    medians = {name: statistics.median(times[name]) for name in names}
    return {"corpus": str(corpus), "documents": len(docs), "nodes": nodes["new"], "rounds": rounds,
            "seconds": times, "medians": medians, "ratio": medians["new"] / medians["old"],
            "ratio_all": medians["all"] / medians["old"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = run(args.corpus, args.rounds)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['documents']} documents, {result['nodes']} nodes, {result['rounds']} rounds each")
    labels = {"old": "old: hand-written SQL (before)", "new": "new: as shipped (sqlite-utils upserts)",
              "all": "all: node rows through sqlite-utils too"}
    for name, text in labels.items():
        print(f"{text:<42} median {result['medians'][name]:.3f} s  "
              f"({', '.join(f'{s:.3f}' for s in result['seconds'][name])})")
    print(f"ratio new/old: {result['ratio']:.3f} (<= 1.1 required); all/old: {result['ratio_all']:.3f}")

if __name__ == "__main__":
    main()
