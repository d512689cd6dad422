"""A parsed document's tree as node rows: ids in depth-first order (so ``ORDER BY id`` is reading order), each
node's description, location, heading path and text, inserted in one ``executemany`` and indexed in FTS5 with one
statement (FTS5 fed row by row from the trigger is slower; see ``migrations.py``). Both stay hand-written SQL where
the rest of the store's writes go through sqlite-utils (``lite``): the node rows are the hot path, where
sqlite-utils' per-value conversion check cost more than the 10% allowed, and the FTS5 step indexes only the new id
range through the view of ``fts.py``, which sqlite-utils' ``populate_fts`` (the whole table) cannot.
"""

from __future__ import annotations

import json
import sqlite3

from shelfwise.core.store.lite import NODE_COLUMNS
from shelfwise.core.store.textutil import describe
from shelfwise.core.store.types import SQLRow, clean_text, first_text, location_json
from shelfwise.ingest.model import ParsedDocument, ParsedNode, ParsedTable

NODE_INSERT = f"INSERT INTO nodes({', '.join(NODE_COLUMNS)}) VALUES ({', '.join('?' * len(NODE_COLUMNS))})"


def insert_nodes(conn: sqlite3.Connection, rows: list[SQLRow]) -> None:
    """``executemany``, not sqlite-utils' ``insert_all``: its per-value conversion check made the whole write path
    about 15% slower on the corpus (benchmarks/product/store_writes.py; docs/benchmarks.md, "Store writes")."""
    conn.executemany(NODE_INSERT, rows)


def insert_tree(
    conn: sqlite3.Connection, collection_id: int, doc_id: int, parent_id: int, parent_depth: int, title: str,
    parsed: ParsedDocument,
) -> list[tuple[int, ParsedTable, list[int]]]:
    """Insert ``parsed``'s tree under ``parent_id`` (inside the caller's transaction) and index it in FTS5. Returns
    each table's (section node id, table, the ids of its passages in order) for :func:`~.tables.write_tables`."""
    tables: list[tuple[int, ParsedTable, list[int]]] = []
    next_id = int(conn.execute(
        "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'nodes'), 0), "
        "coalesce((SELECT max(id) FROM nodes), 0))"
    ).fetchone()[0] or 0) + 1
    rows: list[SQLRow] = []
    first = next((n.text for n in parsed.nodes() if n.kind == "passage" and n.text.strip()), "")
    doc_node = next_id
    rows.append((doc_node, collection_id, doc_id, parent_id, "document", 0, parent_depth + 1, title,
                 describe(title, first), "", "{}", None, "[]", ""))
    next_id += 1

    def add(node: ParsedNode, parent: int, depth: int, ordinal: int, heads: list[str], heads_json: str) -> int:
        nonlocal next_id
        nid = next_id
        next_id += 1
        kind = node.kind if node.kind in ("section", "passage") else ("section" if node.children else "passage")
        node_title = clean_text(node.title.strip())
        text = clean_text(node.text)
        loc = node.location
        page = loc.page if loc.page is not None else loc.slide
        rows.append((nid, collection_id, doc_id, parent, kind, ordinal, depth, node_title,
                     describe(node_title, text if kind == "passage" else first_text(node)), text,
                     location_json(loc), page, heads_json, " / ".join([title, *heads])))
        if node.children:
            child_heads = [*heads, node_title] if kind == "section" else heads
            child_json = json.dumps(child_heads, ensure_ascii=False)
            ids = [add(child, nid, depth + 1, i, child_heads, child_json) for i, child in enumerate(node.children)]
            if node.table is not None:
                tables.append((nid, node.table, [i for i, c in zip(ids, node.children, strict=True)
                                                 if c.kind == "passage"]))
        return nid

    for i, child in enumerate(parsed.children):
        add(child, doc_node, parent_depth + 2, i, [], "[]")
    # Index the new nodes in one statement instead of row by row from the trigger (see migrations.py).
    conn.execute("INSERT INTO fts_bulk_insert(active) VALUES (1)")
    insert_nodes(conn, rows)
    conn.execute(
        "INSERT INTO nodes_fts(rowid, title, heading_text, text) "
        "SELECT id, title, heading_text, text FROM nodes_fts_source WHERE id BETWEEN ? AND ?",
        (doc_node, next_id - 1),
    )
    conn.execute("DELETE FROM fts_bulk_insert")
    return tables
