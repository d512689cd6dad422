"""Searchable at once: ``ingest --no-wait`` returns after parsing, words find passages at once, a question asked
meanwhile answers from what exists and says so, ``status`` shows the background indexer's progress, and the
index finishes by itself. The real CLI, the real bundled models and a real SQLite library."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shelfwise.core.indexing.finish import IndexProgress, indexer_alive, mark_started, stored_progress
from shelfwise.core.indexing.state import index_state
from shelfwise.core.paths import models_dir
from shelfwise.core.store.db import Store

ROOT = Path(__file__).resolve().parents[1]


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SHELFWISE_HOME": str(home), "SHELFWISE_THREADS": os.environ.get("SHELFWISE_THREADS", "1")}
    return subprocess.run([str(Path(sys.executable).parent / "shelfwise"), "--db", str(home / "lib.db"), *args],
                          capture_output=True, text=True, env=env, timeout=1800, cwd=ROOT)


def test_indexer_alive_tells_live_other_processes(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.db")
    cid = store.collection("default").id
    assert not indexer_alive(stored_progress(store, cid))
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        mark_started(store, cid, child.pid, 12)
        p = stored_progress(store, cid)
        assert p is not None and p.stage == "starting" and p.total == 12 and indexer_alive(p)
    finally:
        child.kill()
        child.wait()
    assert not indexer_alive(stored_progress(store, cid))  # it is gone
    assert not indexer_alive(IndexProgress("embedding", 1, 2, None, 0.0, os.getpid(), time.time()))  # ourselves
    store.close()


def test_status_json_reports_a_live_indexer(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from shelfwise.app.cli.main import main
    from shelfwise.core.store.db import FileMeta
    from shelfwise.ingest.model import Location, ParsedDocument, ParsedNode

    db = tmp_path / "lib.db"
    store = Store(db)
    cid = store.collection("default").id
    doc = ParsedDocument(title="T", format="md", pages=1, children=[ParsedNode(kind="section", title="S", children=[
        ParsedNode(kind="passage", title="", text=f"words {i}", location=Location(page=1)) for i in range(3)])])
    store.write_document(cid, "/t.md", FileMeta(1, 1.0, "x"), doc)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        mark_started(store, cid, child.pid, 5)
        out = CliRunner().invoke(main, ["--db", str(db), "status", "--json"])
        assert out.exit_code == 0, out.output
        js = json.loads(out.stdout)
        assert [Path(d["path"]).name for d in js["documents"]] == ["t.md"]
        [ix] = js["indexes"]
        assert ix["collection"] == "default" and ix["unfinished"] and ix["running"], ix
        assert ix["pending"] == 5 and ix["stage"] == "starting" and ix["total"] == 5 and ix["pid"] == child.pid, ix
    finally:
        child.kill()
        child.wait()
    [ix] = json.loads(CliRunner().invoke(main, ["--db", str(db), "status", "--json"]).stdout)["indexes"]
    assert ix["unfinished"] and not ix["running"] and ix["stage"] is None and ix["pending"] == 5, ix
    store.close()


@pytest.mark.model
def test_no_wait_ingest_is_searchable_at_once_and_indexes_in_background(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(models_dir(), home / "models")
    r = _cli(home, "ingest", str(ROOT / "resources" / "sample"), "--no-wait")
    assert r.returncode == 0, r.stderr
    assert "Indexing in the background" in r.stderr
    store = Store(home / "lib.db", read_only=True)
    cid = store.find_collection("default").id
    assert index_state(store, cid).without_vectors > 0  # returned before the vectors were made
    store.close()

    t0 = time.monotonic()
    found = _cli(home, "search", "paid annual leave days", "--json")
    assert found.returncode == 0, found.stderr
    assert any(Path(h["path"]).name == "handbook.pdf" for h in json.loads(found.stdout)[:3]), found.stdout
    assert time.monotonic() - t0 < 30  # words answer at once (a process start; generous under load)

    st = _cli(home, "status")
    assert "Index 'default':" in st.stdout and "pid" in st.stdout, st.stdout
    [ix] = json.loads(_cli(home, "status", "--json").stdout)["indexes"]
    # still running; its vectors may already be made (pending 0) while topics and calibration remain
    assert ix["collection"] == "default" and ix["unfinished"] and ix["running"] and ix["pending"] >= 0, ix

    deadline = time.monotonic() + 1200
    while time.monotonic() < deadline:
        store = Store(home / "lib.db", read_only=True)
        done = not index_state(store, cid).unfinished
        store.close()
        if done:
            break
        time.sleep(2)
    assert done, "the background indexer did not finish"
    assert "Index 'default'" not in _cli(home, "status").stdout
    [ix] = json.loads(_cli(home, "status", "--json").stdout)["indexes"]
    assert not ix["unfinished"] and ix["pending"] == 0 and ix["stage"] == "done", ix
