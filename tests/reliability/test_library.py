"""Damaged, read-only and awkwardly named libraries, through the real CLI in a subprocess and real SQLite."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from shelfwise.core.ingestion.runner import ingest
from shelfwise.core.store.db import Store
from tests.reliability import hostile

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample"


# Root ignores file modes, so a read-only library is made the way users meet it: on a read-only file system (a
# read-only bind mount in a private mount namespace, seen only by the one CLI process).
RO_MOUNT = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"']


def cli(*args: str, db: Path, home: Path, read_only_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SHELFWISE_HOME": str(home), "PYTHONIOENCODING": "utf-8"}
    cmd = [str(Path(sys.executable).parent / "shelfwise"), "--db", str(db), *args]
    if read_only_dir is not None and os.geteuid() == 0:
        cmd = [*RO_MOUNT, str(read_only_dir), *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd="/")


def make_library(tmp_path: Path) -> tuple[Path, Path]:
    files = tmp_path / "files"
    shutil.copytree(SAMPLE, files)
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.md").write_text("# Parking\n\nVisitors park in bay 4 behind the library.\n")
    db = tmp_path / "lib.db"
    with Store(db) as store:
        ingest(store, [files], "default", isolate=False)
        ingest(store, [other], "visitors", isolate=False)
        store.set_meta("adaptive_threshold:test-model", 0.42)  # a learned setting that must survive a rebuild
    return db, files


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_damaged_library_is_noticed_opened_read_only_and_rebuilt(tmp_path: Path) -> None:
    db, _files = make_library(tmp_path)
    home = tmp_path / "home"
    page = hostile.damage_table(db, "nodes")  # the tree's root page: every command that reads the tree meets it
    assert f"Page {page}: btreeInitPage()" in Store(db).damage  # found by quick_check on opening
    before = sha(db)

    status = cli("status", db=db, home=home)
    assert status.returncode == 3 and "is damaged" in status.stderr and "doctor --rebuild" in status.stderr
    assert "open read-only" in status.stderr and "handbook.pdf" in status.stdout  # the documents table is intact
    js = cli("status", "--json", db=db, home=home)
    assert js.returncode == 3 and '"path"' in js.stdout and "Traceback" not in js.stderr
    for args in (("search", "leave"), ("tree",)):  # both read the damaged page: a message, not a traceback
        r = cli(*args, db=db, home=home)
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert "is damaged" in r.stderr and "could not read" in r.stderr and "doctor --rebuild" in r.stderr
    ing = cli("ingest", str(tmp_path / "other"), "--no-index", db=db, home=home)
    assert ing.returncode == 1 and "cannot add files: the library is damaged" in ing.stderr
    assert sha(db) == before  # nothing was written into the damaged file

    doc = cli("doctor", db=db, home=home)
    assert doc.returncode == 3 and "integrity_check:" in doc.stdout and "doctor --rebuild" in doc.stdout
    rebuilt = cli("doctor", "--rebuild", "--yes", "--no-index", db=db, home=home)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "damaged file is kept as" in rebuilt.stdout
    kept = sorted(tmp_path.glob("lib.db.damaged-*"))
    assert kept and sha(kept[0]) == before

    with Store(db) as store:
        assert store.damage == "" and store.integrity_check() == "ok"
        names = {c.name: c.id for c in store.collections()}
        assert set(names) == {"default", "visitors"}
        assert len(store.documents(names["default"])) == len(list(SAMPLE.iterdir()))
        assert [Path(d.path).name for d in store.documents(names["visitors"])] == ["notes.md"]
        assert store.get_meta("adaptive_threshold:test-model") == 0.42
    assert cli("doctor", db=db, home=home).returncode == 0


def test_read_only_library_can_be_browsed_and_searched(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    db, _files = make_library(lib)
    home = tmp_path / "home"
    before = sha(db)
    db.chmod(0o444)
    lib.chmod(0o555)  # no -wal/-shm can be created either (for a non-root run)
    try:
        status = cli("status", db=db, home=home, read_only_dir=lib)
        assert status.returncode == 0, status.stderr
        assert "read-only" in status.stderr and "handbook.pdf" in status.stdout
        search = cli("search", "annual", "leave", db=db, home=home, read_only_dir=lib)
        assert search.returncode == 0 and "1." in search.stdout, search.stderr
        tree = cli("tree", "--depth", "1", db=db, home=home, read_only_dir=lib)
        assert tree.returncode == 0 and "visitors" in tree.stdout
        ing = cli("ingest", str(SAMPLE), db=db, home=home, read_only_dir=lib)
        assert ing.returncode == 1 and "cannot add files" in ing.stderr and "Traceback" not in ing.stderr
    finally:
        lib.chmod(0o755)
        db.chmod(0o644)
    assert sha(db) == before


def test_non_utf8_file_name_is_stored_losslessly_and_failures_are_recorded(tmp_path: Path) -> None:
    folder = tmp_path / "names"
    folder.mkdir()
    good = hostile.non_utf8_name(folder)
    bad = Path(os.fsdecode(os.fsencode(folder) + b"/noise\xff.txt"))
    hostile.random_text_bytes(bad)
    db = tmp_path / "lib.db"
    with Store(db) as store:
        first = ingest(store, [folder])  # the real parse worker
        assert first.counts["added"] == 1 and first.counts["failed"] == 1
        docs = {d.path: d for d in store.documents()}
        assert set(docs) == {str(good), str(bad)}  # the same str, surrogate escapes and all
        assert os.fsencode(docs[str(good)].path).endswith(b"caf\xe9 notes.txt")  # the original bytes
        assert docs[str(good)].status == "ok" and "Friday" in store.passages(docs[str(good)].id)[0].text
        assert docs[str(bad)].status == "error" and "binary data" in docs[str(bad)].message
        again = ingest(store, [folder])
        assert again.counts["skipped"] == 2 and again.counts["failed"] == 0  # the failure is not retried
        assert store.integrity_check() == "ok"
    raw = sqlite3.connect(str(db)).execute("SELECT path FROM documents ORDER BY path").fetchall()
    assert all("\x00" in p for (p,) in raw)  # stored escaped: valid UTF-8 text in SQLite
    status = cli("status", db=db, home=tmp_path / "home")
    # a byte that is not UTF-8 is shown as \\xe9 (app/cli/shown.py), so the name cannot break the line
    assert status.returncode == 0 and "caf\\xe9 notes.txt" in status.stdout and "Traceback" not in status.stderr
