"""Issue 27, case 8 and failure kinds: a failure that may pass (disk full, worker killed, a time cap, a file that
changed while it was read) is recorded as such and tried again by the next plain ingest; a failure about the file
(corrupt, encrypted) is not, until the file changes; ``status`` says which is which. Real SQLite, real parse
workers (with a parser that misbehaves on purpose for the kill and the truncation)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from shelfwise.core.ingestion.runner import ingest
from shelfwise.core.ingestion.worker import ParseWorker
from shelfwise.core.store.db import Store

TEXT = "".join(f"Paragraph {i}: the annual leave policy gives twenty days to every employee.\n\n" for i in range(200))


def _doc(db: Path, name: str):  # type: ignore[no-untyped-def]
    with Store(db) as store:
        return next(d for d in store.documents() if d.path.endswith(name))


def status_text(db: Path) -> str:
    env = {**os.environ, "SHELFWISE_HOME": str(db.parent / "home"), "PYTHONIOENCODING": "utf-8"}
    r = subprocess.run([str(Path(sys.executable).parent / "shelfwise"), "--db", str(db), "status"],
                       capture_output=True, text=True, env=env, timeout=60)
    return r.stdout


def test_a_file_that_failed_on_a_full_disk_is_retried_by_the_next_plain_ingest(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "a-small.txt").write_text("Visitors park in bay four.\n")
    (folder / "b-big.txt").write_text(TEXT * 5)
    db = tmp_path / "lib.db"
    with Store(db) as store:
        store.conn.execute("PRAGMA wal_autocheckpoint = 0")
        pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
        store.conn.execute(f"PRAGMA max_page_count = {pages + 12}")  # room for the small file, not the big one
        first = ingest(store, [folder], isolate=False)
    big = next(r for r in first.results if r.path.endswith("b-big.txt"))
    assert big.action == "failed" and "full" in big.message, big
    # what was recorded, checked after what the user sees (so the test fails on the behaviour where there is no
    # record): a failure that may pass, in the result, the stored row and status
    recorded = (getattr(big, "retry", None), getattr(_doc(db, "b-big.txt"), "retry", None), status_text(db))
    with Store(db) as store:  # space freed: a plain ingest (no --force) stores it
        again = ingest(store, [folder], isolate=False)
    assert {Path(r.path).name: (r.action, r.status) for r in again.results} == {
        "a-small.txt": ("skipped", "ok"), "b-big.txt": ("updated", "ok")}
    assert _doc(db, "b-big.txt").status == "ok"
    assert recorded[0] and recorded[1] and "may pass" in recorded[2], recorded


def test_a_file_whose_worker_was_killed_or_timed_out_is_retried(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "policy.txt").write_text(TEXT)
    db = tmp_path / "lib.db"
    with Store(db) as store, ParseWorker(parser="tests.misbehaving_parser:killed") as worker:
        r = ingest(store, [folder], parse=worker.parse_fn()).results[0]
    assert r.action == "failed", r
    with Store(db) as store, ParseWorker(parser="tests.misbehaving_parser:parse", timeout=1.0) as worker:
        hang = folder / "hang.txt"
        hang.write_text(TEXT)
        second = {Path(x.path).name: x for x in ingest(store, [folder], parse=worker.parse_fn()).results}
    assert (second["policy.txt"].action, second["policy.txt"].status) == ("updated", "ok")  # killed: retried
    r2 = second["hang.txt"]
    assert r2.action == "failed" and "longer than 1 s" in r2.message, r2
    with Store(db) as store:
        again = ingest(store, [folder])  # the real parse worker, no --force
    assert sorted((Path(r.path).name, r.action, r.status) for r in again.results) == [
        ("hang.txt", "updated", "ok"), ("policy.txt", "skipped", "ok")]
    # and what was recorded (checked after the behaviour, as above): both failures may pass
    assert "killed" in r.message and getattr(r, "retry", None) and getattr(r2, "retry", None), (r, r2)


def test_a_file_truncated_while_it_is_read_is_not_stored_ok_with_part_of_its_text(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    f = folder / "growing.txt"
    f.write_text(TEXT)
    db = tmp_path / "lib.db"
    with Store(db) as store, ParseWorker(parser="tests.misbehaving_parser:truncating") as worker:
        r = ingest(store, [folder], parse=worker.parse_fn()).results[0]
    assert r.status != "ok" and "changed while it was read" in r.message and r.retry, r
    with Store(db) as store:
        again = ingest(store, [folder]).results[0]
    assert again.action == "updated" and again.status == "ok"  # the file as it is now
    doc = _doc(db, "growing.txt")
    assert doc.size == f.stat().st_size


def test_a_failure_about_the_file_is_not_retried_until_the_file_changes(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    bad = folder / "report.docx"
    bad.write_bytes(b"PK\x03\x04" + os.urandom(3000))  # a corrupt Word file
    db = tmp_path / "lib.db"
    with Store(db) as store:
        first = ingest(store, [folder]).results[0]
        assert first.action == "failed" and not first.retry
        second = ingest(store, [folder]).results[0]
        assert second.action == "skipped" and second.status == "error"
    assert "about the file" in status_text(db)
    bad.write_bytes(b"PK\x03\x04" + os.urandom(3001))
    with Store(db) as store:
        assert ingest(store, [folder]).results[0].action == "failed"  # changed: tried again
