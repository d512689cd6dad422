"""A rebuild replaces the library atomically (issue 50): ``doctor --rebuild`` interrupted by Ctrl-C or killed, a
second rebuild started while one runs, a disk that fills during the rebuild and too little free space before it
each leave the old library live with every document and conversation; ``doctor`` names the old file a rebuild kept
and ``--restore`` puts it back. Through the real CLI in a subprocess (real parse workers, real SQLite)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from shelfwise.app.cli.main import main
from shelfwise.core.ingestion import rebuild as rebuild_module
from shelfwise.core.store.db import Store
from tests.reliability.test_library_guards import (
    SHELFWISE,
    cli,
    conversations,
    interruptible,
    library_with_conversations,
    session_home,
)


def documents(db: Path) -> list[str]:
    with Store(db) as store:
        return sorted(d.path for d in store.documents())


def _start_rebuild(db: Path, home: Path) -> subprocess.Popen[str]:
    import os

    env = {**os.environ, "SHELFWISE_HOME": str(home), "PYTHONIOENCODING": "utf-8"}
    return subprocess.Popen([SHELFWISE, "--db", str(db), "doctor", "--rebuild", "--force", "--yes", "--no-index"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd="/",
                            preexec_fn=interruptible)


def _wait_for_build(db: Path, proc: subprocess.Popen[str], timeout: float = 120.0) -> None:
    """Until the new library is being built beside the old one (or, before issue 50, the old one moved aside)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if any(p.name.startswith(tuple(f"{db.name}.{label}-" for label in ("rebuilding", "replaced")))
               for p in db.parent.iterdir()):
            return
        time.sleep(0.05)
    raise AssertionError(f"the rebuild never started building (rc {proc.poll()})")


@pytest.fixture
def library(tmp_path: Path) -> tuple[Path, list[str], int]:
    db = library_with_conversations(tmp_path)
    docs = documents(db)
    assert len(docs) >= 6
    return db, docs, len(conversations(db))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_an_interrupted_rebuild_leaves_the_old_library_live(library: tuple[Path, list[str], int], sig: int) -> None:
    db, docs, n_conv = library
    home = session_home(db.parent)
    proc = _start_rebuild(db, home)
    _wait_for_build(db, proc)
    time.sleep(0.5)  # the parse worker is reading the files again
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=120)
    assert documents(db) == docs and len(conversations(db)) == n_conv  # 0 documents here before
    assert "Traceback" not in err  # (after kill -9, the orphaned parse worker's, when it was starting)
    if sig == signal.SIGINT:
        assert proc.returncode == 130
        assert "Interrupted: the rebuild stopped before it was complete. The library is as it was" in err
        assert f"{len(docs)} documents" in err
        assert not [p for p in db.parent.iterdir() if ".rebuilding-" in p.name]
    checked = cli("doctor", db=db, home=home)
    assert checked.returncode == 0 and "The library is healthy." in checked.stdout, checked.stdout
    assert f"{len(docs)} documents" in checked.stdout
    if sig == signal.SIGKILL:
        assert "the partial file of a rebuild that was interrupted" in checked.stdout
    assert not [p for p in db.parent.iterdir() if ".rebuilding-" in p.name]


def test_a_second_rebuild_is_refused_while_one_runs(library: tuple[Path, list[str], int]) -> None:
    db, docs, n_conv = library
    home = session_home(db.parent)
    first = _start_rebuild(db, home)
    _wait_for_build(db, first)
    second = cli("doctor", "--rebuild", "--force", "--yes", "--no-index", db=db, home=home)
    _out, err = first.communicate(timeout=300)
    assert second.returncode == 1 and "another rebuild of this library is running" in second.stderr, second.stderr
    assert first.returncode == 0, err
    assert documents(db) == docs and len(conversations(db)) == n_conv


def test_a_disk_that_fills_during_the_rebuild_leaves_the_old_library(library: tuple[Path, list[str], int],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    db, docs, n_conv = library
    written = []

    def full(self: Store, *args: object, **kwargs: object) -> int:
        if written:
            raise sqlite3.OperationalError("database or disk is full")
        written.append(1)
        return original(self, *args, **kwargs)

    original = Store.write_document
    monkeypatch.setattr(Store, "write_document", full)
    result = CliRunner().invoke(main, ["--db", str(db), "doctor", "--rebuild", "--force", "--yes", "--no-index"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "the rebuild failed" in result.output and "database or disk is full" in result.output
    assert "The library is as it was" in result.output
    monkeypatch.undo()
    assert documents(db) == docs and len(conversations(db)) == n_conv
    assert not [p for p in db.parent.iterdir() if ".rebuilding-" in p.name or ".replaced-" in p.name]


def test_too_little_free_space_is_said_before_anything_changes(library: tuple[Path, list[str], int],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    db, docs, n_conv = library
    real = rebuild_module.shutil.disk_usage
    monkeypatch.setattr(rebuild_module.shutil, "disk_usage",
                        lambda p: real(p)._replace(free=db.stat().st_size // 2))
    result = CliRunner().invoke(main, ["--db", str(db), "doctor", "--rebuild", "--force", "--yes", "--no-index"])
    assert result.exit_code == 1 and "not enough free space to rebuild" in result.output
    assert documents(db) == docs and len(conversations(db)) == n_conv


def test_doctor_names_the_kept_library_and_restores_it(library: tuple[Path, list[str], int]) -> None:
    db, docs, n_conv = library
    home = session_home(db.parent)
    rebuilt = cli("doctor", "--rebuild", "--force", "--yes", "--no-index", db=db, home=home)
    assert rebuilt.returncode == 0, rebuilt.stderr
    [kept] = [p for p in db.parent.iterdir() if p.name.startswith(f"{db.name}.replaced-")]
    extra = db.parent / "extra.md"
    extra.write_text("# Extra\n\nA note added after the rebuild.\n")
    assert cli("ingest", "--no-index", str(extra), db=db, home=home).returncode == 0
    assert len(documents(db)) == len(docs) + 1

    checked = cli("doctor", db=db, home=home)
    assert f"kept beside it: {kept.name}" in checked.stdout
    assert f"doctor --restore {kept.name}" in checked.stdout
    restored = cli("doctor", "--restore", kept.name, db=db, home=home)
    assert restored.returncode == 0, restored.stderr
    assert documents(db) == docs and len(conversations(db)) == n_conv  # the earlier library, whole
    assert not kept.exists()
    [now_kept] = [p for p in db.parent.iterdir() if p.name.startswith(f"{db.name}.replaced-")]
    assert now_kept.name in restored.stdout  # the library it replaced is kept in turn
    wrong = cli("doctor", "--restore", "lib.db.nothing", db=db, home=home)
    assert wrong.returncode == 1 and "is not an old library kept beside" in wrong.stderr


def test_an_ingest_while_the_library_is_rebuilt_is_refused(library: tuple[Path, list[str], int]) -> None:
    from shelfwise.core.ingestion.lock import rebuild_lock

    db, docs, _ = library
    extra = db.parent / "extra.md"
    extra.write_text("# Extra\n\nWritten into the old file, it would be lost in the swap.\n")
    with rebuild_lock(db):  # as a running `doctor --rebuild` holds it
        r = cli("ingest", "--no-index", str(extra), db=db, home=session_home(db.parent))
    assert r.returncode == 1 and "is being rebuilt" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert documents(db) == docs


def test_ctrl_c_while_the_command_line_starts_is_one_line(library: tuple[Path, list[str], int]) -> None:
    db, docs, n_conv = library
    proc = _start_rebuild(db, session_home(db.parent))
    time.sleep(0.3)  # Python runs; the command line's modules are still being imported (a second or more here)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert proc.returncode in (130, -signal.SIGINT)  # -2: before Python installed its own handler
    assert documents(db) == docs and len(conversations(db)) == n_conv


def test_ctrl_c_during_the_check_before_a_rebuild_says_nothing_changed(library: tuple[Path, list[str], int],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from shelfwise.app.cli import doctor

    db, docs, n_conv = library

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(doctor, "salvage", interrupted)  # Ctrl-C while doctor reads what the library lists
    result = CliRunner().invoke(main, ["--db", str(db), "doctor", "--rebuild", "--force", "--yes", "--no-index"])
    assert result.exit_code == 130, result.output
    assert "Interrupted before anything was changed: the library is as it was." in result.output
    monkeypatch.undo()
    assert documents(db) == docs and len(conversations(db)) == n_conv


def test_a_lost_library_is_put_back_from_the_copy_a_rebuild_kept(library: tuple[Path, list[str], int]) -> None:
    db, docs, n_conv = library
    home = session_home(db.parent)
    assert cli("doctor", "--rebuild", "--force", "--yes", "--no-index", db=db, home=home).returncode == 0
    [kept] = [p for p in db.parent.iterdir() if p.name.startswith(f"{db.name}.replaced-")]
    db.unlink()
    lost = cli("doctor", db=db, home=home)
    assert lost.returncode == 1 and f"doctor --restore {kept.name}" in lost.stderr, lost.stderr
    restored = cli("doctor", "--restore", kept.name, db=db, home=home)
    assert restored.returncode == 0, restored.stderr
    assert documents(db) == docs and len(conversations(db)) == n_conv
