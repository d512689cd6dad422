"""The encoder's model loaded on a thread of its own while the process imports and opens the library.

A ``shelfwise ask`` process spends about half a CPU second in llama.cpp's load of the encoder GGUF (EmbeddingGemma's
262,144-token vocabulary read and indexed; the weights are only mapped) and about as long importing Python modules
before it first needs the encoder (docs/scale.md, "Session 21: the process"). The load is one C call that releases
the GIL, so on two cores it can run while the main thread imports: :func:`preload_library_encoder` guesses, from the
settings and the library's record, which GGUF the question will be embedded with and starts loading it;
:func:`take` hands the loaded model to :func:`~shelfwise.core.models.encoders.llama_encoder.load_model` when it
is asked for exactly that file with the same GPU layers, and otherwise it is freed and the load happens as before.
A wrong guess therefore costs CPU, never a wrong model.

Light on purpose: the thread must reach the C call before the main thread has finished importing, so this module
imports only the standard library at its top, and the thread only llama.cpp's bindings, the settings and the paths.
"""

from __future__ import annotations

import atexit
import json
import logging
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import llama_cpp

log = logging.getLogger(__name__)

# The GGUF file each named encoder is installed as (its model ids in the embeddings table begin with it), and the
# library's meta key that records its encoder. Defined here, not in core/indexing/encoder.py (which reads them from
# here): this module may not import that one, which brings the store and NumPy-heavy modules with it.
FILES = {"minilm": "all-MiniLM-L6-v2-q8_0.gguf", "embeddinggemma": "embeddinggemma-300m-q8_0.gguf"}
META_KEY = "embedder"


@dataclass
class _Loading:
    """One load on its thread: ``done`` is set when ``model`` (or None: it failed) is there."""

    path: Path
    layers: int = 0
    model: llama_cpp.llama_model_p | None = None
    seconds: float = 0.0  # the load's wall and CPU seconds (on its thread), for the log
    cpu_seconds: float = 0.0
    done: threading.Event = field(default_factory=threading.Event)


_lock = threading.Lock()
_loading: dict[Path, _Loading] = {}
_started: list[bool] = []  # the exit handler is registered (once)


def recorded_encoder(db: Path) -> str | None:
    """The encoder the library at ``db`` records, read without locking it or making a ``-wal`` beside it (a guess:
    a change not yet moved from its WAL into the file is not seen). None when there is no record or no library."""
    if not db.is_file():
        return None
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
        finally:
            conn.close()
        return None if row is None else str(json.loads(str(row[0])))
    except (sqlite3.Error, ValueError, OSError):
        return None


def encoder_file(spec: str | None, models: Path) -> Path | None:
    """The GGUF an encoder setting names (a name, or a GGUF path), None when it names none (a server URL)."""
    if not spec:
        return None
    if spec.lower() in FILES:
        return models / FILES[spec.lower()]
    path = Path(spec).expanduser()
    return path if path.suffix.lower() == ".gguf" and path.is_file() else None


def preload_library_encoder(db: Path | None, requested: str | None) -> threading.Thread:
    """Start loading, on a daemon thread (returned), the encoder a question on the library at ``db`` (None: the
    default library) will be embedded with: ``requested`` (the command line's), else the settings file's, else the
    library's record. Nothing is loaded when that cannot be told (a new library, a server URL)."""
    thread = threading.Thread(target=_guess_and_load, args=(db, requested), name="shelfwise-encoder-preload",
                              daemon=True)
    thread.start()
    return thread


def _guess_and_load(db: Path | None, requested: str | None) -> None:
    try:
        from shelfwise.core.paths import default_db, models_dir
        from shelfwise.core.settings import Settings, load_settings

        library = db if db is not None else default_db()
        if not library.is_file():  # no library: the command stops before any question
            return
        settings = load_settings(None, Settings(db_path=library, embedder_path=requested)).settings
        spec = settings.embedder_path or recorded_encoder(library)
        path = encoder_file(spec, models_dir())
        if path is not None:
            start(path, settings.n_gpu_layers)
    except Exception as exc:  # a guess: the question loads its encoder as before
        log.debug("no encoder preloaded: %s", exc)


def start(path: Path, n_gpu_layers: int = -1) -> None:
    """Load the GGUF at ``path`` on this thread for a later :func:`take` (once per file)."""
    key = path.resolve()
    job = _Loading(key)
    with _lock:
        if key in _loading:
            return
        if not _started:
            atexit.register(_wait_for_loads)
            _started.append(True)
        _loading[key] = job
    try:
        from shelfwise.core.models.llama.bindings import gpu_layers, llama_cpp
        from shelfwise.core.models.llama.logs import route_llama_log

        route_llama_log()
        llama_cpp.llama_backend_init()
        params = llama_cpp.llama_model_default_params()
        job.layers = params.n_gpu_layers = gpu_layers(n_gpu_layers)
        t0, c0 = time.perf_counter(), time.thread_time()
        model = llama_cpp.llama_model_load_from_file(str(key).encode(), params)
        job.model = model if model else None
        job.seconds, job.cpu_seconds = time.perf_counter() - t0, time.thread_time() - c0
    finally:
        job.done.set()


def _wait_for_loads(timeout: float = 60.0) -> None:
    """At exit: let a load nobody took finish first (a command that stopped before its question), so that
    llama.cpp is never torn down while its loader runs on another thread."""
    with _lock:
        jobs = list(_loading.values())
    for job in jobs:
        job.done.wait(timeout)


def take(path: Path, layers: int) -> llama_cpp.llama_model_p | None:
    """The model preloaded from ``path`` with ``layers`` GPU layers, waiting for its load to end; the caller owns
    it from now on. None when none was started for that file (one loaded with other layers is freed)."""
    with _lock:
        job = _loading.pop(path.resolve(), None)
    if job is None:
        return None
    t0 = time.perf_counter()
    job.done.wait()
    waited = time.perf_counter() - t0
    if job.model is not None and job.layers != layers:
        from shelfwise.core.models.llama.bindings import llama_cpp

        llama_cpp.llama_model_free(job.model)
        return None
    if job.model is not None:
        log.debug("the %s loaded while the program started is used (its load: %.3f s, %.3f CPU s; waited for: "
                  "%.3f s)", path.name, job.seconds, job.cpu_seconds, waited)
    return job.model
