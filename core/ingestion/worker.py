"""Parse files in a separate worker process, so a crash or a hang inside a native library is one failed file.

PyMuPDF, onnxruntime and the Office libraries run native code on untrusted files. In-process, a segfault there
ends the whole batch (and, in the desktop app, the app). :class:`ParseWorker` sends each path to a long-lived
child process (``spawn`` start method: safe from a multi-threaded Qt process) and turns a dead child, a timeout or
a cancel into an :class:`IngestError` for that file; the next file gets a fresh child.

Packaged apps (PyInstaller) must call ``multiprocessing.freeze_support()`` at the start of ``main``.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Self

from shelfwise.ingest.model import CorruptFile, IngestError, Limits, ParsedDocument, TooLarge


class ParserCrashed(CorruptFile):
    pass


class Cancelled(IngestError):
    pass


DEFAULT_PARSER = "shelfwise.ingest.registry:parse"
DEFAULT_LIMITS = Limits()


def _serve(conn: Connection, parser: str) -> None:
    """Child process: parse paths with ``parser`` ("module:function") until the parent closes the pipe."""
    import importlib

    try:
        module, _, name = parser.partition(":")
        parse = getattr(importlib.import_module(module), name)
    except Exception as exc:  # reported to the parent, which explains it to the user
        conn.send(("failed", f"{exc.__class__.__name__}: {exc}"))
        return
    conn.send(("ready",))

    while True:
        try:
            path, limits = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        t0 = time.perf_counter()
        reply: tuple[Any, ...]
        try:
            reply = ("ok", parse(Path(path), limits), time.perf_counter() - t0)
        except IngestError as exc:
            reply = ("ingest_error", exc.__class__.__name__, exc.status, str(exc), time.perf_counter() - t0)
        except Exception as exc:  # registry.parse converts library errors; last resort
            reply = ("ingest_error", "CorruptFile", "error", f"unexpected error: {exc.__class__.__name__}: {exc}",
                     time.perf_counter() - t0)
        try:
            conn.send(reply)
        except (OSError, EOFError):  # the parent is gone
            return
        except Exception as exc:  # e.g. the result does not pickle
            conn.send(("ingest_error", "CorruptFile", "error", f"could not return the parsed document: {exc}", 0.0))


def _error(name: str, status: str, message: str) -> IngestError:
    from shelfwise.ingest import model

    cls = getattr(model, name, None)
    exc = cls(message) if isinstance(cls, type) and issubclass(cls, IngestError) else IngestError(message)
    exc.status = status
    return exc


class ParseWorker:
    """Callable like ``registry.parse`` (plus an optional cancel check); runs the parser in a child process.

    ``timeout`` bounds one file (seconds); ``parser`` names the parse function ("module:function", importable in
    the child). Use as a context manager, or call :meth:`close`.
    ``last_parse_seconds`` is the time the child spent parsing the last file (without start-up and transfer).
    """

    def __init__(
        self, timeout: float = 600.0, poll_interval: float = 0.2, parser: str = DEFAULT_PARSER,
        start_timeout: float = 120.0,
    ) -> None:
        self.parser = parser
        self.start_timeout = start_timeout
        self.timeout = timeout
        self.poll_interval = poll_interval
        self.last_parse_seconds = 0.0
        self._proc: Any = None
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
        hello: tuple[Any, ...] = ("failed", "no answer")
        try:
            if parent.poll(self.start_timeout):
                hello = parent.recv()
        except (EOFError, OSError) as exc:
            hello = ("failed", f"exit code {proc.exitcode} ({exc})")
        if hello[0] != "ready":
            self._stop()
            raise ParserCrashed(f"the parser process could not start: {hello[1]}")
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
        self, path: Path, limits: Limits = DEFAULT_LIMITS, cancel: Callable[[], bool] | None = None
    ) -> ParsedDocument:
        conn = self._start()  # raises ParserCrashed if no child can start: every file then fails with the reason
        self.last_parse_seconds = 0.0
        try:
            conn.send((str(path), limits))
        except (OSError, EOFError) as exc:
            self._stop()
            raise ParserCrashed(f"the parser process is not responding ({exc})") from exc
        deadline = time.monotonic() + self.timeout
        while not conn.poll(self.poll_interval):
            if cancel is not None and cancel():
                self._stop()
                raise Cancelled("cancelled while parsing")
            if time.monotonic() > deadline:
                self._stop()
                raise TooLarge(f"parsing took longer than {self.timeout:.0f} s; skipped")
            if self._proc is not None and not self._proc.is_alive():
                break
        try:
            reply = conn.recv()
        except (EOFError, OSError) as exc:
            code = None
            if self._proc is not None:
                self._proc.join(timeout=5)  # reap it, so the exit code (or signal) is known
                code = self._proc.exitcode
            self._stop()
            how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            raise ParserCrashed(f"the parser crashed on this file ({how})") from exc
        if reply[0] == "ok":
            self.last_parse_seconds = float(reply[2])
            doc: ParsedDocument = reply[1]
            return doc
        _, name, status, message, seconds = reply
        self.last_parse_seconds = float(seconds)
        raise _error(name, status, message)
