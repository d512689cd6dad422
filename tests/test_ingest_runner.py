"""Ingest runner: incremental runs, replacement, removal, failures, progress/cancel, and kill-and-rerun."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shelfwise.core.ingestion.runner import IngestProgress, ingest, plan
from shelfwise.core.ingestion.worker import Cancelled, ParserCrashed, ParseWorker
from shelfwise.core.store.db import Store
from shelfwise.ingest.model import IngestError, Limits, ParsedDocument
from shelfwise.ingest.registry import is_candidate

HELPERS = __name__.rpartition(".")[0] + "." if "." in __name__ else ""  # "tests." when tests/ is a package


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write(root / "alpha.md", "# Alpha\n\nAardvarks eat ants at night.\n\n## Habitat\n\nThey live in Africa.\n")
    write(root / "beta.txt", "Beta notes\n\nBeavers build dams in rivers.\n")
    write(root / "sub" / "gamma.md", "# Gamma\n\nGiraffes have long necks.\n")
    write(root / ".hidden.md", "# Hidden\n\nnever ingested\n")
    write(root / ".git" / "x.md", "# In a hidden folder\n\nnever ingested\n")
    write(root / "~$lock.docx", "office lock file")
    write(root / "image.png", "not a document")
    return root


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path / "lib.db")
    yield s
    s.close()


def names(report, action: str) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(Path(r.path).name for r in report.results if r.action == action)


def test_first_run_then_incremental_run_ingests_nothing(store: Store, folder: Path) -> None:
    first = ingest(store, [folder])  # default: parsed in a worker process
    assert names(first, "added") == ["alpha.md", "beta.txt", "gamma.md"]
    assert first.failed == [] and first.counts["added"] == 3
    assert all(r.passages >= 1 and r.seconds >= 0 for r in first.results)
    assert store.search("giraffes")
    second = ingest(store, [folder], isolate=False)
    assert second.counts == {"added": 0, "updated": 0, "skipped": 3, "removed": 0, "failed": 0, "ignored": 0,
                             "duplicate": 0}
    assert {r.status for r in second.results} == {"ok"}


def test_changed_file_is_replaced_and_touched_file_is_not(store: Store, folder: Path) -> None:
    ingest(store, [folder], isolate=False)
    coll = store.collection("default")
    beta = folder / "beta.txt"
    before = store.document_by_path(coll.id, beta)
    write(beta, "Beta notes\n\nOtters hold hands while sleeping.\n")
    report = ingest(store, [folder], isolate=False)
    assert names(report, "updated") == ["beta.txt"] and names(report, "skipped") == ["alpha.md", "gamma.md"]
    assert store.search("beavers") == [] and store.search("otters")
    assert store.document_by_path(coll.id, beta).id == before.id
    # Same content, new mtime: hashed, skipped, and the new mtime stored so the next run does not hash again.
    os.utime(folder / "alpha.md", (time.time() + 100, time.time() + 100))
    work = plan(store, [folder], coll.id, is_candidate)
    assert all(i.skip for i in work.items)
    report = ingest(store, [folder], isolate=False)
    assert report.counts["skipped"] == 3
    assert store.document_by_path(coll.id, folder / "alpha.md").mtime == (folder / "alpha.md").stat().st_mtime


def test_deleted_file_is_removed_and_missing_path_reported(store: Store, folder: Path) -> None:
    ingest(store, [folder], isolate=False)
    (folder / "sub" / "gamma.md").unlink()
    report = ingest(store, [folder], isolate=False)
    assert names(report, "removed") == ["gamma.md"] and report.failed == []
    assert store.search("giraffes") == [] and len(store.documents()) == 2
    report = ingest(store, [folder / "nope.md"], isolate=False)
    assert report.failed and "no such file" in report.failed[0].message
    # A single file that was ingested and is now gone is removed when named again.
    (folder / "beta.txt").unlink()
    assert names(ingest(store, [folder / "beta.txt"], isolate=False), "removed") == ["beta.txt"]


def test_bad_files_are_recorded_and_the_batch_continues(store: Store, folder: Path) -> None:
    (folder / "empty.md").write_bytes(b"")
    (folder / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0" + b"\0" * 600)
    report = ingest(store, [folder], isolate=False)
    failed = {Path(r.path).name: r for r in report.failed}
    assert set(failed) == {"empty.md", "old.doc"}
    assert "legacy" in failed["old.doc"].message and failed["old.doc"].status == "error"
    assert names(report, "added") == ["alpha.md", "beta.txt", "gamma.md"]
    docs = {Path(d.path).name: d for d in store.documents()}
    assert docs["old.doc"].status == "error" and docs["old.doc"].passages == 0
    # Unchanged failed files are still reported as failed on the next run (exit code stays 1 in the CLI).
    assert {Path(r.path).name for r in ingest(store, [folder], isolate=False).failed} == {"empty.md", "old.doc"}


def test_parser_crash_is_contained_and_previous_version_kept(store: Store, folder: Path) -> None:
    ingest(store, [folder], isolate=False)

    def crashing(path: Path, limits: Limits) -> ParsedDocument:
        raise RuntimeError("parser bug")

    write(folder / "alpha.md", "# Alpha\n\nChanged text.\n")
    report = ingest(store, [folder / "alpha.md"], parse=crashing)
    [r] = report.results
    assert (r.action, r.status) == ("failed", "error")
    assert "RuntimeError: parser bug" in r.message and "previous version kept" in r.message
    doc = store.document_by_path(store.collection("default").id, folder / "alpha.md")
    assert doc.status == "ok" and store.search("aardvarks")  # the old tree is still searchable
    retried = ingest(store, [folder / "alpha.md"], isolate=False)
    assert names(retried, "updated") == ["alpha.md"]  # the changed file is tried again, and now it parses
    assert store.search("aardvarks") == []


def test_progress_cancel_and_after_write(store: Store, folder: Path) -> None:
    events: list[IngestProgress] = []
    written: list[int] = []
    report = ingest(store, [folder], progress=events.append, after_write=written.append, isolate=False)
    done = [e for e in events if e.status != "working"]
    assert [e.done for e in done] == [1, 2, 3] and all(e.total == 3 for e in events)
    assert done[-1].eta_seconds == 0 and all(e.elapsed >= 0 for e in events)
    assert sorted(written) == sorted(r.document_id for r in report.results)

    def broken_hook(doc_id: int) -> None:
        raise ValueError("embedder missing")

    report = ingest(store, [folder], force=True, after_write=broken_hook, isolate=False)
    assert report.counts["updated"] == 3 and all("embedder missing" in r.message for r in report.results)

    calls = iter([False, True])
    report = ingest(store, [folder], force=True, cancel=lambda: next(calls), isolate=False)
    assert report.cancelled and len(report.results) == 1


def test_worker_left_holding_much_memory_is_replaced_before_the_next_file(folder: Path) -> None:
    # the heap one big file grew stays resident in a reused worker; above the threshold a fresh one takes over
    with ParseWorker() as worker:
        pid = None
        for name in ("alpha.md", "beta.txt"):
            worker(folder / name)
            assert worker.recycled == 0 and worker._proc is not None
            pid = pid or worker._proc.pid
            assert worker._proc.pid == pid  # a small file keeps the same child
        assert worker(folder / "alpha.md", Limits(worker_recycle_rss_bytes=1)).title == "Alpha"
        assert worker.recycled == 1 and worker._proc is None  # stopped after the reply: the file still parsed
        assert worker(folder / "beta.txt").count("passage") == 1 and worker._proc.pid != pid


def test_worker_turns_crash_hang_and_cancel_into_file_errors(store: Store, folder: Path) -> None:
    write(folder / "segv.md", "# x\n\ny\n")
    write(folder / "hang.md", "# x\n\ny\n")
    old_doc = folder.parent / "old.doc"
    old_doc.write_bytes(b"\xd0\xcf\x11\xe0" + b"\0" * 600)
    with ParseWorker(timeout=1.0, poll_interval=0.05, parser=f"{HELPERS}misbehaving_parser:parse") as worker:
        assert worker(folder / "alpha.md").title == "Alpha" and worker.last_parse_seconds > 0
        with pytest.raises(ParserCrashed, match=r"crashed on this file \(signal 11"):
            worker(folder / "segv.md")
        assert worker(folder / "beta.txt").count("passage") == 1  # a fresh child took over
        with pytest.raises(IngestError, match="longer than 1 s"):
            worker(folder / "hang.md")
        t0 = time.monotonic()
        with pytest.raises(Cancelled):
            worker(folder / "hang.md", cancel=lambda: time.monotonic() - t0 > 0.3)
        with pytest.raises(IngestError, match="legacy"):
            worker(old_doc)  # errors raised in the child arrive with their message and status
        # Through the runner: the crash is one failed file, the batch goes on.
        (folder / "hang.md").unlink()
        report = ingest(store, [folder], parse=worker.parse_fn())
    failed = {Path(r.path).name: r.message for r in report.failed}
    assert set(failed) == {"segv.md"} and "crashed" in failed["segv.md"]
    assert names(report, "added") == ["alpha.md", "beta.txt", "gamma.md"]


KILL_SCRIPT = """
import sys
from pathlib import Path
from shelfwise.core.store.db import Store
from shelfwise.core.ingestion.runner import ingest
ingest(Store(sys.argv[1]), [Path(sys.argv[2])])
"""


def test_killed_mid_ingest_leaves_a_db_that_a_rerun_completes(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    n_files = 12
    para = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt. "
    for i in range(n_files):
        body = "\n\n".join(f"## Part {j}\n\n{para * 3} file{i} item{j}" for j in range(400))
        write(folder / f"doc{i:02d}.md", f"# Document {i}\n\n{body}\n")
    db = tmp_path / "lib.db"
    Store(db).close()  # create and migrate before the race starts
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(db), str(folder)])
    try:
        deadline = time.time() + 60
        done = 0
        while time.time() < deadline and proc.poll() is None:
            conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            done = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
            conn.close()
            if done >= 3:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "ingest finished before it could be killed; make the input larger"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL and 3 <= done < n_files

    store = Store(db)
    assert store.integrity_check() == "ok"
    report = ingest(store, [folder], isolate=False)
    assert report.failed == [] and report.counts["skipped"] >= 3
    docs = store.documents()
    assert len(docs) == n_files and {d.status for d in docs} == {"ok"}
    passages = {d.passages for d in docs}
    assert len(passages) == 1  # every file has the same shape: no half-written or duplicated trees
    conn = store.conn
    assert conn.execute("SELECT count(*) FROM nodes WHERE kind = 'passage'").fetchone()[0] == n_files * passages.pop()
    assert conn.execute("SELECT count(*) FROM nodes WHERE kind = 'document'").fetchone()[0] == n_files
    # Count through the FTS index itself (no join): a stale or missing index entry changes this number.
    assert conn.execute("SELECT count(*) FROM nodes_fts WHERE nodes_fts MATCH 'lorem'").fetchone()[0] == (
        n_files * 400)
    assert store.integrity_check() == "ok" and store.search("file7 item5")
    store.close()


def test_every_parse_failure_of_the_model_comes_back_from_the_worker_as_itself() -> None:
    """The worker rebuilds a child's failure from its class name (``worker.ERRORS``): each IngestError of
    ``ingest/model.py`` is there, so none comes back as a plain IngestError."""
    from shelfwise.core.ingestion.worker import ERRORS, _error
    from shelfwise.ingest import model

    failures = {c for c in vars(model).values() if isinstance(c, type) and issubclass(c, IngestError)
                and c is not IngestError}
    assert set(ERRORS.values()) == failures
    for name, cls in ERRORS.items():
        exc = _error(name, "error", "x")
        assert type(exc) is cls and exc.status == "error"
    assert type(_error("SomethingElse", "needs_ocr", "x")) is IngestError
