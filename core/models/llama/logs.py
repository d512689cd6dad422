"""Where llama.cpp's own log goes: into the ``shelfwise.llama`` logger, never straight to the terminal.

llama-cpp-python installs a log callback that prints to stderr, and its level table predates ggml's current one
(it maps ggml's WARN to ERROR), so loader warnings such as "special_eos_id is not in special_eog_ids" reached every
terminal. :func:`route_llama_log` replaces that callback (once per process) with one that turns each line into a
:mod:`logging` record with ggml's real level. The logger has a ``NullHandler``, so a library user who configured no
logging sees nothing; :func:`setup_logging` (called by the CLI and the window) writes every record to the log file
and puts llama.cpp's lines on stderr only when ``verbose``.
"""

from __future__ import annotations

import ctypes
import logging
import logging.handlers
import threading
from pathlib import Path

LOGGER = "shelfwise.llama"
# ggml_log_level: NONE=0, DEBUG=1, INFO=2, WARN=3, ERROR=4, CONT=5 (continue the previous line)
_GGML_LEVELS = {0: logging.CRITICAL, 1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING, 4: logging.ERROR}

_lock = threading.Lock()
_callback: object | None = None
_pending: list[str] = []
_pending_level = [logging.INFO]

log = logging.getLogger(LOGGER)
log.addHandler(logging.NullHandler())


def _emit(level: int, text: str) -> None:
    """Collect pieces until a newline, then log whole lines (ggml sends lines in pieces, CONT for the rest)."""
    if level != 5:
        _pending_level[0] = _GGML_LEVELS.get(level, logging.INFO)
    _pending.append(text)
    joined = "".join(_pending)
    if "\n" not in joined:
        return
    *lines, rest = joined.split("\n")
    _pending.clear()
    if rest:
        _pending.append(rest)
    for line in lines:
        if line.strip():
            log.log(_pending_level[0], "%s", line.rstrip())


def route_llama_log() -> None:
    """Install the callback (idempotent; call before loading a model). Importing ``llama_cpp`` installs
    llama-cpp-python's printing callback, so this must run after that import, which it does itself."""
    global _callback
    with _lock:
        if _callback is not None:
            return
        from shelfwise.core.models.llama.bindings import llama_cpp

        @llama_cpp.llama_log_callback
        def cb(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
            try:
                _emit(int(level), text.decode("utf-8", errors="replace"))
            except Exception:  # a log line must never take the process down
                pass

        _callback = cb  # keep the ctypes callback alive for the life of the process
        llama_cpp.llama_log_set(cb, ctypes.c_void_p(0))


class _NotLlama(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith(LOGGER)


def log_file() -> Path:
    from shelfwise.core.paths import data_dir

    d = data_dir() / "logs"
    d.mkdir(parents=True, exist_ok=True)
    return d / "shelfwise.log"


_ADDED: list[logging.Handler] = []  # the root handlers setup_logging added (the next call replaces them)


def setup_logging(verbose: bool = False, path: Path | None = None, stderr_level: int = logging.WARNING) -> Path | None:
    """Every record (INFO and up; DEBUG with ``verbose``) to the log file (rotating, 2 x 2 MB); on stderr the
    application's own warnings, and llama.cpp's lines only with ``verbose``. Returns the log file (None if it
    cannot be written: then nothing is logged to a file). Idempotent per process."""
    root = logging.getLogger()
    while _ADDED:  # the handlers an earlier call added
        h = _ADDED.pop()
        root.removeHandler(h)
        h.close()
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    # llama.cpp's INFO is the loader's metadata dump (~400 lines per model): kept out of the file unless verbose.
    log.setLevel(logging.DEBUG if verbose else logging.WARNING)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    target: Path | None
    try:
        target = path or log_file()
        fh: logging.Handler = logging.handlers.RotatingFileHandler(target, maxBytes=2 << 20, backupCount=2,
                                                                   encoding="utf-8", delay=True)
        fh.setFormatter(fmt)
        root.addHandler(fh)
        _ADDED.append(fh)
    except OSError:
        target = None
    err = logging.StreamHandler()
    err.setLevel(logging.DEBUG if verbose else stderr_level)
    err.setFormatter(fmt if verbose else logging.Formatter("%(levelname)s: %(message)s"))
    if not verbose:
        err.addFilter(_NotLlama())
    root.addHandler(err)
    _ADDED.append(err)
    route_llama_log()
    return target


__all__ = ["LOGGER", "log_file", "route_llama_log", "setup_logging"]
