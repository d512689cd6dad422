"""Questions at the edges: one too long for the model's context, one asked while indexing is unfinished or an
ingest is running. Real bundled models, real SQLite."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shelfwise.core.indexing.state import index_state
from shelfwise.core.ingestion.lock import ingest_lock, ingest_running
from shelfwise.core.ingestion.runner import ingest
from shelfwise.core.models.fake import FakeBackend
from shelfwise.core.navigation.question import MAX_QUESTION_TOKENS, clip_question
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store.db import Store
from tests.cli_sample import SampleLibrary
from tests.reliability import hostile
from tests.reliability.kills import StagedRun

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample"
CORPUS = hostile.CORPUS


def shelfwise(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "shelfwise"), "--db", str(db), *args],
                          capture_output=True, text=True, timeout=600)


def test_clip_question_keeps_short_questions_and_cuts_long_ones_at_a_word() -> None:
    fake = FakeBackend()
    short = clip_question("How many days of leave?", fake)
    assert short.text == "How many days of leave?" and not short.clipped
    long = clip_question(hostile.long_question(), fake)
    assert long.clipped and long.kept_tokens <= MAX_QUESTION_TOKENS < long.tokens
    assert hostile.long_question().startswith(long.text) and not long.text.endswith(" ")
    assert f"{long.tokens:,} tokens" in long.note


@pytest.fixture(scope="module")
def sample_shelf(sample_copy: Callable[[str], SampleLibrary], llama_backend: object) -> Iterator[Shelf]:
    """The sample ingested and indexed (a copy of the session's: tests/conftest.py), asked with the session's
    answer model."""
    db = sample_copy("ask").db
    shelf = Shelf(Settings(db_path=db, embedder_path="minilm"), backend=llama_backend)  # type: ignore[arg-type]
    shelf.refresh("default")  # already indexed: nothing to do
    try:
        yield shelf
    finally:
        shelf.close()  # the session's backend, lent, stays open for other tests


def test_over_long_question_is_clipped_and_answered(sample_shelf: Shelf) -> None:
    # Issue 17, case 4: a 100 kB question ended in "BackendError: the prompt is 18900 tokens; the model's context
    # holds 8192".
    answer = sample_shelf.ask(hostile.long_question(100_000), "default")
    assert answer.text.strip() and answer.search is not None
    assert answer.notes and "only its first" in answer.notes[0]
    assert answer.notes[0] in answer.search.trace.notes
    result = sample_shelf.search(hostile.long_question(100_000), "default")
    assert result.hits and "only its first" in result.trace.notes[0]


def test_reingest_after_a_kill_during_embedding_resumes_indexing(tmp_path: Path) -> None:
    # Issue 17: after a kill during embedding a re-ingest said "30 unchanged" and did not index; the next ask then
    # silently indexed for minutes.
    files = tmp_path / "files"
    shutil.copytree(SAMPLE, files)  # 6 files, ~150 nodes to embed
    db = tmp_path / "lib.db"
    # Vectors are made while the files parse (EmbedAlongside), so "the first vectors are stored" no longer means
    # parsing is over: kill as soon as the last file's tree is written (its nodes are not embedded yet).
    run = StagedRun(db, files)
    last = len(list(files.iterdir())) - 1
    assert run.wait_for("written", last) is not None, "the ingest ended before its last write"
    assert run.kill(), "indexing finished before it could be killed"
    run.finish(timeout=60)
    with Store(db) as store:
        state = index_state(store, store.collection("default").id)
        assert state.unfinished and state.without_vectors > 0 and store.integrity_check() == "ok"
    rerun = shelfwise("ingest", str(files), db=db)
    assert rerun.returncode == 0, rerun.stderr
    assert "0 added, 0 updated, 6 unchanged" in rerun.stdout
    assert f"Indexing 'default': {state.without_vectors} nodes to embed" in rerun.stderr
    assert "Indexing: embedding" in rerun.stderr and "Indexed:" in rerun.stderr
    with Store(db) as store:
        done = index_state(store, store.collection("default").id)
        assert not done.unfinished and done.token == 0 and done.without_vectors == 0


def test_question_during_an_ingest_answers_from_what_exists_and_says_so(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    with Store(db) as store:
        ingest(store, [SAMPLE], isolate=False)
    # an unfinished index and an ingest running elsewhere (holding the ingest lock the runner holds)
    assert not ingest_running(db)
    with ingest_lock(db):
        assert ingest_running(db)
        t0 = time.monotonic()
        r = shelfwise("ask", "How many days of annual leave?", "--no-answer", "--readout", "embedding", db=db)
        seconds = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    assert "An ingest is running on this library: answering from the 6 documents stored so far" in r.stderr
    assert "found by their words only" in r.stderr  # nothing embedded yet: lexical evidence only
    assert "Passages:" in r.stdout and seconds < 240
    with Store(db) as store:  # the question did not write (no indexing behind the ingest's back)
        assert index_state(store, store.collection("default").id).without_vectors > 0


def test_ingest_lock_needs_no_fcntl_and_dies_with_its_holder(tmp_path: Path) -> None:
    # Session 3's lock was fcntl.flock, absent on Windows (questions could not tell an ingest was running there).
    # The holder here runs with `import fcntl` failing, as on Windows; kill -9 must release its lock.
    db = tmp_path / "lib.db"
    code = ("import sys, time; sys.modules['fcntl'] = None\n"
            "from pathlib import Path\nfrom shelfwise.core.ingestion.lock import ingest_lock\n"
            f"with ingest_lock(Path({str(db)!r})):\n    print('held', flush=True)\n    time.sleep(600)\n")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert ingest_running(db)
        with ingest_lock(db):  # a second ingest shares it
            assert ingest_running(db)
        assert ingest_running(db)
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(timeout=30)
    assert not ingest_running(db)
