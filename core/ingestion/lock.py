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
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path


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
