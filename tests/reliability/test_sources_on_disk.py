"""Issue 38, weak kinds of source files, through the real CLI in a subprocess with real SQLite and the real models:
a file emptied (truncated to 0 bytes) or deleted since it was read is not shown as a plain ``ok`` by ``status``
and an answer that cites it says so; the same file reached twice (a hard link, as a bind mount does) is stored
once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from shelfwise.core.store.db import Store

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample"
SHELFWISE = str(Path(sys.executable).parent / "shelfwise")


def cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([SHELFWISE, "--db", str(db), *args], capture_output=True, text=True, env=env, timeout=900,
                          cwd="/")


def test_an_emptied_or_deleted_source_is_not_a_plain_ok_and_an_answer_says_so(tmp_path: Path) -> None:
    files = tmp_path / "files"
    shutil.copytree(SAMPLE, files)
    db = tmp_path / "lib.db"
    assert cli(db, "ingest", str(files), "--no-index").returncode == 0
    (files / "facilities.md").write_bytes(b"")  # truncated to 0 bytes: the library keeps the version it read
    r = cli(db, "ingest", str(files), "--no-index")
    assert "empty file (0 bytes) (previous version kept)" in r.stdout, r.stdout
    (files / "it-security-onboarding.pptx").unlink()  # deleted, no ingest since
    r = cli(db, "status")
    lines = {line.split()[-1].rsplit("/", 1)[-1]: line.split()[0] for line in r.stdout.splitlines()
             if line.split() and line.split()[-1].startswith(str(files))}
    assert lines["facilities.md"] == "stale" and lines["it-security-onboarding.pptx"] == "gone", r.stdout
    assert lines["handbook.pdf"] == "ok"
    assert "the file is now empty" in r.stdout and "the file is no longer there" in r.stdout
    r = cli(db, "ask", "Where do visitors park?", "--no-generate")
    assert r.returncode == 0, r.stderr
    assert "facilities.md" in r.stdout and "Note: source [" in r.stderr and "facilities.md is now empty" in r.stderr, \
        r.stdout + r.stderr


def test_the_same_file_reached_twice_is_stored_once(tmp_path: Path) -> None:
    files = tmp_path / "files"
    (files / "a").mkdir(parents=True)
    shutil.copy(SAMPLE / "facilities.md", files / "a" / "facilities.md")
    os.link(files / "a" / "facilities.md", files / "facilities-link.md")  # one file, two names (a bind mount too)
    db = tmp_path / "lib.db"
    r = cli(db, "ingest", str(files), "--no-index")
    assert r.returncode == 0, r.stderr
    assert "1 added" in r.stdout and "1 reached twice (stored once)" in r.stdout, r.stdout
    with Store(db) as store:
        assert len(store.documents()) == 1
