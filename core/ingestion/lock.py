"""The ingest lock: know when an ingest is running elsewhere (and why an unfinished index is finished later).

Writing a document marks its collection's index pending in the same transaction (``Store.index_pending``); the
mark is cleared only when embeddings, topic clusters and calibration are all done and nothing was written
meanwhile (:func:`shelfwise.core.indexing.finish.finish_index`). So a kill at any point during ingest or
indexing leaves the mark set, and the next ingest (even one that finds every file unchanged), the next question,
or the app's start finishes the work, with progress.

An ingest holds a shared lock on ``<library>.ingest.lock`` for as long as it runs (several ingests may run at
once). A question asked meanwhile sees the lock (:func:`ingest_running`) and answers from what is already indexed
instead of waiting for, or fighting over, the writer; the front end says so. The lock file is a tiny SQLite
database in rollback-journal mode: an ingest keeps a read transaction open on it (SQLite's SHARED lock), and
:func:`ingest_running` asks for an EXCLUSIVE one without waiting. SQLite locks the same way on every platform
(``fcntl`` on POSIX, ``LockFileEx`` on Windows) and the operating system drops the lock when the process dies, even
by ``kill -9``, so one code path serves everywhere (an ``fcntl.flock`` lock would do nothing on Windows).

A rebuild (``shelfwise doctor --rebuild``) holds ``<library>.rebuild.lock`` exclusively the same way
(:func:`rebuild_lock`); an ingest into a library being rebuilt is refused (:func:`refuse_while_rebuilt`): what it
wrote into the old file would be lost when the new one is swapped in.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from shelfwise.core.store.types import StoreError


class RebuildRefused(RuntimeError):
    """A rebuild (or a restore) that did not start, and why: another one runs, an ingest runs, too little space.
    Nothing was changed."""


def _lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".ingest.lock")


def _connect(path: Path, *, create: bool, timeout: float) -> sqlite3.Connection:
    mode = "rwc" if create else "rw"
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode={mode}", uri=True, timeout=timeout,
                           isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=DELETE")  # SHARED/EXCLUSIVE file locks (WAL readers take none)
    return conn


@contextlib.contextmanager
def ingest_lock(db: Path | None) -> Iterator[None]:
    """Held (shared) for the length of an ingest, so questions can tell an ingest is running."""
    conn: sqlite3.Connection | None = None
    if db is not None:
        try:
            conn = _connect(_lock_path(db), create=True, timeout=10.0)
            conn.execute("BEGIN")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # takes the SHARED lock, kept until the end
        except sqlite3.Error:  # a read-only folder (nothing can ingest there anyway), or a damaged lock file
            if conn is not None:
                conn.close()
            conn = None
    try:
        yield
    finally:
        if conn is not None:
            conn.close()  # ends the transaction: releases the lock


def ingest_running(db: Path | None) -> bool:
    """True while another process (or thread) ingests into the library at ``db``."""
    if db is None or not _lock_path(db).exists():
        return False
    try:
        conn = _connect(_lock_path(db), create=False, timeout=0.0)
    except sqlite3.OperationalError as exc:  # the journal-mode pragma meets an ingest's lock
        return "locked" in str(exc) or "busy" in str(exc)
    except sqlite3.Error:
        return False
    try:
        conn.execute("BEGIN EXCLUSIVE")
    except sqlite3.OperationalError as exc:
        # "database is locked": an ingest holds it. Anything else (a full disk, an I/O error) says nothing about
        # an ingest: on a full disk every question used to be told "An ingest is running" when none was.
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None:
            return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
        return "locked" in str(exc) or "busy" in str(exc)
    finally:
        conn.close()  # (rolls back a BEGIN EXCLUSIVE that succeeded)
    return False


def _rebuild_lock_path(db: Path) -> Path:
    return db.with_name(db.name + ".rebuild.lock")


@contextlib.contextmanager
def rebuild_lock(db: Path, wait: float = 0.0) -> Iterator[None]:
    """Held (exclusive) while the library at ``db`` is rebuilt or restored; :class:`RebuildRefused` when another
    process holds it for longer than ``wait`` seconds. An exclusive lock on a tiny SQLite file, like
    :func:`~shelfwise.core.ingestion.lock.ingest_lock`: the operating system drops it when the process dies."""
    lock = _rebuild_lock_path(db)
    try:
        conn = sqlite3.connect(f"{lock.resolve().as_uri()}?mode=rwc", uri=True, timeout=wait, isolation_level=None)
    except sqlite3.Error as exc:
        raise RebuildRefused(f"cannot take the rebuild lock {lock}: {exc}") from exc
    try:
        try:
            conn.execute("PRAGMA journal_mode=DELETE")
            conn.execute("BEGIN EXCLUSIVE")
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise RebuildRefused("another rebuild of this library is running; nothing was changed (run "
                                     "doctor again when it has finished)") from exc
            raise RebuildRefused(f"cannot take the rebuild lock {lock}: {exc}") from exc
        yield
    finally:
        conn.close()


def rebuild_running(db: Path) -> bool:
    """True while another process rebuilds or restores the library at ``db``."""
    if not _rebuild_lock_path(db).exists():
        return False
    try:
        with rebuild_lock(db):
            return False
    except RebuildRefused:
        return True


def refuse_while_rebuilt(db: Path | None) -> None:
    """StoreError while the library at ``db`` is being rebuilt: an ingest then would write into the old file."""
    if db is not None and rebuild_running(db):
        raise StoreError(f"the library {db} is being rebuilt (shelfwise doctor --rebuild); add files when the "
                         "rebuild has finished (nothing was written)")
