"""Issue 38, cases 6-9, through the real CLI in a subprocess with real SQLite and the real bundled models: another
program's SQLite file that has a ``migrations`` table is refused before anything is written to it;
``SHELFWISE_HOME`` and ``--db`` naming a file, a device or a FIFO get a clear message; ``doctor --rebuild`` keeps
the conversations and leaves a healthy library alone without ``--force``; a GGUF of the wrong kind for its role
(the generative model as the encoder, an encoder as the answer model) is refused by its header."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from shelfwise.core.conversation.model import Conversation, Reading, Turn, TurnCitation
from shelfwise.core.conversation.storage import ConversationStore
from shelfwise.core.ingestion.runner import ingest
from shelfwise.core.store.db import Store
from shelfwise.ingest.model import Location
from tests.reliability import hostile

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample"
SHELFWISE = str(Path(sys.executable).parent / "shelfwise")


def interruptible() -> None:
    """In a child before it runs the program (``preexec_fn``): Ctrl-C's default action, as a terminal's program
    has it. A shell that started the tests in the background (``cmd &`` without job control, as CI runners may)
    leaves SIGINT ignored in every child, and Python then never turns it into ``KeyboardInterrupt``, so a test
    that sends SIGINT would see the program finish instead."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def cli(*args: str, home: Path, db: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SHELFWISE_HOME": str(home), "PYTHONIOENCODING": "utf-8"}
    cmd = [SHELFWISE, *(["--db", str(db)] if db is not None else []), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, cwd="/", errors="replace")


def session_home(tmp_path: Path) -> Path:
    """The test session's SHELFWISE_HOME (its models are assembled there once); the user data dir outside tests."""
    from shelfwise.core.paths import data_dir

    return Path(os.environ.get("SHELFWISE_HOME") or data_dir())


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- case 6
def laravel_db(path: Path) -> Path:
    """Another program's SQLite file with a ``migrations`` table of its own (Laravel's layout), rollback journal."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE migrations (id INTEGER PRIMARY KEY, migration TEXT NOT NULL, batch INTEGER NOT NULL)")
    conn.execute("INSERT INTO migrations(migration, batch) VALUES ('2014_10_12_000000_create_users_table', 1)")
    conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, email TEXT)")
    conn.execute("INSERT INTO users(name, email) VALUES ('Ada', 'ada@example.org')")
    conn.commit()
    conn.close()
    return path


def named_migrations_db(path: Path) -> Path:
    """Another program whose ``migrations`` table has Shelfwise's columns (name, applied_at) but its own names."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    conn.execute("INSERT INTO migrations VALUES ('0001_initial', '2025-01-01')")
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.commit()
    conn.close()
    return path


@pytest.mark.parametrize("make", [laravel_db, named_migrations_db])
def test_another_programs_database_with_a_migrations_table_is_not_written(tmp_path: Path, make) -> None:
    other = make(tmp_path / "app.sqlite")
    before = sha(other)
    for args in (["status"], ["ingest", str(SAMPLE / "facilities.md"), "--no-index"], ["search", "leave"],
                 ["tree"], ["ask", "Where do visitors park?"], ["doctor"]):
        r = cli(*args, db=other, home=session_home(tmp_path))
        assert r.returncode != 0, (args, r.stdout, r.stderr)
        assert "not a Shelfwise library" in r.stderr, (args, r.stderr)
        assert "newer version of Shelfwise" not in r.stderr and "Traceback" not in r.stderr
        assert sha(other) == before, args  # journal mode included: a switch to WAL rewrites the header
    assert sorted(p.name for p in tmp_path.iterdir()) == ["app.sqlite"]


# --------------------------------------------------------------------------- case 7
def test_shelfwise_home_naming_a_file_is_said_plainly(tmp_path: Path) -> None:
    home = tmp_path / "home-is-a-file"
    home.write_text("not a folder")
    for args in (["ask", "Where do visitors park?"], ["ingest", str(SAMPLE / "facilities.md")], ["models"],
                 ["status"]):
        r = cli(*args, home=home)
        assert r.returncode == 1, (args, r.stderr)
        assert "Traceback" not in r.stderr and "FileExistsError" not in r.stderr, r.stderr
        assert f"SHELFWISE_HOME ({home}) is a file, not a folder" in r.stderr, r.stderr
    assert home.read_text() == "not a folder"


def test_db_naming_a_device_or_a_fifo_is_refused_without_writing_beside_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    journal = Path("/dev/null-journal")
    had_journal = journal.exists()
    for db, kind in ((Path("/dev/null"), "a device"), (fifo, "a named pipe (FIFO)")):
        for args in (["status"], ["ingest", str(SAMPLE / "facilities.md"), "--no-index"], ["search", "leave"]):
            r = cli(*args, db=db, home=session_home(tmp_path), timeout=120)
            assert r.returncode == 1, (db, args, r.stderr)
            assert f"it is {kind}, not a library file" in r.stderr, r.stderr
    assert journal.exists() == had_journal
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe.db"]


# --------------------------------------------------------------------------- case 8
def library_with_conversations(folder: Path) -> Path:
    files = folder / "files"
    shutil.copytree(SAMPLE, files)
    db = folder / "lib.db"
    with Store(db) as store:
        ingest(store, [files], "default")
        doc = next(d for d in store.documents() if d.path.endswith("facilities.md"))
        convs = ConversationStore(store)
        for i in range(3):
            conv = convs.create("default")
            question = f"Where do visitors park? ({i})"
            convs.add_turn(conv, Turn(position=0, question=question,
                                      reading=Reading(mode="first", query=question, question=question),
                                      answer="On level two.", found=True, citations=[TurnCitation(
                                          number=1, node_id=1, document_id=doc.id, path=doc.path,
                                          title="Facilities", heading_path=["Parking"], location=Location(),
                                          quote="Visitors park on level two.")]))
    return db


def conversations(db: Path) -> list[Conversation]:
    with Store(db) as store:
        convs = ConversationStore(store)
        return [convs.get(s.id) for s in convs.list()]


def test_doctor_rebuild_leaves_a_healthy_library_alone_without_force(tmp_path: Path) -> None:
    db = library_with_conversations(tmp_path)
    before = sha(db)
    r = cli("doctor", "--rebuild", "--yes", db=db, home=session_home(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "healthy" in r.stdout and "--force" in r.stdout and "damaged" not in r.stdout, r.stdout
    assert not [p for p in tmp_path.iterdir() if ".damaged-" in p.name or ".replaced-" in p.name]
    assert sha(db) == before and len(conversations(db)) == 3


@pytest.mark.parametrize("damaged", [False, True])
def test_doctor_rebuild_keeps_the_conversations(tmp_path: Path, damaged: bool) -> None:
    db = library_with_conversations(tmp_path)
    before = conversations(db)
    assert len(before) == 3
    if damaged:
        hostile.damage_table(db, "nodes")
    args = ["doctor", "--rebuild", "--yes", "--no-index"] + ([] if damaged else ["--force"])
    r = cli(*args, db=db, home=session_home(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "3 conversations (3 turns) kept" in r.stdout, r.stdout
    assert ("damaged file is kept" in r.stdout) == damaged and ("previous file is kept" in r.stdout) != damaged
    after = conversations(db)
    assert [(c.id, c.title, [t.question for t in c.turns]) for c in after] == \
        [(c.id, c.title, [t.question for t in c.turns]) for c in before]
    for conv in after:  # the citation points at the re-read document, which is there
        assert all(not c.missing and c.path.endswith("facilities.md") for t in conv.turns for c in t.citations)


# --------------------------------------------------------------------------- case 9
def test_a_generative_gguf_as_the_encoder_is_refused_by_its_header(tmp_path: Path) -> None:
    from shelfwise.core.models.llama.bundled import bundled_model_path

    gemma = bundled_model_path()
    files = tmp_path / "files"
    files.mkdir()
    shutil.copy(SAMPLE / "facilities.md", files)
    db = tmp_path / "lib.db"
    for args in (["--embedder", str(gemma), "models", "--check"], ["--embedder", str(gemma), "ingest", str(files)]):
        r = cli(*args, db=db, home=session_home(tmp_path))
        assert r.returncode == 1, (args, r.returncode, r.stderr)  # 139 / -11 was the segmentation fault
        assert "is a generative model (gemma3), not a sentence encoder" in r.stderr, r.stderr


def test_an_encoder_gguf_as_the_answer_model_is_refused_by_its_header(tmp_path: Path) -> None:
    from shelfwise.core.models.encoders.embedder import bundled_embedder_path

    minilm = bundled_embedder_path()
    db = tmp_path / "lib.db"
    with Store(db) as store:
        ingest(store, [SAMPLE / "facilities.md"], "default")
    r = cli("ask", "Where do visitors park?", "--model", str(minilm), db=db, home=session_home(tmp_path))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "is a sentence encoder (bert), not a generative model" in r.stderr, r.stderr
    assert "did not find an answer" not in r.stdout


# --------------------------------------------------------------------------- weak: model files checked by hash
def home_with_models(home: Path) -> Path:
    """A SHELFWISE_HOME with copies (not links: they are damaged here) of the bundled models."""
    from shelfwise.core.paths import models_dir

    (home / "models").mkdir(parents=True)
    for p in models_dir().iterdir():
        if p.name.startswith(("gemma-3-270m", "all-MiniLM")):
            shutil.copy(p, home / "models" / p.name)
    return home / "models" / "gemma-3-270m-q4_k_m.gguf"


def test_a_bundled_model_of_random_bytes_is_reassembled_and_a_flipped_one_is_repaired_by_check(tmp_path: Path) -> None:
    gguf = home_with_models(tmp_path / "home")
    size = gguf.stat().st_size
    gguf.write_bytes(os.urandom(size))  # same size: the sidecar's size check alone passed it
    r = cli("models", home=tmp_path / "home")
    assert r.returncode == 0, r.stderr
    assert gguf.read_bytes()[:4] == b"GGUF"
    with gguf.open("r+b") as fh:  # 4 kB flipped inside the tensors: only the hash sees it
        fh.seek(size // 2)
        block = fh.read(4096)
        fh.seek(size // 2)
        fh.write(bytes(b ^ 0xFF for b in block))
    r = cli("models", "--check", home=tmp_path / "home")
    assert r.returncode == 0, r.stderr
    assert "re-assembled from its package: it did not match its recorded sha256" in r.stdout, r.stdout
    r = cli("models", "--check", home=tmp_path / "home")
    assert "File of the answer model: sha256 matches its record" in r.stdout, r.stdout


def test_a_users_gguf_that_does_not_match_its_sha256_file_fails_the_check(tmp_path: Path) -> None:
    from shelfwise.core.models.gguf_meta import sha256_of
    from shelfwise.core.models.llama.bundled import bundled_model_path

    mine = tmp_path / "mine.gguf"
    shutil.copy(bundled_model_path(), mine)
    (tmp_path / "mine.gguf.sha256").write_text(f"{sha256_of(mine)}  mine.gguf\n")
    r = cli("models", "--check", "--model", str(mine), home=session_home(tmp_path))
    assert r.returncode == 0 and "File of the answer model: sha256 matches its record" in r.stdout, \
        r.stdout + r.stderr
    with mine.open("r+b") as fh:
        fh.seek(mine.stat().st_size // 2)
        fh.write(os.urandom(4096))
    r = cli("models", "--check", "--model", str(mine), home=session_home(tmp_path))
    assert r.returncode == 1 and "does not match its recorded sha256" in r.stderr, r.stdout + r.stderr


# --------------------------------------------------------------------------- weak: damaged libraries
def sample_library(folder: Path) -> Path:
    shutil.copytree(SAMPLE, folder / "files")
    db = folder / "lib.db"
    with Store(db) as store:
        ingest(store, [folder / "files"], "default")
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db


def test_a_half_truncated_library_opens_read_only_with_a_warning_and_is_rebuilt(tmp_path: Path) -> None:
    db = sample_library(tmp_path)
    os.truncate(db, db.stat().st_size // 2)
    before = sha(db)
    r = cli("status", db=db, home=session_home(tmp_path))
    assert r.returncode == 3, r.stderr  # status's code for a damaged library
    assert "is damaged" in r.stderr and "truncated" in r.stderr and "read-only" in r.stderr, r.stderr
    assert "facilities.md" in r.stdout, r.stdout  # what survived is listed
    r = cli("ask", "How many days of annual leave do I get?", db=db, home=session_home(tmp_path))
    assert "is damaged" in r.stderr and "doctor --rebuild" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert sha(db) == before  # read from a copy; the damaged file is kept as it was for the rebuild
    r = cli("doctor", "--rebuild", "--yes", "--no-index", db=db, home=session_home(tmp_path))
    assert r.returncode == 0 and "6 documents ingested" in r.stdout, r.stdout + r.stderr


def test_ask_on_a_library_with_overwritten_pages_warns(tmp_path: Path) -> None:
    db = sample_library(tmp_path)
    hostile.damage_table(db, "embeddings")
    r = cli("ask", "How many days of annual leave do I get?", "--no-answer", db=db, home=session_home(tmp_path))
    assert "is damaged" in r.stderr and "doctor --rebuild" in r.stderr, r.stdout + r.stderr
