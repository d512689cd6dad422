"""Issue 27, cases 5 and 7 and the weak CLI cases, through the real CLI in a subprocess with the real bundled models
and real SQLite: a question with bytes that are not UTF-8, an empty question, ``ask`` on a full disk, ``doctor`` on
a healthy read-only library, another program's SQLite file as ``--db``, read-only commands on a missing library,
warnings in the normal output, two ingests into one collection, and ``calibrate`` without the generative model."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from tests.cli_sample import SampleLibrary
from tests.reliability.scenarios import run_cli
from tests.reliability.test_library import RO_MOUNT

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample"
SHELFWISE = str(Path(sys.executable).parent / "shelfwise")
MiB = 1 << 20


def cli(*args: str | bytes, db: Path, timeout: float = 300, wrap: list[str] | None = None,
        home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SHELFWISE_HOME": str(home or db.parent / "home"), "PYTHONIOENCODING": "utf-8"}
    cmd: list[str | bytes] = [*(wrap or []), SHELFWISE, "--db", str(db), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, errors="replace",
                          cwd="/")


@pytest.fixture(scope="module")
def indexed(sample_copy: Callable[[str], SampleLibrary]) -> Path:
    """The sample, ingested and indexed (embeddings, topics, calibration) through the CLI: a copy of the
    session's (tests/conftest.py), once for the module."""
    return sample_copy("indexed").db


def copy_library(db: Path, to: Path) -> Path:
    to.mkdir(parents=True, exist_ok=True)
    for p in db.parent.iterdir():  # the file, its WAL and the snapshot folder kept beside it
        if p.name.startswith(db.name):
            if p.is_dir():
                shutil.copytree(p, to / p.name)
            else:
                shutil.copy2(p, to / p.name)
    return to / db.name


def test_a_question_with_a_byte_that_is_not_utf8_is_answered(indexed: Path) -> None:
    # Case 5: UnicodeEncodeError traceback in the llama engine's tokenizer (search and --no-generate were fine)
    r = cli("ask", b"annual leave \xff", db=indexed)
    assert "Traceback" not in r.stderr and "UnicodeEncodeError" not in r.stderr, r.stderr[-2000:]
    assert r.returncode == 0 and "Answer:" in r.stdout, r.stdout + r.stderr[-1000:]


def test_an_empty_question_is_said_to_be_empty(indexed: Path) -> None:
    for q in ("", "   ", "?"):
        r = cli("ask", q, db=indexed, timeout=120)
        assert r.returncode == 2 and "question is empty" in r.stderr, (q, r.stdout, r.stderr)
        assert "Not found" not in r.stdout


def test_ask_on_a_full_disk_does_not_say_an_ingest_is_running(indexed: Path, tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs a private tmpfs (root and unshare)")
    lib = copy_library(indexed, tmp_path / "lib")
    assert (lib.parent / f"{lib.name}.ingest.lock").exists()  # left by the ingest, as on any used library
    disk = tmp_path / "disk"
    disk.mkdir()
    # a small file system holding the library, filled up while another program (the window, a search) has the
    # library open, so its -wal and -shm files exist: a private tmpfs seen by these processes only (the holder's
    # output goes to /dev/null: holding the test's pipes, it made the run wait out its two minutes)
    holder = ("import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1]); "
              "c.execute('SELECT count(*) FROM nodes').fetchall(); time.sleep(120)")
    wrap = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount -t tmpfs -o size=64m tmpfs "$0" && cp -a "$1"/. "$0"/ && '
            f'("$2" -c "$3" "$0/{lib.name}" >/dev/null 2>&1 &) && sleep 2 && '
            '(dd if=/dev/zero of="$0/fill" bs=4k 2>/dev/null; true) && shift 3 && exec "$@"',
            str(disk), str(lib.parent), sys.executable, holder]
    r = subprocess.run([*wrap, SHELFWISE, "--db", str(disk / lib.name), "ask", "How many days of annual leave?",
                        "--no-generate"], capture_output=True, text=True, timeout=300, cwd="/",
                       env={**os.environ, "SHELFWISE_HOME": str(tmp_path / "home")})
    assert "An ingest is running" not in r.stderr, r.stderr
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.returncode == 0 and "27 days" in r.stdout, r.stdout + r.stderr  # answered from what is indexed


def test_doctor_calls_a_healthy_read_only_library_healthy(indexed: Path, tmp_path: Path) -> None:
    # Case 7: "damaged ... 0 collections, 0 documents" and a rebuild advised, on a read-only mount
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs a read-only bind mount (root and unshare)")
    lib = copy_library(indexed, tmp_path / "ro")
    r = cli("doctor", db=lib, wrap=[*RO_MOUNT, str(lib.parent)], timeout=120)
    assert r.returncode == 0 and "The library is healthy." in r.stdout, r.stdout + r.stderr
    assert "damaged" not in r.stdout and " 0 documents" not in r.stdout
    assert "6 documents" in r.stdout


def test_another_programs_sqlite_file_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    other = tmp_path / "contacts.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
    conn.execute("INSERT INTO contacts VALUES ('Ada', '555-0100')")
    conn.commit()
    conn.close()
    before = hashlib.sha256(other.read_bytes()).hexdigest()
    for args in (["status"], ["ingest", str(SAMPLE / "facilities.md"), "--no-index"], ["search", "leave"]):
        r = cli(*args, db=other, timeout=60)
        assert r.returncode != 0 and "not a Shelfwise library" in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
    assert hashlib.sha256(other.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["contacts.sqlite", "home"] or \
        sorted(p.name for p in tmp_path.iterdir()) == ["contacts.sqlite"]


def test_read_only_commands_on_a_missing_library_create_nothing(tmp_path: Path) -> None:
    db = tmp_path / "not" / "yet" / "lib.db"
    for args in (["status"], ["search", "leave"], ["tree"], ["ask", "annual leave?"], ["doctor"],
                 ["calibrate"], ["index"]):
        r = cli(*args, db=db, timeout=60, home=tmp_path / "home")
        assert r.returncode in (1, 2), (args, r.stdout, r.stderr)
        assert "No library at" in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
        assert not (tmp_path / "not").exists(), args


def test_warnings_are_part_of_the_normal_output_of_ingest_and_status(tmp_path: Path) -> None:
    files = tmp_path / "files"
    files.mkdir()
    (files / "legacy.txt").write_bytes("Grüße aus Köln: die Urlaubsregel gibt zwanzig Tage.\n".encode("cp1252"))
    (files / "plain.txt").write_text("Visitors park in bay four.\n")
    db = tmp_path / "lib.db"
    r = cli("ingest", str(files), "--no-index", db=db, timeout=60)
    assert "1 file(s) stored with warnings" in r.stdout, r.stdout
    assert any("legacy.txt" in ln and "Windows-1252" in ln for ln in r.stdout.splitlines()), r.stdout
    s = cli("status", db=db, timeout=60)
    assert "warning: not valid UTF-8; read as Windows-1252" in s.stdout, s.stdout
    assert "1 stored with warnings" in s.stdout


def test_two_ingests_into_one_collection_both_finish_and_index_it_once_at_a_time(tmp_path: Path) -> None:
    # Weak case: two ingests of one collection at once both indexed it at once and neither finished. The same
    # folder twice: both parse everything, then both reach the index step together.
    files = tmp_path / "files"
    shutil.copytree(SAMPLE, files)
    db = tmp_path / "lib.db"
    env = {**os.environ, "SHELFWISE_HOME": str(tmp_path / "home")}
    procs = [subprocess.Popen([SHELFWISE, "-v", "--db", str(db), "ingest", str(files)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=900) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [e[-1500:] for _, e in outs]
    status = cli("status", "--json", db=db, timeout=60)
    data = json.loads(status.stdout)
    assert len(data["documents"]) == 6 and all(d["status"] == "ok" for d in data["documents"])
    assert [i["unfinished"] for i in data["indexes"]] == [False], data["indexes"]
    # one at a time: the index steps (from each process's "stage: embedding" to its "stage: done") do not overlap;
    # a process that found every file already stored by the other and the index finished has no index step
    spans = []
    for _, e in outs:
        stamps = {m.group(2): datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f")
                  for m in re.finditer(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) [^\n]*?stage: (embedding|done)", e)}
        if stamps:
            assert set(stamps) == {"embedding", "done"}, [ln for ln in e.splitlines() if "stage:" in ln]
            spans.append((stamps["embedding"], stamps["done"]))
    assert spans, "no index step at all"
    if len(spans) == 2:
        first, second = sorted(spans)
        assert second[0] >= first[1], spans
    assert sum("Another process is indexing this library" in e for _, e in outs) <= 1


def test_calibrate_uses_no_generative_model_and_shows_progress_when_not_on_a_terminal(indexed: Path,
                                                                                      tmp_path: Path) -> None:
    # Weak case: minutes at 1.2 GB (the generative model's readout on 120 probes) with no progress on a pipe
    lib = copy_library(indexed, tmp_path / "cal")
    r, peak = run_cli("calibrate", db=lib, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "calibrating on probe queries" in r.stderr, r.stderr[-1000:]  # progress lines on a pipe
    assert peak.tree_bytes < 900 * MiB, peak.tree_bytes / MiB
    assert "lm=False" in r.stdout or "lm=" in r.stdout
