"""Synthetic collection trees of N passages in a real Shelfwise store, for the scale benchmark.

    python benchmarks/product/synthetic.py 1000000 /tmp/syn.db      # build one and print its shape

Shape: ``L = max(2, ceil(log_b N))`` levels under the collection root, every node having ``f = ceil(N **
(1/L))`` children (so the branching stays <= b = 32), from the top: topic clusters (as many levels as needed),
documents, sections, passages. 10^3 passages: documents -> passages; 10^4: documents -> sections -> passages;
10^5 and 10^6: clusters -> documents -> sections -> passages.

Text comes from a small fixed vocabulary (deterministic for a seed). Each node's title carries one word of its
parent's title, so a query built from a passage's words and its ancestors' titles has a path to follow.

Speed: the nodes are written with SQL in ONE transaction, ids assigned in depth-first order (reading order, as
``Store.write_document`` does), with the FTS5 triggers dropped during the insert and re-created after it (same
SQL as migration 0002). The lexical index is then either rebuilt in one pass (``fts=True``) or left empty
(``fts=False``, the benchmark's default: it scores tree candidates only, no lexical hybrid candidates).
"""

from __future__ import annotations

import argparse
import json
import math
import sqlite3
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from shelfwise.core.store import fts
from shelfwise.core.store.db import Store

BRANCHING = 32
_SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "nu",
    "pe",
    "ra",
    "si",
    "to",
    "va",
    "ze",
    "bri",
    "dan",
    "fel",
    "gor",
    "hal",
    "jun",
]
_TRIGGERS = fts.TRIGGERS


@dataclass
class SyntheticTree:
    path: str
    collection_id: int
    root_id: int
    n_passages: int
    levels: int
    fanout: int
    kinds: list[str]
    counts: dict[str, int] = field(default_factory=dict)
    fts: bool = False
    build_seconds: float = 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def vocabulary(size: int = 600) -> list[str]:
    """``size`` pronounceable made-up words (two or three syllables), the same every time."""
    words: list[str] = []
    n = len(_SYLLABLES)
    for i in range(n * n * n):
        a, b, c = i % n, (i // n) % n, i // (n * n)
        w = _SYLLABLES[a] + _SYLLABLES[b] + (_SYLLABLES[c] if c % 2 else "")
        if w not in words:
            words.append(w)
        if len(words) == size:
            break
    return words


def shape(n_passages: int, branching: int = BRANCHING) -> tuple[int, int, list[str]]:
    """(levels under the root, children per node, kind of each level from the top)."""
    if n_passages < 2:
        raise ValueError("a synthetic tree needs at least 2 passages")
    levels = max(2, math.ceil(math.log(n_passages) / math.log(branching) - 1e-9))
    fanout = math.ceil(n_passages ** (1 / levels) - 1e-9)
    tail = ["document", "passage"] if levels == 2 else ["document", "section", "passage"]
    kinds = ["cluster"] * (levels - len(tail)) + tail
    return levels, fanout, kinds


def level_counts(n_passages: int, levels: int, fanout: int) -> list[int]:
    """Nodes per level from the top; node j of level i+1 hangs under node j // fanout of level i."""
    counts = [n_passages]
    for _ in range(levels - 1):
        counts.append(math.ceil(counts[-1] / fanout))
    return counts[::-1]


def build(
    path: str | Path,
    n_passages: int,
    *,
    branching: int = BRANCHING,
    seed: int = 0,
    fts: bool = False,
    passage_words: int = 24,
) -> SyntheticTree:
    """Write a synthetic tree of ``n_passages`` passages into a new collection ``synthetic`` of the store at
    ``path`` (the file must not exist)."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} exists; the synthetic builder writes a fresh store")
    t0 = time.perf_counter()
    levels, fanout, kinds = shape(n_passages, branching)
    counts = level_counts(n_passages, levels, fanout)
    words = np.array(vocabulary())
    rng = np.random.default_rng(seed)
    store = Store(path)
    try:
        coll = store.collection("synthetic")
        conn = store.conn
        conn.execute("PRAGMA synchronous = OFF")
        titles = [_titles(rng, words, counts[i]) for i in range(levels)]
        for i in range(1, levels):  # carry one word of the parent's title into each child's title
            parent = titles[i - 1]
            titles[i] = [f"{parent[j // fanout].split()[0]} {t}" for j, t in enumerate(titles[i])]
        with store.transaction():
            for name in _TRIGGERS:
                conn.execute(f"DROP TRIGGER {name}")
            _insert(
                conn,
                coll.id,
                coll.root_node_id,
                levels,
                fanout,
                kinds,
                counts,
                titles,
                words,
                rng,
                passage_words,
            )
            _create_triggers(conn)
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('tree_version', '1') "
                "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
            )
        if fts:
            with store.transaction():
                conn.execute("INSERT INTO nodes_fts(nodes_fts) VALUES ('rebuild')")
        store.set_meta(
            "synthetic", {"n_passages": n_passages, "branching": branching, "seed": seed, "fts": fts}
        )
        conn.execute("PRAGMA synchronous = NORMAL")
        root = coll.root_node_id
        cid = coll.id
    finally:
        store.close()
    return SyntheticTree(
        str(path),
        cid,
        root,
        n_passages,
        levels,
        fanout,
        kinds,
        _count_kinds(kinds, counts),
        fts,
        round(time.perf_counter() - t0, 2),
    )


def _count_kinds(kinds: list[str], counts: list[int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for k, c in zip(kinds, counts, strict=True):
        out[k] = out.get(k, 0) + c
    return out


def _titles(rng: np.random.Generator, words: np.ndarray, n: int) -> list[str]:
    idx = rng.integers(0, len(words), size=(n, 2))
    return [f"{words[a]} {words[b]}" for a, b in idx]


def _insert(
    conn: sqlite3.Connection,
    cid: int,
    root: int,
    levels: int,
    fanout: int,
    kinds: list[str],
    counts: list[int],
    titles: list[list[str]],
    words: np.ndarray,
    rng: np.random.Generator,
    passage_words: int,
) -> None:
    """Depth-first: ids in reading order; one documents row per document node."""
    doc_level = kinds.index("document")
    next_id = int(conn.execute("SELECT coalesce(max(id), 0) FROM nodes").fetchone()[0]) + 1
    body = rng.integers(0, len(words), size=(counts[-1], passage_words))
    docs: list[tuple[object, ...]] = []
    rows: list[tuple[object, ...]] = []
    doc_ids = {j: j + 1 for j in range(counts[doc_level])}  # documents.id = 1..n (fresh store)
    stack: list[tuple[int, int, int, int, list[str]]] = [
        (0, j, root, -1, []) for j in reversed(range(counts[0]))
    ]
    while stack:
        level, j, parent, doc, heads = stack.pop()
        kind = kinds[level]
        title = titles[level][j]
        nid = next_id
        next_id += 1
        if kind == "document":
            doc = doc_ids[j]
            docs.append((doc, cid, f"synthetic/doc-{j:07d}.txt", "txt", "ok", title, "2025-01-01T00:00:00"))
        if kind == "passage":
            text = f"{title} " + " ".join(words[body[j]])
            rows.append(
                (
                    nid,
                    cid,
                    doc,
                    parent,
                    kind,
                    j % fanout,
                    level + 1,
                    "",
                    text[:200],
                    text,
                    "{}",
                    None,
                    json.dumps(heads),
                    " / ".join(heads),
                )
            )
        else:
            rows.append(
                (
                    nid,
                    cid,
                    doc if doc > 0 else None,
                    parent,
                    kind,
                    j % fanout,
                    level + 1,
                    title,
                    f"{title}: about {title.split()[-1]}",
                    "",
                    "{}",
                    None,
                    json.dumps(heads),
                    " / ".join(heads),
                )
            )
        if level + 1 < levels:
            first = j * fanout
            last = min(counts[level + 1], first + fanout)
            child_heads = [*heads, title] if kind == "section" else heads
            stack.extend((level + 1, c, nid, doc, child_heads) for c in reversed(range(first, last)))
        if len(rows) >= 50_000:
            _flush(conn, docs, rows)
    _flush(conn, docs, rows)


def _flush(conn: sqlite3.Connection, docs: list[tuple[object, ...]], rows: list[tuple[object, ...]]) -> None:
    if docs:
        conn.executemany(
            "INSERT INTO documents(id, collection_id, path, format, status, title, ingested_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            docs,
        )
        docs.clear()
    # a node's document row is always written before the node (documents come first in depth-first order)
    conn.executemany(
        "INSERT INTO nodes(id, collection_id, document_id, parent_id, kind, ordinal, depth, title, "
        "description, "
        "text, location, page, heading_path, heading_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    rows.clear()


def _create_triggers(conn: sqlite3.Connection) -> None:
    fts.create_triggers(conn)


def cached(directory: Path, n_passages: int, *, branching: int = BRANCHING, seed: int = 0) -> SyntheticTree:
    """The tree for these parameters from ``directory``, built once (a sidecar JSON records its shape)."""
    directory.mkdir(parents=True, exist_ok=True)
    db = directory / f"synthetic-{n_passages}-b{branching}-s{seed}.db"
    side = db.with_suffix(".json")
    if db.exists() and side.exists():
        return SyntheticTree(**json.loads(side.read_text()))
    for p in (db, side, Path(f"{db}-wal"), Path(f"{db}-shm")):
        p.unlink(missing_ok=True)
    tree = build(db, n_passages, branching=branching, seed=seed)
    side.write_text(tree.to_json())
    return tree


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n_passages", type=int)
    ap.add_argument("db", type=Path)
    ap.add_argument("--branching", type=int, default=BRANCHING)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fts", action="store_true", help="build the FTS5 index after the bulk insert")
    args = ap.parse_args()
    print(build(args.db, args.n_passages, branching=args.branching, seed=args.seed, fts=args.fts).to_json())


if __name__ == "__main__":
    main()
