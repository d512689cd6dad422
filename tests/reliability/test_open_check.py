"""The check on opening a library (``core/store/opening.py``): SQLite's ``quick_check`` reads every page, so it is
skipped when the file is exactly as Shelfwise's last clean close left it, and run on every other open (a file
changed behind Shelfwise's back, a crash that left its WAL, a copy, a ``touch``). Real SQLite, real files; whether
an open scanned is read from ``Store.quick_checked`` and the CLI's debug log, never from a time."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shelfwise.core.api.doctor import check_library, kept_copies
from shelfwise.core.store.db import Store
from shelfwise.core.store.opening import closed_record
from tests.reliability import hostile
from tests.reliability.test_library import cli


def small_library(tmp_path: Path) -> Path:
    db = tmp_path / "lib.db"
    with Store(db) as store:
        store.collection("default")
        store.set_meta("note", "kept")
    return db


def opens_scanning(db: Path) -> bool:
    with Store(db) as store:
        assert store.get_meta("note") == "kept"
        return store.quick_checked


def test_an_unchanged_library_is_not_scanned_again(tmp_path: Path) -> None:
    db = small_library(tmp_path)
    assert closed_record(db).is_file()  # the clean close was recorded
    assert not opens_scanning(db)
    assert not opens_scanning(db)  # a close that changed nothing keeps it trusted
    with Store(db) as store:  # a write through Shelfwise, closed cleanly, is recorded again
        store.set_meta("other", 1)
    assert not opens_scanning(db)
    assert Store(db, check=False).quick_checked is False
    with Store(db, trust_clean_close=False) as store:  # what doctor asks for: every page, always
        assert store.quick_checked


def test_a_library_changed_behind_shelfwises_back_is_scanned_and_its_damage_found(tmp_path: Path) -> None:
    db = small_library(tmp_path)
    hostile.damage_table(db, "collections")  # another program writes into the closed file
    for _ in range(2):  # and again: a damaged library's close is never recorded
        with Store(db) as store:
            assert store.quick_checked and store.damage and store.read_only


def test_touch_copy_and_a_crash_are_all_scanned(tmp_path: Path) -> None:
    db = small_library(tmp_path)
    st = db.stat()
    os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same times set again: the change time still moves
    assert opens_scanning(db)
    assert not opens_scanning(db)

    copy = tmp_path / "copy.db"  # a copy with its times and its record: another file
    shutil.copy2(db, copy)
    shutil.copy2(closed_record(db), closed_record(copy))
    assert opens_scanning(copy)

    # a process that writes and dies without closing leaves its WAL: the next open scans
    crash = ("import os, sys; from shelfwise.core.store.db import Store; s = Store(sys.argv[1]); "
             "s.set_meta('crash', 1); os._exit(0)")
    subprocess.run([sys.executable, "-c", crash, str(db)], check=True, timeout=120)
    assert Path(str(db) + "-wal").exists()
    assert opens_scanning(db)
    assert not opens_scanning(db)  # that open's clean close moved the WAL into the file and recorded it


def test_a_second_connection_still_open_leaves_no_record(tmp_path: Path) -> None:
    db = small_library(tmp_path)
    first, second = Store(db), Store(db)
    assert not second.quick_checked  # the WAL beside it is the first connection's, open now
    second.set_meta("late", 1)
    first.close()  # not the last connection: its WAL is still beside the file
    assert not closed_record(db).exists()
    second.close()
    assert closed_record(db).exists() and not opens_scanning(db)


def test_doctor_reads_every_page_of_a_trusted_library(tmp_path: Path) -> None:
    db = small_library(tmp_path)
    found = check_library(db)
    assert found.diagnosis.integrity == ["ok"] and found.damage == ""


def test_the_cli_skips_the_scan_of_an_unchanged_library_and_scans_a_changed_one(tmp_path: Path) -> None:
    db = small_library(tmp_path)
    home = tmp_path / "home"
    quiet = cli("-v", "status", db=db, home=home)
    assert quiet.returncode == 0, quiet.stderr
    assert "quick_check skipped" in quiet.stderr and "quick_check of" not in quiet.stderr
    hostile.damage_table(db, "nodes")
    damaged = cli("-v", "status", db=db, home=home)
    assert damaged.returncode == 3 and "quick_check of" in damaged.stderr and "is damaged" in damaged.stderr


def test_a_kept_copys_record_is_not_a_kept_copy(tmp_path: Path) -> None:
    db = small_library(tmp_path)
    kept = tmp_path / "lib.db.damaged-20261206-0900"
    shutil.copy2(db, kept)
    Store(kept).close()  # opening a kept copy writes its record beside it
    assert closed_record(kept).exists() and kept_copies(db) == [kept]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="whether a WAL is in use is read from /proc/locks")
def test_a_library_open_in_another_process_is_not_scanned_until_that_process_dies(tmp_path: Path) -> None:
    db = small_library(tmp_path)
    hold = ("import os, sys; from shelfwise.core.store.db import Store; s = Store(sys.argv[1]); "
            "s.get_meta('note'); print('open', flush=True); sys.stdin.readline(); os._exit(0)")
    other = subprocess.Popen([sys.executable, "-c", hold, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "open"
        assert Path(str(db) + "-wal").exists()
        assert not opens_scanning(db)  # the window open while `shelfwise ask` runs
    finally:
        other.communicate("\n", timeout=60)  # it ends without closing: its WAL is left, nobody holds it
    assert Path(str(db) + "-wal").exists()
    assert opens_scanning(db)
