"""Check a library in full and rebuild a damaged one from its source files (the files are the truth).

:func:`diagnose` runs SQLite's full ``integrity_check`` (and FTS5's, when the library can be written) on a library
that may be damaged. :func:`salvage` reads what is still readable from a damaged library: the collections, which
file belongs to which collection, and the settings kept in ``meta`` (derived entries such as calibrations and the
topic hierarchy are rebuilt, not copied) and the conversations with their turns. :func:`rebuild` moves the damaged
file aside (never deletes it), creates a fresh library with the same collections, settings and conversations, and
ingests every file again; a kept turn's citations point at the re-read documents (found by path).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shelfwise.core.ingestion.runner import IngestProgress, IngestReport, ingest
from shelfwise.core.store import fts
from shelfwise.core.store.db import Store
from shelfwise.core.store.lite import TableInfo, tables
from shelfwise.core.store.migrations import free_sibling
from shelfwise.core.store.opening import connect_read_only
from shelfwise.core.store.types import path_from_key

# meta keys that describe the tree or are computed from it: rebuilt after a rebuild, not copied
DERIVED_META_PREFIXES = ("tree_version", "index_version:", "hierarchy:", "calibrated_tree:", "decision:",
                         "index_pending:")
_CHUNK = 500


@dataclass
class Diagnosis:
    path: Path
    integrity: list[str]  # ["ok"] when healthy
    fts: str  # "ok", the FTS5 error, or "not checked (...)"
    collections: int = 0
    documents: int = 0
    unreadable: list[str] = field(default_factory=list)  # tables that could not be read whole
    tables: list[TableInfo] = field(default_factory=list)  # every table with its rows (a healthy library's)

    @property
    def ok(self) -> bool:
        # FTS5's own check is an INSERT: on a read-only library it cannot run, and SQLite's integrity_check (which
        # reads every page, the search index's too) is the verdict (a healthy read-only library was called damaged)
        return self.integrity == ["ok"] and self.fts in ("ok", FTS_NOT_CHECKED) and not self.unreadable


@dataclass
class Salvage:
    collections: dict[int, str] = field(default_factory=dict)  # id -> name
    documents: dict[int, list[str]] = field(default_factory=dict)  # collection id -> file paths
    document_keys: dict[int, tuple[int, str]] = field(default_factory=dict)  # document id -> (collection id, path key)
    meta: dict[str, str] = field(default_factory=dict)  # settings (raw JSON text)
    problems: list[str] = field(default_factory=list)
    # the conversations and their turns, as rows: (column names, rows) per table
    conversations: tuple[list[str], list[tuple[Any, ...]]] = ([], [])
    turns: tuple[list[str], list[tuple[Any, ...]]] = ([], [])

    @property
    def n_documents(self) -> int:
        return sum(len(v) for v in self.documents.values())


@dataclass
class RebuildReport:
    damaged_copy: Path
    collections: list[str]
    documents_found: int
    missing: list[str]  # files the old library listed that no longer exist
    ingest_reports: list[IngestReport]  # one per collection
    problems: list[str]
    settings_kept: int
    conversations_kept: int = 0
    turns_kept: int = 0


FTS_NOT_CHECKED = "not checked (the library is read-only)"


def _ro(path: Path) -> sqlite3.Connection:
    """Read-only, also on read-only media (a healthy library there was reported damaged: "unable to open")."""
    return fts.register(connect_read_only(path))


def _rows(conn: sqlite3.Connection, table: str, cols: str, problems: list[str]) -> Iterator[tuple[Any, ...]]:
    """Every readable row of ``table``: the whole table at once, or, when a damaged page breaks that, rowid range
    by range (a range that fails is skipped and named in ``problems``)."""
    try:
        yield from conn.execute(f"SELECT {cols} FROM {table}").fetchall()
        return
    except sqlite3.DatabaseError as exc:
        problems.append(f"{table}: {exc}; reading it range by range")
    try:
        top = int(conn.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0)
    except sqlite3.DatabaseError:
        top = 1_000_000
    for lo in range(0, top + 1, _CHUNK):
        try:
            yield from conn.execute(
                f"SELECT {cols} FROM {table} WHERE rowid BETWEEN ? AND ?", (lo, lo + _CHUNK - 1)
            ).fetchall()
        except sqlite3.DatabaseError:
            problems.append(f"{table}: rows {lo}-{lo + _CHUNK - 1} unreadable")


def salvage(path: Path) -> Salvage:
    out = Salvage()
    conn = _ro(path)
    try:
        for cid, name in _rows(conn, "collections", "id, name", out.problems):
            out.collections[int(cid)] = str(name)
        for did, cid, p in _rows(conn, "documents", "id, collection_id, path", out.problems):
            out.documents.setdefault(int(cid), []).append(path_from_key(str(p)))
            out.document_keys[int(did)] = (int(cid), str(p))
        for key, value in _rows(conn, "meta", "key, value", out.problems):
            if not str(key).startswith(DERIVED_META_PREFIXES):
                out.meta[str(key)] = value
        out.conversations = _whole_table(conn, "conversations", out.problems)
        out.turns = _whole_table(conn, "conversation_turns", out.problems)
    finally:
        conn.close()
    for cid in out.documents:
        if cid not in out.collections:
            out.collections[cid] = f"recovered-{cid}"
            out.problems.append(f"collection {cid}: name unreadable; its files go to 'recovered-{cid}'")
    return out


def _whole_table(conn: sqlite3.Connection, table: str, problems: list[str]) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Every readable row of ``table`` with all its columns (none when the library is older than the table)."""
    try:
        cols = [str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})")]
    except sqlite3.DatabaseError as exc:
        problems.append(f"{table}: {exc}")
        return [], []
    if not cols:
        return [], []
    return cols, list(_rows(conn, table, ", ".join(cols), problems))


def _keep_conversations(store: Store, found: Salvage, new_ids: dict[tuple[str, str], int],
                        old_docs: dict[int, tuple[str, str]]) -> tuple[int, int]:
    """Copy the salvaged conversations and turns into the new library (same ids), each turn's citations and hit
    documents pointed at the re-read documents by (collection, path); node ids of hits are gone with the old tree.
    Returns (conversations, turns) kept."""
    conv_cols, conv_rows = found.conversations
    turn_cols, turn_rows = found.turns
    have_conv = {str(r[1]) for r in store.conn.execute("PRAGMA table_info(conversations)")}
    have_turn = {str(r[1]) for r in store.conn.execute("PRAGMA table_info(conversation_turns)")}
    conv_use = [c for c in conv_cols if c in have_conv]
    turn_use = [c for c in turn_cols if c in have_turn]
    collection_of = {}
    for row in conv_rows:
        d = dict(zip(conv_cols, row, strict=True))
        collection_of[d.get("id")] = str(d.get("collection", ""))

    def new_doc(collection: str, old_id: int, path: str = "") -> int:
        path = path or old_docs.get(old_id, ("", ""))[1]
        return new_ids.get((collection, path), 0)

    kept_turns = 0
    with store.transaction() as conn:
        for row in conv_rows:
            d = dict(zip(conv_cols, row, strict=True))
            conn.execute(f"INSERT INTO conversations({', '.join(conv_use)}) VALUES ({', '.join('?' * len(conv_use))})",
                         [d[c] for c in conv_use])
        for row in turn_rows:
            d = dict(zip(turn_cols, row, strict=True))
            if d.get("conversation_id") not in collection_of:
                continue
            collection = collection_of[d["conversation_id"]]
            try:
                cites = json.loads(d.get("citations") or "[]")
                for c in cites:
                    c["document_id"] = new_doc(collection, int(c.get("document_id", 0)), str(c.get("path", "")))
                d["citations"] = json.dumps(cites)
                hits = json.loads(d.get("hits") or "{}")
                docs = [new_doc(collection, int(x)) for x in hits.get("documents", [])]
                d["hits"] = json.dumps({"nodes": [], "documents": [x for x in docs if x]})
            except (ValueError, TypeError, AttributeError):
                pass  # a damaged row keeps what it had; reading it shows its citations as missing
            conn.execute(f"INSERT INTO conversation_turns({', '.join(turn_use)}) "
                         f"VALUES ({', '.join('?' * len(turn_use))})", [d[c] for c in turn_use])
            kept_turns += 1
    return len(conv_rows), kept_turns


def diagnose(path: Path, writable: bool) -> Diagnosis:
    """Full ``integrity_check``; FTS5's own check too when the library can be written (it is an INSERT)."""
    conn = _ro(path) if not writable else fts.register(sqlite3.connect(str(path), isolation_level=None))
    try:
        try:
            integrity = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(20)")]
        except sqlite3.DatabaseError as exc:
            integrity = [str(exc)]
        diag = Diagnosis(path, integrity, FTS_NOT_CHECKED)
        if writable and integrity == ["ok"]:
            try:
                conn.execute("INSERT INTO nodes_fts(nodes_fts, rank) VALUES ('integrity-check', 1)")
                diag.fts = "ok"
            except sqlite3.DatabaseError as exc:
                diag.fts = str(exc)
        for table in ("collections", "documents"):
            try:
                n = int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            except sqlite3.DatabaseError as exc:
                diag.unreadable.append(f"{table}: {exc}")
                continue
            if table == "collections":
                diag.collections = n
            else:
                diag.documents = n
        if integrity == ["ok"]:
            try:
                diag.tables = tables(conn)
            except sqlite3.DatabaseError as exc:
                diag.unreadable.append(f"tables: {exc}")
        return diag
    finally:
        conn.close()


def move_aside(path: Path, label: str = "damaged") -> Path:
    """Rename the library (and its -wal/-shm files) to ``<name>.<label>-<time>``; returns the new path. (Renamed,
    not copied like a migration's backup: the backup API would stop at the damaged pages.)"""
    target = free_sibling(path, lambda stamp: f"{path.name}.{label}-{stamp}")
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    path.rename(target)
    return target


def rebuild(
    path: Path, *, progress: Callable[[IngestProgress], None] | None = None, found: Salvage | None = None,
    healthy: bool = False,
) -> RebuildReport:
    """Move the library aside (``.damaged-*``, or ``.replaced-*`` when ``healthy``) and make a new one from its
    source files, keeping collections, settings and conversations. Files that no longer exist are listed in
    ``missing``."""
    found = found or salvage(path)
    damaged_copy = move_aside(path, "replaced" if healthy else "damaged")
    store = Store(path)
    reports: list[IngestReport] = []
    missing: list[str] = []
    try:
        for key, value in found.meta.items():
            with store.transaction():
                store.conn.execute(
                    "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )
        names = [found.collections[cid] for cid in sorted(found.collections)]
        for cid in sorted(found.collections):
            name = found.collections[cid]
            store.collection(name)
            files = [Path(p) for p in found.documents.get(cid, [])]
            present = [p for p in files if os.path.exists(p)]  # False (not an error) under a folder it may not read
            missing.extend(str(p) for p in files if not os.path.exists(p))
            if present:
                reports.append(ingest(store, present, name, progress=progress))
        new_ids = {(str(r[0]), str(r[1])): int(r[2]) for r in store.conn.execute(
            "SELECT c.name, d.path, d.id FROM documents d JOIN collections c ON c.id = d.collection_id")}
        old_docs = {did: (found.collections.get(cid, ""), key) for did, (cid, key) in found.document_keys.items()}
        n_conv, n_turns = _keep_conversations(store, found, new_ids, old_docs)
    finally:
        store.close()
    return RebuildReport(damaged_copy, names, found.n_documents, missing, reports, found.problems,
                         len(found.meta), n_conv, n_turns)
