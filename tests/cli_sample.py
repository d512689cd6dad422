"""The bundled sample as a library the command line is run against: ingested once per test session through the
real ``shelfwise`` console script (a subprocess, real SQLite, the real models), copied for each module (or test)
that wants its own to change (:func:`copy_sample`: a file copy is cheap, an ingest is not), and a runner for more
commands on it whose stdout and stderr arrive interleaved as a terminal shows them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from shelfwise.resources import path as resource_path

SHELFWISE = Path(sys.executable).parent / "shelfwise"  # the installed console script
TRACEBACK = "Traceback (most recent call last)"


def run_shelfwise(db: Path, args: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None,
                  timeout: float = 600, unset: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """``shelfwise --db DB ARGS...`` in a subprocess (``env`` over this process's environment, without the
    variables ``unset`` names): stdout and stderr in one stream (unbuffered, so a note on stderr lands where a
    terminal shows it), decoded as UTF-8."""
    env = {**{k: v for k, v in os.environ.items() if k not in unset}, **(env or {}), "PYTHONUNBUFFERED": "1",
           "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([str(SHELFWISE), "--db", str(db), *args], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace", env=env, cwd=cwd, timeout=timeout)


@dataclass(frozen=True)
class SampleLibrary:
    """The sample's files (a copy of ``resources/sample`` in a folder named ``sample``), the library made from
    them, and the output of the ``shelfwise ingest`` that made it."""

    db: Path
    files: Path
    ingest: subprocess.CompletedProcess[str]

    def ingest_args(self) -> list[str]:
        return ["ingest", str(self.files)]


def make_sample_library(base: Path, *, unset: tuple[str, ...] = ()) -> SampleLibrary:
    """``shelfwise ingest`` of a copy of the sample into ``base/library.db`` (``unset``: environment variables the
    command runs without, e.g. ``SHELFWISE_EMBEDDER`` for the encoder a new user gets)."""
    files = base / "sample"
    shutil.copytree(resource_path("sample"), files)
    db = base / "library.db"
    lib = SampleLibrary(db, files, subprocess.CompletedProcess([], 0))
    done = run_shelfwise(db, lib.ingest_args(), unset=unset)
    assert done.returncode == 0 and TRACEBACK not in done.stdout, done.stdout[-3000:]
    return SampleLibrary(db, files, done)


def copy_sample(lib: SampleLibrary, to: Path) -> SampleLibrary:
    """A copy of ``lib``'s library in the new folder ``to``: the database, its WAL, the snapshot folder and the lock
    files an ingest leaves beside it (everything whose name starts with the database's), as a used library has
    them. The copy's documents are the same files (``lib.files``): a test that changes a file ingests its own."""
    to.mkdir(parents=True, exist_ok=True)
    for p in lib.db.parent.iterdir():
        if p.name.startswith(lib.db.name):
            if p.is_dir():
                shutil.copytree(p, to / p.name)
            else:
                shutil.copy2(p, to / p.name)
    return SampleLibrary(to / lib.db.name, lib.files, lib.ingest)


def ask_json(lib: SampleLibrary, question: str) -> dict:  # type: ignore[type-arg]
    """``shelfwise ask QUESTION --no-generate --json`` over ``lib`` in a subprocess, without
    ``SHELFWISE_EMBEDDER`` (the library's own encoder, as a new user's), parsed."""
    done = run_shelfwise(lib.db, ["ask", question, "--no-generate", "--json"], unset=("SHELFWISE_EMBEDDER",))
    assert done.returncode == 0, done.stdout[-2000:]
    return json.loads(done.stdout[done.stdout.index("{"):])  # type: ignore[no-any-return]
