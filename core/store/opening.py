"""Opening a library: connect, check, decide whether it can be written, migrate.

:class:`OpenedLibrary` does what :class:`~shelfwise.core.store.db.Store` needs before it can read or write: it
creates the folder, runs SQLite's ``quick_check`` unless the file is as Shelfwise's last clean close left it (a
library that fails it is reopened read-only, the finding kept in ``damage``), opens read-only a library that cannot
be written (a read-only file, folder or medium; immutable when SQLite cannot make the WAL index there), sets the
connection's pragmas (foreign keys, WAL, synchronous) and applies pending migrations, refusing a read-only library
that would need them. Every failure is a :class:`~shelfwise.core.store.types.StoreError` naming the library.

The check on open reads every page of the file, so it grows with the library (docs/reliability.md, "The check on
opening"). It is skipped only when the file is provably the one Shelfwise closed: a writable connection whose close
leaves no ``-wal`` or ``-journal`` beside the library (it was the last connection, everything is in the file) writes
the file's identity (device, inode, size, modification and change times in ns) to ``<library>.closed``
(:func:`record_clean_close`); an open scans unless that record matches the file, is newer than the file's last
modification, and nothing is beside it but the WAL of a connection open now (:func:`closed_as_recorded`). A crash
(it leaves a WAL nobody holds), a copy (another inode), a restore, a ``touch`` or any write by another program (the
change time moves) all scan as before.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from shelfwise.core.store import fts
from shelfwise.core.store.inert import write_text_atomically
from shelfwise.core.store.migrations import SchemaTooNew, migrate, refuse_foreign
from shelfwise.core.store.types import StoreError

log = logging.getLogger(__name__)

CLOSED_SUFFIX = ".closed"  # the record of the last clean close, beside the library
JOURNALS = ("-wal", "-journal")  # SQLite's files beside a library that holds changes not yet in it


def closed_record(path: Path) -> Path:
    """Where the record of the library's last clean close is kept: ``<library>.closed`` beside it."""
    return path.with_name(path.name + CLOSED_SUFFIX)


def _identity(st: os.stat_result) -> dict[str, int]:
    """What names one state of a file: a copy has another inode, any write (or ``touch``, ``chmod``, rename) moves
    the change time, which no program can set back."""
    return {"dev": st.st_dev, "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "ctime_ns": st.st_ctime_ns}


def _journal_beside(path: Path) -> bool:
    return any(path.with_name(path.name + suffix).exists() for suffix in JOURNALS)


SHM_DMS_BYTE = 128  # the byte of ``-shm`` every open SQLite connection holds a read lock on (unix VFS: "DMS")
PROC_LOCKS = Path("/proc/locks")


def wal_in_use(path: Path) -> bool:
    """Whether the ``-wal`` beside the library belongs to a connection open now (in any process), not to one that
    ended without closing: some process holds SQLite's lock on the ``-shm``'s DMS byte. Read from Linux's
    ``/proc/locks`` (opening the ``-shm`` to ask would drop this process's own SQLite locks on it when closed);
    False where that cannot be told (another system)."""
    shm = path.with_name(path.name + "-shm")
    try:
        st = shm.stat()
        locks = PROC_LOCKS.read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    node = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in locks.splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[1] == "POSIX" and parts[5] == node:
            start, end = parts[6], parts[7]
            if start.isdigit() and int(start) <= SHM_DMS_BYTE and (end == "EOF" or
                                                                   (end.isdigit() and int(end) >= SHM_DMS_BYTE)):
                return True
    return False


def closed_as_recorded(path: Path) -> bool:
    """Whether the library file at ``path`` is exactly as Shelfwise's last clean close left it: its identity equal
    to the record's, the record written after the file's last modification (a write in the same clock tick as the
    record could leave the times equal), no rollback journal beside it, and a ``-wal`` only when it belongs to a
    connection open now (:func:`wal_in_use`: the window while ``shelfwise ask`` runs; a crash leaves one nobody
    holds)."""
    record = closed_record(path)
    try:
        if path.with_name(path.name + "-journal").exists():
            return False
        if path.with_name(path.name + "-wal").exists() and not wal_in_use(path):
            return False
        st, rst = path.stat(), record.stat()
        saved = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return bool(saved == _identity(st) and rst.st_mtime_ns > st.st_mtime_ns)


def forget_clean_close(path: Path) -> None:
    try:
        closed_record(path).unlink(missing_ok=True)
    except OSError:
        pass


def record_clean_close(path: Path) -> bool:
    """After a writable connection to the library at ``path`` closed: record the file's identity when nothing is
    left beside it (no ``-wal``: this was the last connection and SQLite moved every change into the file), so the
    next open can skip the scan; otherwise remove any record. Returns whether it was written. The record is written
    whole (a temporary file renamed) and must be newer than the file: where the clock's tick is coarse, it is
    written again a tick later."""
    record = closed_record(path)
    if _journal_beside(path):
        forget_clean_close(path)
        return False
    try:
        st = path.stat()
        for _ in range(5):
            write_text_atomically(record, json.dumps(_identity(st)))
            if record.stat().st_mtime_ns > st.st_mtime_ns:
                return True
            time.sleep(0.01)
    except OSError as exc:
        log.debug("no clean-close record for %s: %s", path, exc)
    forget_clean_close(path)
    return False


def _not_writable(path: Path) -> str:
    """Why the library at ``path`` cannot be written, or "" (the folder must be writable too: WAL files)."""
    if path.exists() and not os.access(path, os.W_OK):
        return "the library file is read-only"
    if not os.access(path.parent, os.W_OK):
        return "the library's folder is read-only"
    return ""


def _is_read_only_error(exc: sqlite3.OperationalError) -> bool:
    msg = str(exc).lower()
    return "readonly" in msg or "read-only" in msg or "unable to open" in msg


def _pending_migrations(conn: sqlite3.Connection) -> list[str]:
    from shelfwise.core.store.migrations import MIGRATIONS, applied, refuse_foreign

    refuse_foreign(conn)
    done = set(applied(conn))
    unknown = sorted(done - {name for name, _ in MIGRATIONS})
    if unknown:
        raise SchemaTooNew(f"it was written by a newer version of Shelfwise (schema {', '.join(unknown)})")
    return [name for name, _ in MIGRATIONS if name not in done]


def _foreign_bytes(path: Path) -> bool:
    """Whether the file at ``path`` holds bytes and they do not start as an SQLite database does (a text file, a
    file of ``/proc`` whose size reads as 0): SQLite would take it for an empty database to create. A file that is
    empty or cannot be read is left to SQLite."""
    try:
        with path.open("rb") as fh:
            head = fh.read(16)
    except OSError:
        return False
    return bool(head) and head != b"SQLite format 3\x00"[: len(head)]


def _truncated_pages(path: Path) -> tuple[int, int] | None:
    """(pages the header records, pages the file holds) when the library file is shorter than its header says (a
    copy or a disk that stopped half-way), else None. SQLite then calls every read "malformed"."""
    try:
        with path.open("rb") as fh:
            head = fh.read(100)
        size = path.stat().st_size
    except OSError:
        return None
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        return None
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    recorded = int.from_bytes(head[28:32], "big")
    valid = head[24:28] == head[92:96]  # the header's page count is SQLite's word only when this holds
    if not page_size or not valid or recorded * page_size <= size:
        return None
    return recorded, size // page_size


_READABLE_COPIES: list[Path] = []


def _readable_copy(path: Path, pages: int, recorded: int) -> Path:
    """A copy of a truncated library that SQLite can read what is there from (the tables whose pages survived);
    the original is never changed. Removed when the process ends. The missing pages are put back as zeros, so a
    table whose root page was lost is the only one that reads as damaged (a header shortened to the pages left
    would make SQLite refuse the whole schema: "invalid rootpage"); where the file system cannot hold them, the
    header records the pages the file has."""
    import atexit
    import shutil
    import tempfile

    def remove_copies() -> None:
        for p in _READABLE_COPIES:
            shutil.rmtree(p, ignore_errors=True)

    folder = Path(tempfile.mkdtemp(prefix="shelfwise-truncated-"))
    if not _READABLE_COPIES:
        atexit.register(remove_copies)
    _READABLE_COPIES.append(folder)
    copy = folder / path.name
    shutil.copyfile(path, copy)
    with copy.open("r+b") as fh:
        page_size = int.from_bytes(_page_size_bytes(fh), "big")
        page_size = 65536 if page_size == 1 else page_size
        try:
            fh.truncate(recorded * page_size)  # sparse zeros where the lost pages were
        except OSError:
            fh.seek(28)
            fh.write(pages.to_bytes(4, "big"))
    return copy


def _page_size_bytes(fh: BinaryIO) -> bytes:
    fh.seek(16)
    return fh.read(2)


def truncation(path: Path) -> str:
    """In words, how much of the library file is missing ("" when none is)."""
    found = _truncated_pages(path)
    if found is None:
        return ""
    recorded, pages = found
    return f"the file is truncated: it holds {pages} of its {recorded} pages"


def connect_read_only(path: Path, timeout: float = 30.0) -> sqlite3.Connection:
    """A read-only connection to the library at ``path``; on read-only media, where SQLite cannot make a WAL
    library's -shm index, the file is read as immutable (nothing can change it there). A truncated library is read
    from a copy whose header records the pages that are there (:func:`_readable_copy`). Errors other than these are
    left to the caller's first query."""
    found = _truncated_pages(path)
    if found is not None:
        copy = _readable_copy(path, found[1], found[0])
        return sqlite3.connect(f"{copy.resolve().as_uri()}?mode=ro&immutable=1", uri=True, isolation_level=None,
                               timeout=timeout)
    uri = f"{path.resolve().as_uri()}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=timeout)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as exc:
        if "unable to open" not in str(exc):
            return conn  # reported by the checks that follow
        conn.close()
        conn = sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None, timeout=timeout)
    except sqlite3.DatabaseError:
        pass
    return conn


class OpenedLibrary:
    """The open connection and what opening found (see the module doc)."""

    def __init__(self, path: str | Path, *, timeout: float = 30.0, read_only: bool = False,
                 check: bool = True, trust_clean_close: bool = True) -> None:
        self.memory = str(path) == ":memory:"
        self.path = None if self.memory else Path(path)
        self.read_only = read_only
        self.read_only_reason = "opened read-only" if read_only else ""
        self.damage = ""
        self.quick_checked = False  # whether this open ran quick_check (see the module doc for when it does not)
        self.quick_check_seconds = 0.0
        self.migrations_applied: list[str] = []
        self.backup_path: Path | None = None
        self._timeout = timeout
        if self.path is not None and not read_only:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"Cannot open the library {path}: cannot create its folder ({exc})") from exc
            why = _not_writable(self.path)
            if why:
                self.read_only, self.read_only_reason = True, why
        if self.path is not None and self.path.exists() and not self.path.is_file():
            from shelfwise.core.paths import path_kind

            raise StoreError(f"Cannot open the library {path}: it is {path_kind(self.path)}, not a library file; "
                             "give the path of a library file (a new name makes a new library) with --db")
        if self.path is not None and self.read_only and not self.path.exists():
            raise StoreError(f"Cannot open the library {path}: no such file")
        if self.path is not None and _foreign_bytes(self.path):
            raise StoreError(f"Cannot open the library {path}: file is not a database (its first bytes are not "
                             "SQLite's), so not a Shelfwise library; give the path of a library file (a new name "
                             "makes a new library) with --db")
        # before connecting: the first statement makes the -wal that the record's check looks for
        scan = check and self.path is not None and not (trust_clean_close and closed_as_recorded(self.path))
        if check and self.path is not None and not scan:
            log.debug("%s is as its last clean close left it: quick_check skipped", self.path)
        self.conn = self._connect()
        try:
            if scan:
                self._quick_check()
            self._setup()
        except sqlite3.OperationalError as exc:
            if self.read_only or not _is_read_only_error(exc):
                self.conn.close()
                raise StoreError(f"Cannot open the library {path}: {exc}") from exc
            # e.g. a read-only medium that os.access did not see: browse it read-only
            self.conn.close()
            self.read_only, self.read_only_reason = True, f"the library cannot be written ({exc})"
            self.conn = self._connect()
            try:
                self._setup()
            except (sqlite3.DatabaseError, SchemaTooNew) as exc2:
                self.conn.close()
                raise StoreError(f"Cannot open the library {path}: {exc2}") from exc2
        except (sqlite3.DatabaseError, SchemaTooNew, StoreError) as exc:
            self.conn.close()
            if isinstance(exc, StoreError):
                raise
            raise StoreError(f"Cannot open the library {path}: {exc}") from exc

    def close(self) -> None:
        """Close the connection; a writable, sound library's clean close is recorded (:func:`record_clean_close`)
        so that the next open need not scan it."""
        self.conn.close()
        if self.path is not None and not self.read_only and not self.damage:
            record_clean_close(self.path)

    def _connect(self) -> sqlite3.Connection:
        return fts.register(self._open())

    def _open(self) -> sqlite3.Connection:
        if self.path is not None and self.read_only:
            return connect_read_only(self.path, self._timeout)
        return sqlite3.connect(":memory:" if self.path is None else str(self.path), isolation_level=None,
                               timeout=self._timeout)

    def _when_free(self, step: Callable[[], object]) -> None:
        """Run ``step``, again after a short sleep while another connection holds the lock it needs, until the
        open's timeout."""
        deadline = time.monotonic() + self._timeout
        pause = 0.01
        while True:
            try:
                step()
                return
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.25)

    def _quick_check(self) -> None:
        """SQLite's ``quick_check``; on damage, reopen read-only and keep the finding in ``damage``."""
        t0 = time.perf_counter()
        self.quick_checked = True
        try:
            rows: list[str] = []

            def read() -> None:
                rows[:] = [str(r[0]) for r in self.conn.execute("PRAGMA quick_check(5)")]

            self._when_free(read)
        except sqlite3.DatabaseError as exc:
            if "not a database" in str(exc) or "encrypted" in str(exc):
                raise StoreError(f"Cannot open the library {self.path}: {exc}") from exc
            rows = [truncation(self.path) if self.path is not None and truncation(self.path) else str(exc)]
        self.quick_check_seconds = time.perf_counter() - t0
        log.debug("quick_check of %s: %s in %.2f s", self.path, "; ".join(rows)[:200], self.quick_check_seconds)
        if rows == ["ok"]:
            return
        self.damage = "; ".join(rows)[:500]
        if not self.read_only:
            self.conn.close()
            self.read_only, self.read_only_reason = True, "the library is damaged"
            self.conn = self._connect()

    def _setup(self) -> None:
        self.conn.execute("PRAGMA foreign_keys = ON")
        if self.read_only:
            self.conn.execute("PRAGMA query_only = ON")
            pending = _pending_migrations(self.conn)
            if pending:
                raise StoreError(
                    f"Cannot open the library {self.path}: it needs upgrading ({', '.join(pending)}) but "
                    f"{self.read_only_reason or 'it is read-only'}"
                )
            return
        # Some SQLite builds (Debian's) default to secure_delete, which zeroes freed pages and slows replaces
        # (docs/benchmarks.md, "Store"). Removed text may then linger in free pages until VACUUM, as on most other
        # builds.
        self.conn.execute("PRAGMA secure_delete = OFF")
        refuse_foreign(self.conn)  # before WAL is switched on: another program's file is left as it was
        if not self.memory:
            # switching a new library to WAL needs it alone; SQLite does not wait for that (two first ingests into
            # one new library at once lost one with "database is locked": docs/benchmarks.md, "Store")
            self._when_free(lambda: self.conn.execute("PRAGMA journal_mode = WAL"))
            self.conn.execute("PRAGMA synchronous = NORMAL")  # with WAL: consistent after any crash
        self.migrations_applied, self.backup_path = migrate(self.conn, self.path)
