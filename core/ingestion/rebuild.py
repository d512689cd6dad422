"""Check a library in full and rebuild a damaged one from its source files (the files are the truth).

:func:`diagnose` runs SQLite's full ``integrity_check`` (and FTS5's, when the library can be written) on a library
that may be damaged. :func:`salvage` reads what is still readable from a damaged library: the collections, which
file belongs to which collection, and the settings kept in ``meta`` (derived entries such as calibrations and the
topic hierarchy are rebuilt, not copied) and the conversations with their turns. :func:`rebuild` builds a fresh
library beside the old one (``<name>.rebuilding-<pid>``) with the same collections, settings and conversations,
ingesting every file again (a kept turn's citations point at the re-read documents, found by path), and swaps it in
only when it is complete: the old file is first given a second name (``.damaged-*`` or ``.replaced-*``, a hard link,
so the library is live under its own name at every moment) and the new one is renamed over it (``os.replace``,
atomic). An interrupted rebuild (Ctrl-C, ``kill -9``, a full disk, a file that could not be saved) leaves the old
library live and untouched; its partial file is removed then, or by the next ``doctor`` (:func:`leftovers`).

One rebuild at a time: :func:`rebuild` holds ``<library>.rebuild.lock`` (an exclusive SQLite lock, dropped by the
operating system when the process dies) and a second one is refused with :class:`RebuildRefused`; so is a rebuild
while an ingest runs into the library (its writes would be lost in the swap), and one without room for a second copy
of the library (:func:`check_space`). :func:`kept_copies` lists the old files kept beside a library, and
:func:`restore` puts one back in its place (the library it replaces is kept the same way).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from shelfwise.core.ingestion.lock import (
    RebuildRefused,
    ingest_lock,
    ingest_running,
    rebuild_lock,
    rebuild_running,
)
from shelfwise.core.ingestion.runner import IngestProgress, IngestReport, ingest
from shelfwise.core.store import fts
from shelfwise.core.store.db import Store
from shelfwise.core.store.lite import TableInfo, tables
from shelfwise.core.store.migrations import free_sibling
from shelfwise.core.store.opening import CLOSED_SUFFIX, connect_read_only
from shelfwise.core.store.types import SQLRow, SQLValue, StoreError, path_from_key

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
    meta: dict[str, SQLValue] = field(default_factory=dict)  # settings (raw JSON text, as stored)
    problems: list[str] = field(default_factory=list)
    # the conversations and their turns, as rows: (column names, rows) per table
    conversations: tuple[list[str], list[SQLRow]] = ([], [])
    turns: tuple[list[str], list[SQLRow]] = ([], [])

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
BUILDING = "rebuilding"  # the label of the new library while it is built: <name>.rebuilding-<pid>
KEPT_LABELS = ("replaced", "damaged")  # old libraries kept beside the new one: <name>.replaced-<time>
SPARE_BYTES = 16 << 20  # room asked for besides a copy of the library (the journal, the search index's merges)


class RebuildFailed(RuntimeError):
    """A rebuild that stopped before the swap (a full disk, a file that could not be saved): the old library is
    live, unchanged; the partial new one is removed."""


def _ro(path: Path) -> sqlite3.Connection:
    """Read-only, also on read-only media (a healthy library there was reported damaged: "unable to open")."""
    return fts.register(connect_read_only(path))


def _rows(conn: sqlite3.Connection, table: str, cols: str, problems: list[str]) -> Iterator[SQLRow]:
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


def _id(value: SQLValue) -> int:
    """An id read back (an integer key; a NULL or a blob there is a TypeError, as ``int()`` would raise)."""
    if isinstance(value, (int, float, str)):
        return int(value)
    raise TypeError(f"not an id: {value!r}")


def _json_text(value: SQLValue, empty: str) -> str | bytes:
    """A JSON column's text (``empty`` for NULL or ""); a number is read as its text."""
    if not value:
        return empty
    return value if isinstance(value, (str, bytes)) else str(value)


def salvage(path: Path) -> Salvage:
    out = Salvage()
    conn = _ro(path)
    try:
        for cid, name in _rows(conn, "collections", "id, name", out.problems):
            out.collections[_id(cid)] = str(name)
        for did, cid, p in _rows(conn, "documents", "id, collection_id, path", out.problems):
            out.documents.setdefault(_id(cid), []).append(path_from_key(str(p)))
            out.document_keys[_id(did)] = (_id(cid), str(p))
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


def _whole_table(conn: sqlite3.Connection, table: str, problems: list[str]) -> tuple[list[str], list[SQLRow]]:
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
                cites = json.loads(_json_text(d.get("citations"), "[]"))
                for c in cites:
                    c["document_id"] = new_doc(collection, int(c.get("document_id", 0)), str(c.get("path", "")))
                d["citations"] = json.dumps(cites)
                hits = json.loads(_json_text(d.get("hits"), "{}"))
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


def _siblings(db: Path, label: str) -> list[Path]:
    """The files beside ``db`` named ``<name>.<label>-*``, without their companions (-wal, -shm, locks, the record
    of a clean close)."""
    prefix = f"{db.name}.{label}-"
    try:
        names = os.listdir(db.parent)
    except OSError:
        return []
    return sorted(db.with_name(n) for n in names
                  if n.startswith(prefix) and not n.endswith(("-wal", "-shm", "-journal", ".ingest.lock",
                                                              ".index.lock", CLOSED_SUFFIX)))


def kept_copies(db: Path) -> list[Path]:
    """The old libraries kept beside ``db`` by rebuilds and restores (``.replaced-*``, ``.damaged-*``), oldest
    first."""
    found = [p for label in KEPT_LABELS for p in _siblings(db, label)]
    return sorted(found, key=lambda p: (_mtime(p), p.name))


def _mtime(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0


def leftovers(db: Path) -> list[Path]:
    """Partial libraries of rebuilds that were killed (``<name>.rebuilding-*``): not the library, never read."""
    return _siblings(db, BUILDING)


def remove_leftovers(db: Path) -> list[Path]:
    """Remove the partial files of killed rebuilds (only while no rebuild runs); returns what was removed."""
    if rebuild_running(db):
        return []
    gone = leftovers(db)
    for p in gone:
        _remove_family(p)
    return gone


def _remove_family(path: Path) -> None:
    """``path`` and every file named after it (its -wal, -shm, journal, lock files)."""
    try:
        names = os.listdir(path.parent)
    except OSError:
        return
    for n in names:
        if n == path.name or n.startswith(path.name + "-") or n.startswith(path.name + "."):
            with contextlib.suppress(OSError):
                os.unlink(path.with_name(n))


def _size(path: Path) -> int:
    total = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):
            total += os.stat(str(path) + suffix).st_size
    return total


def check_space(db: Path) -> None:
    """:class:`RebuildRefused` unless the folder of ``db`` has room for a second copy of it (its size now, with the
    write-ahead log, and :data:`SPARE_BYTES`)."""
    need = _size(db) + SPARE_BYTES
    try:
        free = shutil.disk_usage(db.parent).free
    except OSError as exc:
        raise RebuildRefused(f"cannot tell the free space in {db.parent}: {exc.strerror or exc}") from exc
    if free < need:
        raise RebuildRefused(f"not enough free space to rebuild: {free / 2**20:.1f} MB free in {db.parent}, about "
                             f"{need / 2**20:.1f} MB needed (a second copy of the library is built before the old "
                             "one is replaced); nothing was changed")


def _checkpoint(db: Path) -> None:
    """Fold the write-ahead log into the library file (so the file alone is the whole library), where it can be."""
    with contextlib.suppress(sqlite3.Error):
        conn = sqlite3.connect(str(db), timeout=5.0)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def swap_in(new: Path, db: Path, label: str) -> Path:
    """Make the complete library ``new`` the one at ``db``; the old file keeps a second name ``<name>.<label>-*``
    (returned). The old name is live at every moment: a hard link gives the old file its second name (a copy where
    the file system has no hard links), its -wal and -shm files go with it (checkpointed first, so they are
    normally gone), then ``os.replace`` puts the new file in its place in one step."""
    _checkpoint(db)
    aside = free_sibling(db, lambda stamp: f"{db.name}.{label}-{stamp}")
    try:
        os.link(db, aside)
    except OSError:
        shutil.copy2(db, aside)
    for suffix in ("-wal", "-shm"):
        side = db.with_name(db.name + suffix)
        if side.exists():
            side.rename(aside.with_name(aside.name + suffix))
    os.replace(new, db)
    _fsync_dir(db.parent)
    return aside


def restore(db: Path, kept: Path) -> Path:
    """Put the kept old library ``kept`` (one of :func:`kept_copies`) back at ``db``; the library it replaces is
    kept as ``.replaced-*`` (returned). RebuildRefused while a rebuild or ingest runs, or when ``kept`` is not a
    library."""
    with rebuild_lock(db):
        if ingest_running(db):
            raise RebuildRefused("an ingest is running into this library; restore when it has finished")
        try:
            conn = _ro(kept)
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise RebuildRefused(f"{kept} cannot be read as a library ({exc}); nothing was changed") from exc
        _checkpoint(kept)
        aside = swap_in(kept, db, "replaced") if db.exists() else db
        if aside == db:
            os.replace(kept, db)
        for suffix in ("-wal", "-shm"):  # a kept file's own log (when it could not be folded in) goes with it
            side = kept.with_name(kept.name + suffix)
            if side.exists():
                side.rename(db.with_name(db.name + suffix))
        return aside


def rebuild(
    path: Path, *, progress: Callable[[IngestProgress], None] | None = None, found: Salvage | None = None,
    healthy: bool = False, wait: float = 0.0,
) -> RebuildReport:
    """Build a new library from the source files of the one at ``path`` beside it, keeping collections, settings
    and conversations, and swap it in when complete; the old file is kept as ``.damaged-*`` (``.replaced-*`` when
    ``healthy``). Files that no longer exist are listed in ``missing``. :class:`RebuildRefused` before anything is
    done (another rebuild, an ingest, too little space); :class:`RebuildFailed` (a file could not be saved) or the
    interruption itself (KeyboardInterrupt, an OSError) when it stops before the swap: the old library is then
    live and unchanged."""
    with rebuild_lock(path, wait=wait):
        if ingest_running(path):
            raise RebuildRefused("an ingest is running into this library; rebuild when it has finished (nothing "
                                 "was changed)")
        remove_leftovers_held(path)
        check_space(path)
        found = found or salvage(path)
        new = path.with_name(f"{path.name}.{BUILDING}-{os.getpid()}")
        _remove_family(new)
        try:
            with ingest_lock(path):  # questions asked meanwhile answer from the old library and say an ingest runs
                report = _build(new, found, progress)
            _checkpoint(new)
            wal = new.with_name(new.name + "-wal")
            if wal.exists() and wal.stat().st_size > 0:  # never rename a library away from its own log
                raise RebuildFailed(f"the new library's write-ahead log could not be folded into it ({wal})")
            report.damaged_copy = swap_in(new, path, "replaced" if healthy else "damaged")
        finally:
            _remove_family(new)  # the partial library of a failed build; after the swap only its lock files
        return report


def remove_leftovers_held(db: Path) -> None:
    """:func:`remove_leftovers` for the holder of the rebuild lock."""
    for p in leftovers(db):
        _remove_family(p)


NOT_SAVED = ("could not save to the library", "could not record it")


def _build(path: Path, found: Salvage, progress: Callable[[IngestProgress], None] | None) -> RebuildReport:
    """The new library at ``path`` from ``found``; RebuildFailed when a file could not be saved in it."""
    try:
        store = Store(path)
    except (sqlite3.Error, StoreError) as exc:
        raise RebuildFailed(f"the new library could not be made ({exc})") from exc
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
    except sqlite3.Error as exc:
        full = "disk is full" in str(exc)
        raise RebuildFailed(f"the new library could not be written ({exc}{': the disk is full' if full else ''})"
                            ) from exc
    finally:
        store.close()
    unsaved = [r for rep in reports for r in rep.results if r.message.startswith(NOT_SAVED)
               or NOT_SAVED[1] in r.message]
    if unsaved:
        raise RebuildFailed(f"{len(unsaved)} file(s) could not be saved in the new library (first: "
                            f"{unsaved[0].message})")
    return RebuildReport(path, names, found.n_documents, missing, reports, found.problems,
                         len(found.meta), n_conv, n_turns)
