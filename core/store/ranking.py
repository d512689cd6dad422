"""FTS5 BM25 ranking: the statements behind :meth:`Store.search`, :meth:`Store.search_hits` and
:meth:`Store.search_ids` (``core/store/db.py``), as functions over the store's connection.

Ranking and rows are two statements: the best node ids with their -bm25 first, then the rows of those ids. A snippet
reads the node's text back through the index's source view; asked for in the ranking statement it would be made for
every matching row before the sort (docs/benchmarks.md, "BM25 without snippets"), so up to :data:`SNIPPET_BATCH`
hits the snippets are made for the returned ids only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Sequence

from shelfwise.core.store.fts import clean_snippet
from shelfwise.core.store.types import NODE_COLS, NodeTuple, SearchHit, SQLValue, node_from_row

SNIPPET_BATCH = 50  # search_hits makes snippets for at most this many rows by id; more, with the ranking
JOINED_NODE_COLS = ", ".join("n." + c.strip() for c in NODE_COLS.split(","))  # NODE_COLS of the joined node ``n``


def filters(kinds: Iterable[str] | None, collection_id: int | None,
            document_id: int | None = None) -> tuple[str, list[SQLValue]]:
    """A ``WHERE`` clause on the nodes (alias ``n``) by kind, collection and document, and its parameters; ``""``
    with no filter."""
    clauses: list[str] = []
    params: list[SQLValue] = []
    if kinds is not None:
        ks = list(kinds)
        clauses.append(f"n.kind IN ({', '.join('?' * len(ks))})" if ks else "0")
        params.extend(ks)
    if collection_id is not None:
        clauses.append("n.collection_id = ?")
        params.append(collection_id)
    if document_id is not None:
        clauses.append("n.document_id = ?")
        params.append(document_id)
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params


def _after_match(kinds: Sequence[str], collection_id: int | None,
                 document_ids: Collection[int] | None) -> tuple[str, list[SQLValue]]:
    """The ranking statements' filters on the joined node (``n``), after the MATCH."""
    where, params = filters(kinds, collection_id)
    where = where.replace("WHERE ", "AND ", 1)
    if document_ids is not None:
        where += f" AND n.document_id IN ({', '.join('?' * len(document_ids))})"
        params.extend(sorted(document_ids))
    return where, params


def rank(conn: sqlite3.Connection, match: str | None, limit: int, kinds: Sequence[str], collection_id: int | None,
         document_ids: Collection[int] | None) -> list[tuple[int, float]]:
    """The best ``limit`` node ids matching the FTS5 expression ``match``, with -bm25, best first (no row, no
    snippet). None, a limit <= 0 or an empty scope match nothing."""
    if match is None or limit <= 0 or (document_ids is not None and not document_ids):
        return []
    where, params = _after_match(kinds, collection_id, document_ids)
    return [(int(i), -float(score)) for i, score in conn.execute(
        f"SELECT n.id, bm25(nodes_fts) FROM nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid "
        f"WHERE nodes_fts MATCH ? {where} ORDER BY bm25(nodes_fts) LIMIT ?",
        (match, *params, int(limit)),
    )]


def ranked_rows(conn: sqlite3.Connection, match: str | None, limit: int, kinds: Sequence[str],
                collection_id: int | None, document_ids: Collection[int] | None) -> list[tuple[NodeTuple, float]]:
    """The best ``limit`` matching node rows with their -bm25, best first (:func:`rank`, then the rows of the
    nodes returned, 500 ids a statement)."""
    ranked = rank(conn, match, limit, kinds, collection_id, document_ids)
    rows: dict[int, NodeTuple] = {}
    ids = [i for i, _ in ranked]
    for i in range(0, len(ids), 500):
        part = ids[i:i + 500]
        for r in conn.execute(f"SELECT {NODE_COLS} FROM nodes WHERE id IN ({', '.join('?' * len(part))})", part):
            rows[int(r[0])] = tuple(r)
    return [(rows[i], score) for i, score in ranked if i in rows]


def hits(conn: sqlite3.Connection, match: str | None, limit: int, kinds: Sequence[str], collection_id: int | None,
         document_ids: Collection[int] | None) -> list[SearchHit]:
    """The best ``limit`` matching nodes, each with its -bm25 and a snippet (matched terms in ``[ ]``)."""
    if limit > SNIPPET_BATCH:
        return _hits_in_one_statement(conn, match, limit, kinds, collection_id, document_ids)
    rows = ranked_rows(conn, match, limit, kinds, collection_id, document_ids)
    snippets: dict[int, str] = {}
    if match is not None and rows:
        ids = [int(r[0]) for r, _ in rows]
        snippets = {int(i): sn for i, sn in conn.execute(
            "SELECT rowid, snippet(nodes_fts, -1, '[', ']', '\u2026', 16) FROM nodes_fts WHERE nodes_fts MATCH ? "
            f"AND rowid IN ({', '.join('?' * len(ids))})", (match, *ids))}
    return [SearchHit(node_from_row(r), score, clean_snippet(snippets.get(int(r[0]), ""))) for r, score in rows]


def _hits_in_one_statement(conn: sqlite3.Connection, match: str | None, limit: int, kinds: Sequence[str],
                           collection_id: int | None, document_ids: Collection[int] | None) -> list[SearchHit]:
    """:func:`hits` for more than :data:`SNIPPET_BATCH`: the snippets in the ranking statement (then made for every
    match: FTS5 would evaluate the whole expression again for each id of a ``rowid IN`` list)."""
    if match is None or limit <= 0 or (document_ids is not None and not document_ids):
        return []
    where, params = _after_match(kinds, collection_id, document_ids)
    rows = conn.execute(
        f"SELECT {JOINED_NODE_COLS}, bm25(nodes_fts), snippet(nodes_fts, -1, '[', ']', '\u2026', 16) "
        f"FROM nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid "
        f"WHERE nodes_fts MATCH ? {where} ORDER BY bm25(nodes_fts) LIMIT ?", (match, *params, int(limit)),
    ).fetchall()
    return [SearchHit(node_from_row(r[:12]), -float(r[12]), clean_snippet(r[13])) for r in rows]
