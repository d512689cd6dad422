"""Issue 38, weak kinds of questions, through the real CLI in a subprocess with the real bundled models and real
SQLite: an empty ``in:`` or ``type:`` is said to be empty, a question that starts with "- " is a question and not
an option, a question of filters only is not walked, and a 1 MB question through ``chat`` is stored clipped, with
the note said."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shelfwise.core.conversation.storage import ConversationStore
from shelfwise.core.store.db import Store

SHELFWISE = str(Path(sys.executable).parent / "shelfwise")


def cli(db: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([SHELFWISE, "--db", str(db), *args], capture_output=True, text=True, env=env, timeout=900,
                          cwd="/", input=stdin)


@pytest.fixture(scope="module")
def library(sample_copy) -> Path:
    """The sample as ``shelfwise ingest`` made it (a copy of the session's: tests/conftest.py)."""
    return sample_copy("questions").db


@pytest.mark.parametrize("args", [["ask", "in: How many days of annual leave do I get?"],
                                  ["ask", "How many days of annual leave do I get? type:"],
                                  ["search", "type:", "leave"], ["search", "leave", "in:"]])
def test_an_empty_filter_is_said_to_be_empty(library: Path, args: list[str]) -> None:
    r = cli(library, *args)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "no value given" in r.stderr, r.stderr


def test_a_question_starting_with_a_dash_is_a_question(library: Path) -> None:
    r = cli(library, "ask", "- How many days of annual leave do I get?", "--no-answer")
    assert r.returncode == 0, r.stderr
    assert "No such option" not in r.stderr and "Passages:" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("question", ["type:pdf", "in:handbook.pdf since:2020", 'type:docx "" ?'])
def test_a_question_of_filters_only_is_not_walked(library: Path, question: str) -> None:
    r = cli(library, "ask", question)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "only filters" in r.stderr and "Path:" not in r.stdout, r.stdout + r.stderr


def test_chat_says_a_filters_only_question_is_not_asked(library: Path) -> None:
    r = cli(library, "chat", stdin="type:pdf\n/quit\n")
    assert r.returncode == 0, r.stderr
    assert "only filters" in r.stderr, r.stderr
    with Store(library) as store:
        assert not ConversationStore(store).list()


def test_a_1mb_question_through_chat_is_stored_clipped_with_a_note(library: Path, tmp_path: Path) -> None:
    db = tmp_path / library.name
    for p in library.parent.iterdir():
        if p.name.startswith(library.name) and not p.name.endswith(".lock"):
            if p.is_dir():  # the snapshot folder kept beside the library
                shutil.copytree(p, tmp_path / p.name)
            else:
                shutil.copy(p, tmp_path / p.name)
    question = "How many days of annual leave do I get? " + "leave " * 170_000
    r = cli(db, "chat", stdin=question + "\n/quit\n")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Note: The question was" in r.stderr and "were used" in r.stderr, r.stderr[-2000:]
    with Store(db) as store:
        convs = ConversationStore(store)
        stored = [t.question for s in convs.list() for t in convs.get(s.id).turns]
    assert len(stored) == 1 and len(stored[0]) < 100_000, [len(q) for q in stored]
