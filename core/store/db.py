"""The tree store: collections, documents and their node trees in SQLite (WAL), with FTS5 and embeddings.

Tree: ``collection -> [cluster ...] -> document -> section ... -> passage``. Node ids are assigned in depth-first
order when a document is written, so ``ORDER BY id`` is reading order inside a document.

Thread-safety: a :class:`Store` owns one ``sqlite3`` connection and must be used from the thread that created it
(Python's ``check_same_thread`` stays on). Open one Store per thread or process; WAL mode lets readers run while one
writer writes, and writers wait up to ``timeout`` seconds for each other.

Transactions: every public write method is one transaction. ``with store.transaction():`` groups several (nested
calls become savepoints). Inside it, use the Store's methods or ``store.conn`` directly.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Self

import numpy as np

from shelfwise.core.json_types import JSONValue
from shelfwise.core.store import ranking
from shelfwise.core.store.lite import database, insert_rows, rebuild_fts
from shelfwise.core.store.opening import OpenedLibrary
from shelfwise.core.store.tables import delete_tables, write_tables
from shelfwise.core.store.textutil import fts_query
from shelfwise.core.store.tree_rows import insert_tree
from shelfwise.core.store.types import (
    DOC_COLS,
    KEPT_SUFFIX,
    NODE_COLS,
    STATUSES,
    CollectionRow,
    DocumentRow,
    FileMeta,
    NodeRow,
    SearchHit,
    SQLParams,
    SQLValue,
    StoreError,
    StoreStats,
    clean_text,
    doc_from_row,
    node_from_row,
    now,
    path_key,
)
from shelfwise.core.store.vectors import blob as vector_blob
from shelfwise.core.store.vectors import decode_float
from shelfwise.ingest.model import ParsedDocument

__all__ = [
    "KEPT_SUFFIX", "STATUSES", "CollectionRow", "DocumentRow", "FileMeta", "NodeRow", "SearchHit", "Store",
    "StoreError", "StoreStats",
]



def _in_lists(values: Sequence[str], size: int = 500) -> Iterator[tuple[list[str], str]]:
    """``values`` (each once, in order) ``size`` at a time, with the statement's ``?`` marks for an ``IN (...)``."""
    uniq = list(dict.fromkeys(values))
    for i in range(0, len(uniq), size):
        part = uniq[i:i + size]
        yield part, ",".join("?" * len(part))


class Store:
    """SQLite store of the collection tree. ``Store(":memory:")`` for tests; see the module doc for threads.

    Opening (:class:`~shelfwise.core.store.opening.OpenedLibrary`) runs SQLite's ``quick_check`` (``check=False``
    skips it) unless the file is as Shelfwise's last clean close left it (``trust_clean_close=False`` scans anyway;
    ``quick_checked`` says whether this open did). A library that fails it is opened read-only:
    ``damage`` says what the check found, reads work where the pages are intact, and writes raise
    :class:`StoreError` (``shelfwise doctor --rebuild`` rebuilds it from the source files). A library that cannot
    be written (a read-only file, folder or medium), or ``read_only=True``, is opened read-only too, with the reason
    in ``read_only_reason``.
    """

    def __init__(self, path: str | Path, *, timeout: float = 30.0, read_only: bool = False,
                 check: bool = True, trust_clean_close: bool = True) -> None:
        opened = OpenedLibrary(path, timeout=timeout, read_only=read_only, check=check,
                               trust_clean_close=trust_clean_close)
        self._opened = opened
        self.memory, self.path, self.conn = opened.memory, opened.path, opened.conn
        self.read_only, self.read_only_reason, self.damage = opened.read_only, opened.read_only_reason, opened.damage
        self.quick_checked, self.quick_check_seconds = opened.quick_checked, opened.quick_check_seconds
        self.migrations_applied, self.backup_path = opened.migrations_applied, opened.backup_path
        self._depth = 0
        # the last keyword rankings (search_ids), while the library is unchanged: a conversation's question is
        # ranked by the topic-shift test and then by the walk, ~0.8 s each at 10^6 passages (docs/scale.md)
        self._ranked: list[tuple[tuple[object, int, object], list[tuple[int, float]]]] = []

    # ----------------------------------------------------------------- plumbing
    def close(self) -> None:
        """Close the connection (a clean close of a writable library is recorded: see ``opening``)."""
        self._opened.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def why_read_only(self) -> str:
        """Why writes are refused (empty when the library is writable)."""
        if not self.read_only:
            return ""
        if self.damage:
            return (f"the library is damaged ({self.damage}); rebuild it from your files with "
                    f"`shelfwise doctor --rebuild`")
        return self.read_only_reason

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE``); nested uses become savepoints. Rolls back on error.
        A read-only library raises :class:`StoreError` (with the reason) instead of writing."""
        if self.read_only:
            raise StoreError(f"Cannot change the library: {self.why_read_only()}")
        level = self._depth
        self.conn.execute("BEGIN IMMEDIATE" if level == 0 else f"SAVEPOINT sp{level}")
        self._depth += 1
        try:
            yield self.conn
        except BaseException:
            self._depth -= 1
            # SQLite may have rolled the transaction back itself (a full disk, an I/O error): then there is
            # nothing to roll back, and trying would replace the real error with "no transaction is active"
            if self.conn.in_transaction:
                try:
                    if level == 0:
                        self.conn.execute("ROLLBACK")
                    else:
                        self.conn.execute(f"ROLLBACK TO sp{level}")
                        self.conn.execute(f"RELEASE sp{level}")
                except sqlite3.OperationalError:
                    if level == 0 and self.conn.in_transaction:
                        raise
            raise
        self._depth -= 1
        self.conn.execute("COMMIT" if level == 0 else f"RELEASE sp{level}")

    def _one(self, sql: str, params: SQLParams = ()) -> SQLValue:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def _bump_tree_version(self) -> None:
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES ('tree_version', '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
        )

    # ----------------------------------------------------------------- collections
    def collection(self, name: str) -> CollectionRow:
        """The collection called ``name``, created (with its root node) if it does not exist."""
        name = name.strip()
        if not name:
            raise ValueError("A collection needs a non-empty name.")
        found = self.find_collection(name)
        if found:
            return found
        with self.transaction():
            # another process may have created it since the look above (two first ingests into a new library):
            # look again inside the write lock
            found = self.find_collection(name)
            if found:
                return found
            cur = self.conn.execute(
                "INSERT INTO collections(name, created_at) VALUES (?, ?)", (name, now())
            )
            cid = int(cur.lastrowid or 0)
            cur = self.conn.execute(
                "INSERT INTO nodes(collection_id, kind, depth, title, description) VALUES (?, 'collection', 0, ?, ?)",
                (cid, name, name),
            )
            self.conn.execute("UPDATE collections SET root_node_id = ? WHERE id = ?", (cur.lastrowid, cid))
        found = self.find_collection(name)
        assert found is not None
        return found

    def find_collection(self, name: str) -> CollectionRow | None:
        row = self.conn.execute(
            "SELECT id, name, created_at, root_node_id FROM collections WHERE name = ?", (name.strip(),)
        ).fetchone()
        return CollectionRow(*row) if row else None

    def collections(self) -> list[CollectionRow]:
        rows = self.conn.execute("SELECT id, name, created_at, root_node_id FROM collections ORDER BY id")
        return [CollectionRow(*r) for r in rows]

    def _collection_by_id(self, collection_id: int) -> CollectionRow:
        row = self.conn.execute(
            "SELECT id, name, created_at, root_node_id FROM collections WHERE id = ?", (collection_id,)
        ).fetchone()
        if row is None:
            raise KeyError(f"No collection with id {collection_id}")
        return CollectionRow(*row)

    # ----------------------------------------------------------------- documents
    def documents(self, collection_id: int | None = None) -> list[DocumentRow]:
        if collection_id is None:
            rows = self.conn.execute(f"SELECT {DOC_COLS} FROM documents ORDER BY collection_id, path")
        else:
            rows = self.conn.execute(
                f"SELECT {DOC_COLS} FROM documents WHERE collection_id = ? ORDER BY path", (collection_id,)
            )
        return [doc_from_row(r) for r in rows]

    def document(self, document_id: int) -> DocumentRow | None:
        row = self.conn.execute(f"SELECT {DOC_COLS} FROM documents WHERE id = ?", (document_id,)).fetchone()
        return doc_from_row(row) if row else None

    def document_by_path(self, collection_id: int, path: str | Path) -> DocumentRow | None:
        row = self.conn.execute(
            f"SELECT {DOC_COLS} FROM documents WHERE collection_id = ? AND path = ?", (collection_id, path_key(path))
        ).fetchone()
        return doc_from_row(row) if row else None

    def write_document(
        self, collection_id: int, path: str | Path, file_meta: FileMeta, parsed: ParsedDocument
    ) -> int:
        """Write (or replace) one parsed document and its tree in ONE transaction; returns the document id.

        A replaced document keeps its id, and its document node keeps its parent (e.g. a topic cluster) if that
        still exists; a new one hangs under the collection root.
        """
        path = str(path)
        title = clean_text(parsed.title.strip()) or clean_text(Path(path).stem)
        with self.transaction():
            coll = self._collection_by_id(collection_id)
            parent_id, parent_depth = coll.root_node_id, 0
            old = self.document_by_path(collection_id, path)
            record = {
                "size": file_meta.size, "mtime": file_meta.mtime, "sha256": file_meta.sha256, "format": parsed.format,
                "status": "ok", "message": "", "title": title, "pages": parsed.pages,
                "sections": parsed.count("section"), "passages": parsed.count("passage"), "ingested_at": now(),
                "warnings": json.dumps(parsed.warnings), "ocr_pages": parsed.ocr_pages, "retry": 0, "languages": None,
            }
            if old is not None:
                prev = self.conn.execute(
                    "SELECT p.id, p.depth FROM nodes d JOIN nodes p ON p.id = d.parent_id "
                    "WHERE d.document_id = ? AND d.kind = 'document'",
                    (old.id,),
                ).fetchone()
                if prev is not None and prev[0] != coll.root_node_id:
                    parent_id, parent_depth = prev
                delete_tables(self.conn, old.id)
                self.conn.execute("DELETE FROM nodes WHERE document_id = ?", (old.id,))
                doc_id = self._put_document(collection_id, path, record, old.id)
            else:
                doc_id = self._put_document(collection_id, path, record, None)
            found = insert_tree(self.conn, collection_id, doc_id, parent_id, parent_depth, title, parsed)
            write_tables(self.conn, doc_id, found)
            self._bump_tree_version()
            self._mark_index_pending(collection_id)
        return doc_id

    def record_failure(
        self, collection_id: int, path: str | Path, file_meta: FileMeta, status: str, message: str,
        retry: bool = False, fmt: str | None = None,
    ) -> int:
        """Record that a file could not be ingested; returns the document id.

        If an OK version exists, its tree and status stay and the message says "... (previous version kept)"; the
        stored file metadata stays the old one, so the next run tries the file again. Otherwise the document row
        gets the error status and no nodes; ``retry`` (a failure that may pass) makes the next ingest try it again
        although the file is unchanged. ``fmt``: the row's format (default: the path's suffix; "folder" for a folder
        that could not be read).
        """
        if status not in ("error", "needs_ocr"):
            raise ValueError(f"Failure status must be 'error' or 'needs_ocr', not {status!r}")
        path = str(path)
        fmt = Path(path).suffix.lower().lstrip(".") if fmt is None else fmt
        with self.transaction():
            self._collection_by_id(collection_id)
            old = self.document_by_path(collection_id, path)
            message = clean_text(message)
            if old is not None and old.status == "ok":
                self.conn.execute("UPDATE documents SET message = ? WHERE id = ?", (message + KEPT_SUFFIX, old.id))
                return old.id
            record = {
                "size": file_meta.size, "mtime": file_meta.mtime, "sha256": file_meta.sha256, "format": fmt,
                "status": status, "message": message, "title": "", "pages": 0, "sections": 0, "passages": 0,
                "ingested_at": now(), "warnings": "[]", "ocr_pages": 0, "retry": int(retry),
            }
            if old is not None:
                delete_tables(self.conn, old.id)
                self.conn.execute("DELETE FROM nodes WHERE document_id = ?", (old.id,))
            return self._put_document(collection_id, path, record, old.id if old is not None else None)

    def _put_document(self, collection_id: int, path: str, record: dict[str, object], doc_id: int | None) -> int:
        """Update document ``doc_id`` with ``record``, or insert it as a new document of the collection (sqlite-utils'
        ``update`` / ``insert``, inside the caller's transaction); returns its id."""
        documents = database(self.conn).table("documents")
        if doc_id is not None:
            documents.update(doc_id, record)
            return doc_id
        documents.insert({"collection_id": collection_id, "path": path_key(path), **record})
        return int(documents.last_rowid or 0)

    def mark_unchanged(self, document_id: int, file_meta: FileMeta) -> None:
        """The file was touched but its content is the same: store the new mtime, clear a kept-version note."""
        with self.transaction():
            self.conn.execute(
                "UPDATE documents SET size = ?, mtime = ?, sha256 = ?, "
                "message = CASE WHEN status = 'ok' AND message LIKE ? THEN '' ELSE message END WHERE id = ?",
                (file_meta.size, file_meta.mtime, file_meta.sha256, "%" + KEPT_SUFFIX, document_id),
            )

    def remove_document(self, document_id: int) -> None:
        with self.transaction():
            cid = self._one("SELECT collection_id FROM documents WHERE id = ?", (document_id,))
            delete_tables(self.conn, document_id)
            self.conn.execute("DELETE FROM nodes WHERE document_id = ?", (document_id,))
            self.conn.execute("DELETE FROM documents WHERE id = ?", (document_id,))
            self._bump_tree_version()
            if cid is not None:
                self._mark_index_pending(int(cid))

    # ----------------------------------------------------------------- unfinished indexing
    def _mark_index_pending(self, collection_id: int) -> None:
        """In the writing transaction: the collection's derived index (vectors, topics, calibration) is behind."""
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
            (f"index_pending:{collection_id}",),
        )

    def index_pending(self, collection_id: int) -> int:
        """0 when the collection's index is up to date with its documents; otherwise a token that changes with
        every later write (pass it to :meth:`index_done`). A kill during indexing leaves it set."""
        return int(self._one("SELECT value FROM meta WHERE key = ?", (f"index_pending:{collection_id}",)) or 0)

    def index_done(self, collection_id: int, token: int) -> bool:
        """Clear the pending mark if nothing was written since ``token`` was read; True when cleared."""
        with self.transaction():
            cur = self.conn.execute(
                "DELETE FROM meta WHERE key = ? AND CAST(value AS INTEGER) = ?",
                (f"index_pending:{collection_id}", int(token)),
            )
            return cur.rowcount > 0

    def nodes_without_vectors(self, collection_id: int, model: str | None = None) -> int:
        """Documents, sections and passages of the collection that have no vector from ``model`` (None: from any
        embedder)."""
        same = " AND e.model = ?" if model is not None else ""
        return int(self._one(
            "SELECT count(*) FROM nodes n WHERE n.collection_id = ? AND n.kind IN ('document', 'section', 'passage') "
            f"AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.node_id = n.id{same})",
            (collection_id, *([model] if model is not None else [])),
        ) or 0)

    # ----------------------------------------------------------------- nodes
    def node(self, node_id: int) -> NodeRow | None:
        row = self.conn.execute(f"SELECT {NODE_COLS} FROM nodes WHERE id = ?", (node_id,)).fetchone()
        return node_from_row(row) if row else None

    def first_passage_after(self, document_id: int, node_id: int) -> int | None:
        """The id of the document's first passage after node ``node_id`` in reading order (None: none)."""
        row = self.conn.execute(
            "SELECT id FROM nodes WHERE document_id = ? AND kind = 'passage' AND id > ? ORDER BY id LIMIT 1",
            (document_id, node_id)).fetchone()
        return int(row[0]) if row else None

    def children(self, node_id: int) -> list[NodeRow]:
        rows = self.conn.execute(
            f"SELECT {NODE_COLS} FROM nodes WHERE parent_id = ? ORDER BY ordinal, id", (node_id,)
        )
        return [node_from_row(r) for r in rows]

    def ancestors(self, node_id: int) -> list[NodeRow]:
        """From the collection root down to the node's parent (the node itself excluded)."""
        rows = self.conn.execute(
            "WITH RECURSIVE up(id, parent_id, n) AS ("
            " SELECT id, parent_id, 0 FROM nodes WHERE id = ?"
            " UNION ALL SELECT nodes.id, nodes.parent_id, up.n + 1 FROM nodes JOIN up ON nodes.id = up.parent_id)"
            f" SELECT {', '.join('nodes.' + c.strip() for c in NODE_COLS.split(','))}"
            " FROM up JOIN nodes ON nodes.id = up.id WHERE up.n > 0 ORDER BY up.n DESC",
            (node_id,),
        )
        return [node_from_row(r) for r in rows]

    def iter_nodes(
        self, kinds: Iterable[str] | None = None, collection_id: int | None = None, document_id: int | None = None
    ) -> Iterator[NodeRow]:
        """Nodes in id order (reading order inside a document), optionally filtered."""
        where, params = ranking.filters(kinds, collection_id, document_id)
        for r in self.conn.execute(f"SELECT {NODE_COLS} FROM nodes n {where} ORDER BY id", params):
            yield node_from_row(r)

    def passages(self, document_id: int | None = None, collection_id: int | None = None) -> list[NodeRow]:
        return list(self.iter_nodes(("passage",), collection_id, document_id))

    def count_passages(self, collection_id: int | None = None) -> int:
        """How many passages the library (or one collection) holds, counted by SQLite."""
        where, params = ranking.filters(("passage",), collection_id)
        return int(self._one(f"SELECT count(*) FROM nodes n {where}", tuple(params)) or 0)

    # ----------------------------------------------------------------- search (the statements: core/store/ranking.py)
    def search(
        self, query: str, limit: int = 20, kinds: Sequence[str] = ("passage",), collection_id: int | None = None,
        *, document_ids: Collection[int] | None = None, match: str | None = None,
    ) -> list[tuple[NodeRow, float]]:
        """FTS5 BM25 over title, heading path and text. Score = -bm25 (higher is better). Safe for any input.
        ``document_ids`` limits it to those documents (a question's scope); ``match`` is an FTS5 expression used
        instead of the query's words (phrases and excluded words: ``core/navigation/scope.py``)."""
        rows = ranking.ranked_rows(self.conn, match or fts_query(query), limit, kinds, collection_id, document_ids)
        return [(node_from_row(r), score) for r, score in rows]

    def search_hits(
        self, query: str, limit: int = 20, kinds: Sequence[str] = ("passage",), collection_id: int | None = None,
        *, document_ids: Collection[int] | None = None, match: str | None = None,
    ) -> list[SearchHit]:
        """Like :meth:`search`, with a snippet per hit (matched terms in ``[ ]``)."""
        return ranking.hits(self.conn, match or fts_query(query), limit, kinds, collection_id, document_ids)

    def search_ids(
        self, query: str, limit: int = 20, kinds: Sequence[str] = ("passage",), collection_id: int | None = None,
        *, document_ids: Collection[int] | None = None, match: str | None = None,
    ) -> list[tuple[int, float]]:
        """Like :meth:`search`, node ids in place of the rows (what the walk's lexical evidence reads). The last
        four rankings are kept while the library is unchanged (no write by this connection or another): the same
        words asked again, with the same or a smaller ``limit``, read the kept ranking's first rows."""
        expression = match or fts_query(query)
        unchanged = (self.conn.total_changes, self._one("PRAGMA data_version"))
        key = (expression, tuple(kinds), collection_id, None if document_ids is None else tuple(sorted(document_ids)))
        for (kept_key, kept_limit, kept_state), ranked in self._ranked:
            if kept_key == key and kept_state == unchanged and (limit <= kept_limit or len(ranked) < kept_limit):
                return ranked[:limit]
        ranked = ranking.rank(self.conn, expression, limit, kinds, collection_id, document_ids)
        self._ranked = [((key, limit, unchanged), ranked), *self._ranked[:3]]
        return list(ranked)

    # ----------------------------------------------------------------- embeddings
    def documents_without_languages(self, collection_id: int) -> list[int]:
        """Ids of the collection's stored (ok) documents whose languages are not detected yet."""
        return [int(r[0]) for r in self.conn.execute(
            "SELECT id FROM documents WHERE collection_id = ? AND status = 'ok' AND languages IS NULL ORDER BY id",
            (collection_id,))]

    def set_document_languages(self, items: Sequence[tuple[int, Sequence[str]]]) -> None:
        """Each document's detected languages (main first; empty: none found)."""
        with self.transaction():
            self.conn.executemany("UPDATE documents SET languages = ? WHERE id = ?",
                                  [(",".join(langs), doc_id) for doc_id, langs in items])

    def set_embeddings(self, model: str, items: Sequence[tuple[int, np.ndarray]]) -> None:
        """Store (or replace) one vector per node for ``model`` (kept as int8 with a scale: ``core/store/vectors.py``).
        A node deleted meanwhile (its document re-ingested while another thread or process embedded it) is skipped."""
        rows = []
        for node_id, vec in items:
            v = np.asarray(vec, dtype=np.float32).ravel()
            rows.append((int(node_id), model, int(v.size), vector_blob(v), int(node_id)))
        with self.transaction():  # by hand: sqlite-utils' inserts have no WHERE EXISTS guard
            self.conn.executemany(
                "INSERT OR REPLACE INTO embeddings(node_id, model, dim, vector) "
                "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM nodes WHERE id = ?)", rows
            )

    def cache_vectors(self, model: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        """Remember vectors by the sha256 of the text they embed (see :meth:`cached_vectors`)."""
        now = time.time()
        rows = []
        for sha, vec in items:
            v = np.asarray(vec, dtype=np.float32).ravel()
            rows.append((model, sha, int(v.size), vector_blob(v), now))
        with self.transaction():
            insert_rows(self.conn, "vector_cache", ("model", "sha", "dim", "vector", "used"), rows, replace=True)

    def cached_vectors(self, model: str, shas: Sequence[str], touch: bool = True) -> dict[str, np.ndarray]:
        """The cached vectors among ``shas`` (text sha256 hex digests) for ``model``; marks them used unless
        ``touch`` is False (a question's read, which must not wait for an ingest's write lock)."""
        found: dict[str, np.ndarray] = {}
        for part, marks in _in_lists(shas):
            for sha, dim, blob in self.conn.execute(
                f"SELECT sha, dim, vector FROM vector_cache WHERE model = ? AND sha IN ({marks})", (model, *part)
            ):
                found[sha] = decode_float([blob], int(dim))[0]
        self._mark_cache_used(model, list(found), touch)
        return found

    def cached_shas(self, model: str, shas: Sequence[str], touch: bool = True) -> set[str]:
        """Which of ``shas`` the cache holds a vector of for ``model`` (marked used unless ``touch`` is False), without
        reading the vectors: an index run checking 10^6 sentences would otherwise hold them all as float32 (3 GB)."""
        found: set[str] = set()
        for part, marks in _in_lists(shas):
            found.update(str(r[0]) for r in self.conn.execute(
                f"SELECT sha FROM vector_cache WHERE model = ? AND sha IN ({marks})", (model, *part)))
        self._mark_cache_used(model, list(found), touch)
        return found

    def _mark_cache_used(self, model: str, shas: list[str], touch: bool) -> None:
        """The cache's rows of ``shas`` marked used now (what pruning keeps), unless ``touch`` is False (a question's
        read) or the library is read-only."""
        if shas and touch and not self.read_only:
            now = time.time()
            with self.transaction():
                self.conn.executemany("UPDATE vector_cache SET used = ? WHERE model = ? AND sha = ?",
                                      [(now, model, sha) for sha in shas])

    def prune_vector_cache(self, model: str, keep: int) -> int:
        """Keep the ``keep`` most recently used cached vectors of ``model``; returns how many were dropped."""
        with self.transaction():
            cur = self.conn.execute(
                "DELETE FROM vector_cache WHERE model = ? AND sha NOT IN (SELECT sha FROM vector_cache "
                "WHERE model = ? ORDER BY used DESC LIMIT ?)", (model, model, max(0, keep)))
            return cur.rowcount

    def embeddings(
        self, model: str, kinds: Iterable[str] | None = None, collection_id: int | None = None,
        document_id: int | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(node ids int64 [n], vectors float32 [n, dim], read back from int8) in node id order; empty arrays when
        there are none."""
        where, params = ranking.filters(kinds, collection_id, document_id)
        where = where.replace("WHERE ", "AND ", 1)
        rows = self.conn.execute(
            f"SELECT e.node_id, e.dim, e.vector FROM embeddings e JOIN nodes n ON n.id = e.node_id "
            f"WHERE e.model = ? {where} ORDER BY e.node_id",
            (model, *params),
        ).fetchall()
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        dims = {r[1] for r in rows}
        if len(dims) != 1:
            raise ValueError(f"Embeddings for model {model!r} have mixed dimensions {sorted(dims)}")
        dim = dims.pop()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        return ids, decode_float([r[2] for r in rows], dim)

    def embedding_blobs(self, model: str, collection_id: int) -> Iterator[tuple[int, int, bytes]]:
        """(node id, dim, stored blob) of every vector of ``model`` in the collection, streamed in node id order
        (the snapshot decodes them a block at a time: ``core/store/vectors.py``)."""
        yield from self.conn.execute(
            "SELECT e.node_id, e.dim, e.vector FROM embeddings e JOIN nodes n ON n.id = e.node_id "
            "WHERE e.model = ? AND n.collection_id = ? ORDER BY e.node_id", (model, collection_id))

    def nodes_missing_embedding(
        self, model: str, collection_id: int | None = None, kinds: Iterable[str] | None = None
    ) -> list[NodeRow]:
        """Nodes (all kinds but 'collection' unless ``kinds`` says) with no vector for ``model``, in id order."""
        ks = list(kinds) if kinds is not None else ["cluster", "document", "section", "passage"]
        where, params = ranking.filters(ks, collection_id)
        cols = ", ".join("n." + c.strip() for c in NODE_COLS.split(","))
        rows = self.conn.execute(
            f"SELECT {cols} FROM nodes n LEFT JOIN embeddings e ON e.node_id = n.id AND e.model = ? "
            f"{where} AND e.node_id IS NULL ORDER BY n.id",
            (model, *params),
        )
        return [node_from_row(r) for r in rows]

    # ----------------------------------------------------------------- meta and stats
    def get_meta(self, key: str, default: JSONValue = None) -> JSONValue:
        raw = self._one("SELECT value FROM meta WHERE key = ?", (key,))
        return default if raw is None else json.loads(str(raw))

    def set_meta(self, key: str, value: JSONValue) -> None:
        with self.transaction():
            database(self.conn).table("meta").upsert({"key": key, "value": json.dumps(value, ensure_ascii=False)},
                                               pk="key")

    def stats(self) -> StoreStats:
        def grouped(sql: str) -> dict[str, int]:
            return {str(k): int(v) for k, v in self.conn.execute(sql)}

        db = database(self.conn)  # sqlite-utils' counts; the grouped counts stay one GROUP BY each
        return StoreStats(
            collections=db.table("collections").count,
            documents=db.table("documents").count,
            documents_by_status=grouped("SELECT status, count(*) FROM documents GROUP BY status"),
            nodes_by_kind=grouped("SELECT kind, count(*) FROM nodes GROUP BY kind"),
            embeddings_by_model=grouped("SELECT model, count(*) FROM embeddings GROUP BY model"),
            db_bytes=int(self._one("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()") or 0),
        )

    def rebuild_fts(self) -> None:
        """Rebuild the full-text index from the nodes (sqlite-utils' ``rebuild_fts``), in one transaction."""
        with self.transaction():
            rebuild_fts(self.conn)

    def integrity_check(self) -> str:
        """SQLite's ``integrity_check`` plus FTS5's; ``"ok"`` when both pass."""
        result = str(self._one("PRAGMA integrity_check"))
        if result != "ok":
            return result
        try:
            self.conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('integrity-check', 1)")
        except sqlite3.DatabaseError as exc:
            return f"nodes_fts: {exc}"
        return "ok"
