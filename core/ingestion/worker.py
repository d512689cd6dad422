"""Parse files in a separate worker process, so a crash or a hang inside a native library is one failed file.

PyMuPDF, onnxruntime and the Office libraries run native code on untrusted files. In-process, a segfault there
ends the whole batch (and, in the desktop app, the app). :class:`ParseWorker` sends each path to a long-lived
child process (``spawn`` start method: safe from a multi-threaded Qt process) and turns a dead child, a timeout or
a cancel into an :class:`IngestError` for that file; the next file gets a fresh child.

Bounds (all from :class:`~shelfwise.ingest.model.Limits`): the memory cap that works everywhere is a watchdog
thread in the parent (:class:`~shelfwise.core.ingestion.watchdog.MemoryWatchdog`) that kills the child when its
resident memory passes ``max_worker_rss_bytes`` (read through ``/proc``, the Windows or the macOS API); on POSIX the
child also caps its own address space (``RLIMIT_AS``), so a runaway allocation fails inside the parser first and
the file fails with "not enough memory". A file that takes longer than ``max_parse_seconds`` is killed too.
``peak_rss_bytes`` is the child's peak resident memory so far (its own high-water mark reported with each reply,
and the watchdog's samples). A child left holding more than ``worker_recycle_rss_bytes`` after a file (the heap a big
file grew stays resident) is replaced before the next file, so one file's high-water mark does not count against the
next file's cap; ``recycled`` counts those replacements.

Packaged apps (PyInstaller) must call ``multiprocessing.freeze_support()`` at the start of ``main``.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import sys
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import NamedTuple, NoReturn, Self

from shelfwise.core.ingestion.files import FileId, NotAFile, pinned
from shelfwise.core.ingestion.watchdog import MemoryWatchdog, rss_bytes
from shelfwise.ingest.model import (
    CorruptFile,
    EmptyDocument,
    IngestError,
    Limits,
    NeedsOCR,
    ParsedDocument,
    PasswordProtected,
    ReadFailed,
    TooLarge,
    UnsupportedFormat,
)
from shelfwise.ingest.progress import report, reporting


class ParserCrashed(CorruptFile):
    """The parse worker died on the file. Killed from outside (SIGKILL, SIGTERM: the out-of-memory killer, a user)
    the failure may pass (``passing``); a crash of its own (a segfault in a native library) is about the file."""


class TimedOut(TooLarge):
    """Parsing passed the time cap: on a loaded machine that may pass, so the next ingest tries again."""

    passing = True


_OUTSIDE_SIGNALS = {9, 15, 2, 1}  # SIGKILL, SIGTERM, SIGINT, SIGHUP


class Cancelled(IngestError):
    pass


DEFAULT_PARSER = "shelfwise.ingest.registry:parse"
DEFAULT_LIMITS = Limits()


def _limit_memory(limits: Limits) -> None:
    """Cap this process's address space (POSIX); the hard limit stays, so a later, larger cap can be set."""
    try:
        import resource
    except ImportError:  # Windows: the parent's watchdog thread is the cap
        return
    try:
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = limits.max_worker_address_space_bytes
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ValueError, OSError):  # e.g. a platform that ignores it
        pass


def _peak_rss() -> int:
    """This process's peak resident memory: ``VmHWM`` on Linux (``ru_maxrss`` there survives the exec of a spawned
    child, so it would report the parent's peak), ``ru_maxrss`` elsewhere."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:
        return 0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


class Note(NamedTuple):
    """A message of the child that is not a file's result: ``ready`` (its parser imported), ``failed`` (it could
    not start: why) or ``progress`` (a parser's report, e.g. "OCR page 3/12")."""

    kind: str
    text: str = ""


class Parsed(NamedTuple):
    """A file parsed: the document, the seconds parsing took and the child's peak resident memory."""

    document: ParsedDocument
    seconds: float
    peak_rss: int


class Failed(NamedTuple):
    """A file the parser refused: the :class:`IngestError` subclass's name, its status and message, the seconds
    it took and the child's peak resident memory."""

    name: str
    status: str
    message: str
    seconds: float
    peak_rss: int


Reply = Note | Parsed | Failed  # what the child sends over the pipe (pickled)


def _serve(conn: Connection, parser: str) -> None:
    """Child process: parse paths with ``parser`` ("module:function") until the parent closes the pipe."""
    import importlib

    try:
        module, _, name = parser.partition(":")
        parse = getattr(importlib.import_module(module), name)
    except Exception as exc:  # reported to the parent, which explains it to the user
        with contextlib.suppress(OSError, EOFError):
            conn.send(Note("failed", f"{exc.__class__.__name__}: {exc}"))
        return
    try:
        conn.send(Note("ready"))
    except (OSError, EOFError):  # the parent died while this child started (kill -9): nothing to do, nothing to say
        return

    while True:
        try:
            path, limits, ident = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        _limit_memory(limits)
        t0 = time.perf_counter()
        reply: Reply
        try:
            # the file opened once here and checked against the walk's identity is the one parsed (files.pinned)
            with reporting(lambda message: conn.send(Note("progress", message))), \
                    pinned(Path(path), ident) as opened:  # e.g. "OCR page 3/12"
                reply = Parsed(parse(opened, limits), time.perf_counter() - t0, _peak_rss())
        except NotAFile as exc:  # replaced by a link or another file since the walk, or no longer a regular file
            reply = Failed(UnsupportedFormat.__name__, "error", f"{exc.strerror}: not read",
                           time.perf_counter() - t0, _peak_rss())
        except FileNotFoundError:  # what registry.parse says of a file gone before it was opened
            reply = Failed(IngestError.__name__, "error", "file not found", time.perf_counter() - t0, _peak_rss())
        except OSError as exc:  # it could not be opened now (permissions, an I/O error): a failure that may pass
            reply = Failed(ReadFailed.__name__, "error", f"cannot read file: {exc.strerror or exc}",
                           time.perf_counter() - t0, _peak_rss())
        except IngestError as exc:
            reply = Failed(exc.__class__.__name__, exc.status, str(exc), time.perf_counter() - t0, _peak_rss())
        except MemoryError:
            reply = Failed("TooLarge", "error",
                           f"not enough memory to parse this file (the parser may use "
                           f"{limits.max_worker_address_space_bytes / 2**20:.0f} MB of address space)",
                           time.perf_counter() - t0, _peak_rss())
        except Exception as exc:  # registry.parse converts library errors; last resort
            reply = Failed("CorruptFile", "error", f"unexpected error: {exc.__class__.__name__}: {exc}",
                           time.perf_counter() - t0, _peak_rss())
        try:
            conn.send(reply)
        except (OSError, EOFError):  # the parent is gone
            return
        except Exception as exc:  # e.g. the result does not pickle
            conn.send(Failed("CorruptFile", "error", f"could not return the parsed document: {exc}", 0.0,
                             _peak_rss()))


# the parse failures a child names in its reply, by class name (another name is an IngestError)
ERRORS: dict[str, type[IngestError]] = {cls.__name__: cls for cls in (
    ReadFailed, PasswordProtected, CorruptFile, UnsupportedFormat, NeedsOCR, EmptyDocument, TooLarge)}


def _error(name: str, status: str, message: str) -> IngestError:
    exc = ERRORS.get(name, IngestError)(message)
    exc.status = status
    return exc


class ParseWorker:
    """Callable like ``registry.parse`` (plus an optional cancel check); runs the parser in a child process.

    ``timeout`` bounds one file (seconds; None: the ``max_parse_seconds`` of the limits each call gets);
    ``parser`` names the parse function ("module:function", importable in the child). Use as a context manager,
    or call :meth:`close`. ``last_parse_seconds`` is the time the child spent parsing the last file (without
    start-up and transfer); ``peak_rss_bytes`` the child's peak resident memory (0 when unknown);
    ``killed_over_memory`` counts children the watchdog killed for passing ``max_worker_rss_bytes``.
    """

    def __init__(
        self, timeout: float | None = None, poll_interval: float = 0.2, parser: str = DEFAULT_PARSER,
        start_timeout: float = 120.0,
    ) -> None:
        self.parser = parser
        self.start_timeout = start_timeout
        self.timeout = timeout
        self.poll_interval = poll_interval
        self.last_parse_seconds = 0.0
        self.peak_rss_bytes = 0
        self.killed_over_memory = 0
        self.recycled = 0
        self._proc: BaseProcess | None = None
        self._conn: Connection | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> Connection:
        if self._proc is not None and self._proc.is_alive() and self._conn is not None:
            return self._conn
        self._stop()
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(child, self.parser), name="shelfwise-parser", daemon=True)
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        # Wait for the child to import its parser, so start-up time does not count against a file's timeout.
        hello: Reply = Note("failed", "no answer")
        try:
            if parent.poll(self.start_timeout):
                hello = parent.recv()
        except (EOFError, OSError) as exc:
            hello = Note("failed", f"exit code {proc.exitcode} ({exc})")
        if not (isinstance(hello, Note) and hello.kind == "ready"):
            self._stop()
            failed = ParserCrashed(f"the parser process could not start: {hello[1]}")
            failed.passing = True
            raise failed
        return parent

    def _stop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join(timeout=10)
        self._proc, self._conn = None, None

    def close(self) -> None:
        self._stop()

    def parse_fn(self, cancel: Callable[[], bool] | None = None) -> Callable[[Path, Limits], ParsedDocument]:
        """A ``parse(path, limits)`` function bound to this worker and a cancel check."""
        return lambda path, limits: self(path, limits, cancel)

    def __call__(
        self, path: Path, limits: Limits = DEFAULT_LIMITS, cancel: Callable[[], bool] | None = None,
        identity: FileId | None = None,
    ) -> ParsedDocument:
        """Parse ``path`` in the child; ``identity`` (device, inode, as the walk saw the file): the child parses only
        that file (another one swapped in under the name fails with :data:`~.files.REPLACED`)."""
        conn = self._start()  # raises ParserCrashed if no child can start: every file then fails with the reason
        self.last_parse_seconds = 0.0
        try:
            conn.send((str(path), limits, identity))
        except (OSError, EOFError) as exc:
            self._stop()
            gone = ParserCrashed(f"the parser process is not responding ({exc})")
            gone.passing = True
            raise gone from exc
        timeout = self.timeout if self.timeout is not None else limits.max_parse_seconds
        proc = self._proc
        assert proc is not None and proc.pid is not None  # _start left a live child
        with MemoryWatchdog(proc.pid, limits.max_worker_rss_bytes, proc.kill, self.poll_interval) as watchdog:
            try:
                reply = self._await(conn, timeout, cancel, watchdog)
            finally:
                self.peak_rss_bytes = max(self.peak_rss_bytes, watchdog.peak_bytes)
        self._recycle_if_big(limits.worker_recycle_rss_bytes)
        if isinstance(reply, Note):  # a child that answers out of turn is a broken one
            self._crashed(RuntimeError(f"the parser process answered {reply.kind!r}"))
        self.last_parse_seconds = float(reply.seconds)
        self.peak_rss_bytes = max(self.peak_rss_bytes, int(reply.peak_rss))
        if isinstance(reply, Parsed):
            return reply.document
        raise _error(reply.name, reply.status, reply.message)

    def _await(self, conn: Connection, timeout: float, cancel: Callable[[], bool] | None,
               watchdog: MemoryWatchdog) -> Reply:
        """The child's final reply, passing its progress reports on; raises for a cancel, the time cap, the memory
        cap (the watchdog killed the child) and a crash."""
        deadline = time.monotonic() + timeout
        while True:
            while not conn.poll(self.poll_interval):
                if watchdog.tripped:
                    break
                if cancel is not None and cancel():
                    self._stop()
                    raise Cancelled("cancelled while parsing")
                if time.monotonic() > deadline:
                    self._stop()
                    raise TimedOut(f"parsing took longer than {timeout:.0f} s; skipped")
                if self._proc is None or not self._proc.is_alive():
                    break
            if watchdog.tripped:
                self._over_memory(watchdog.cap_bytes)
            try:
                reply: Reply = conn.recv()
            except (EOFError, OSError) as exc:
                if watchdog.tripped:
                    self._over_memory(watchdog.cap_bytes)
                self._crashed(exc)
            if not (isinstance(reply, Note) and reply.kind == "progress"):
                return reply
            # A parser that reports progress (OCR, page by page, itself bounded per page and in pages) gets the
            # time cap per step, not per file: a long scan is not cut off while it advances.
            deadline = time.monotonic() + timeout
            report(reply.text)

    def _recycle_if_big(self, threshold: int) -> None:
        """Replace the child (the next file starts a fresh one) when it holds more than ``threshold`` now."""
        if self._proc is None or not self._proc.is_alive():
            return
        now = rss_bytes(self._proc.pid) if self._proc.pid is not None else None
        if now is not None and now > threshold:
            self._stop()
            self.recycled += 1

    def _over_memory(self, cap: int) -> NoReturn:
        self._stop()
        self.killed_over_memory += 1
        raise TooLarge(f"parsing needed more than {cap / 2**20:.0f} MB of memory; skipped")

    def _crashed(self, exc: BaseException) -> NoReturn:
        code = None
        if self._proc is not None:
            self._proc.join(timeout=5)  # reap it, so the exit code (or signal) is known
            code = self._proc.exitcode
        self._stop()
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        killed = code is not None and -code in _OUTSIDE_SIGNALS
        crash = ParserCrashed(f"the parser process was killed while reading this file ({how})" if killed
                              else f"the parser crashed on this file ({how})")
        crash.passing = killed
        raise crash from exc
