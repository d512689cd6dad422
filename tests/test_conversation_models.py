"""Conversations with the real bundled models, through the command line: ``shelfwise chat`` driven through a
pseudo-terminal (the pty module), a conversation that survives kill -9 between turns, ``ask --conversation``
with ``--json``, and bad input (a 100 kB follow-up, an empty turn, an id that does not exist, a cited document
removed from the library). One sample library per module, a copy of the session's."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shelfwise.core.conversation.storage import ConversationStore
from shelfwise.core.store.db import Store

pytestmark = pytest.mark.model

FIRST = "How many days of annual leave do employees get?"
FOLLOW = "and how do I request it?"
EXE = Path(sys.executable).with_name("shelfwise")
TIMEOUT = 900.0


@pytest.fixture(scope="module")
def library(gemma_sample_copy) -> Path:
    """The sample ingested into "default" with the encoder a new library gets, EmbeddingGemma (a copy of the
    session's: tests/conftest.py)."""
    return gemma_sample_copy("conv-cli").db


def run(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), "--db", str(db), *args], capture_output=True, text=True, timeout=TIMEOUT,
                          env=dict(os.environ), check=False)


class Terminal:
    """A process on a pseudo-terminal: ``send`` a line as typed, ``expect`` a pattern in what it printed."""

    def __init__(self, *args: str) -> None:
        self.master, slave = pty.openpty()
        env = dict(os.environ, TERM="dumb", COLUMNS="200")
        self.proc = subprocess.Popen(list(args), stdin=slave, stdout=slave, stderr=slave, env=env,
                                     start_new_session=True)
        os.close(slave)
        self.out = ""

    def expect(self, pattern: str, timeout: float = TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        start = len(self.out)
        while not re.search(pattern, self.out[start:]):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{pattern!r} not seen; the terminal showed:\n{self.out[-3000:]}")
            ready, _, _ = select.select([self.master], [], [], 0.5)
            if ready:
                try:
                    self.out += os.read(self.master, 65536).decode("utf-8", "replace")
                except OSError:  # the process ended
                    if not re.search(pattern, self.out[start:]):
                        raise TimeoutError(f"{pattern!r} not seen before exit:\n{self.out[-3000:]}") from None
        return self.out[start:]

    def send(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=60)
        finally:
            os.close(self.master)


def test_chat_through_a_terminal_follows_up_exports_and_quits(library: Path, tmp_path: Path) -> None:
    term = Terminal(str(EXE), "--db", str(library), "chat")
    term.expect(r"you> ")
    term.send(FIRST)
    shown = term.expect(r"you> ")
    assert "27 days" in shown and "follow-up" not in shown
    term.send(FOLLOW)
    shown = term.expect(r"you> ")
    assert "(read as a follow-up: How many days of annual leave do employees get? and how do I request it?)" in shown
    assert "LeaveDesk" in shown and "Requesting leave" in shown
    out = tmp_path / "chat.md"
    term.send(f"/export {out}")
    term.expect(r"Exported 2 turn\(s\)")
    term.send("/new")
    term.expect(r"New conversation")
    term.send("/quit")
    assert term.close() == 0
    md = out.read_text(encoding="utf-8")
    assert f"## 2. {FOLLOW}" in md and "handbook.pdf, p. 5, 3 Leave > 3.2 Requesting leave" in md


def test_a_conversation_survives_kill_9_between_turns_and_continues(library: Path) -> None:
    term = Terminal(str(EXE), "--db", str(library), "chat")
    term.expect(r"you> ")
    term.send(FIRST)
    term.expect(r"you> ")
    os.killpg(term.proc.pid, signal.SIGKILL)  # between turns: the first is stored, the process gone
    assert term.close() == -signal.SIGKILL
    store = Store(library)
    convs = ConversationStore(store)
    latest = convs.list()[0]
    assert latest.turns == 1 and latest.title == FIRST
    store.close()
    r = run(library, "ask", "--conversation", str(latest.id), FOLLOW, "--json", "--no-generate")
    assert r.returncode == 0, r.stderr[-2000:]
    data = json.loads(r.stdout)
    reading = data["conversation"]["reading"]
    assert data["conversation"]["id"] == latest.id and data["conversation"]["turn"] == 2
    assert reading["mode"] == "followup" and reading["query"] != FOLLOW and reading["why"]
    assert any("LeaveDesk" in c["text"] for c in data["citations"])
    # the query read with the turn before holds two questions' words: one question still, not split in two
    assert reading["query"].count("?") == 2 and data["steps"] == [], (reading["query"], data["steps"])


def test_a_conversation_survives_kill_9_during_a_turn(library: Path, tmp_path: Path) -> None:
    db = tmp_path / "copy.db"
    src = Store(library)
    src.conn.execute(f"VACUUM INTO '{db}'")
    src.close()
    term = Terminal(str(EXE), "--db", str(db), "chat")
    term.expect(r"you> ")
    term.send(FIRST)
    term.expect(r"you> ")
    term.send(FOLLOW)
    term.expect(r"read as a follow-up")  # said before the walk starts: the second turn is under way
    os.killpg(term.proc.pid, signal.SIGKILL)
    assert term.close() == -signal.SIGKILL
    store = Store(db)
    assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    convs = ConversationStore(store)
    latest = convs.list()[0]
    conv = convs.get(latest.id)
    assert [t.question for t in conv.turns] == [FIRST] and conv.turns[0].found  # the finished turn, nothing half
    store.close()
    r = run(db, "ask", "--conversation", str(latest.id), FOLLOW, "--json", "--no-generate")
    assert r.returncode == 0, r.stderr[-2000:]
    data = json.loads(r.stdout)
    assert data["conversation"]["turn"] == 2 and data["conversation"]["reading"]["mode"] == "followup"
    assert any("LeaveDesk" in c["text"] for c in data["citations"])


def test_bad_input_to_a_conversation(library: Path, tmp_path: Path) -> None:
    db = tmp_path / "copy.db"
    src = Store(library)
    src.conn.execute(f"VACUUM INTO '{db}'")
    src.close()
    r = run(db, "ask", "--conversation", "new", "What is the mileage rate for business trips by car?",
            "--no-generate")
    assert r.returncode == 0, r.stderr[-2000:]
    cid = int(re.search(r"conversation (\d+), turn 1", r.stderr).group(1))  # type: ignore[union-attr]
    # a conversation id that does not exist, and one that is not a number
    r = run(db, "ask", "--conversation", "999999", FOLLOW)
    assert r.returncode == 1 and "no conversation 999999" in r.stderr and "Traceback" not in r.stderr
    r = run(db, "ask", "--conversation", "abc", FOLLOW)
    assert r.returncode == 2 and "not a conversation id" in r.stderr
    # an empty turn: said, nothing stored
    r = run(db, "ask", "--conversation", str(cid), "   ")
    assert r.returncode == 2 and "question is empty" in r.stderr
    # a 100 kB follow-up: clipped, answered, stored
    big = "and what about parking and tolls? " + "x" * 100_000
    r = run(db, "ask", "--conversation", str(cid), big, "--json", "--no-generate")
    assert r.returncode == 0, r.stderr[-2000:]
    assert any("only its first" in n for n in json.loads(r.stdout)["notes"])
    # the cited document removed from the library: the citation says so, a follow-up still works
    store = Store(db)
    travel = next(d for d in store.documents() if d.path.endswith("travel-and-expenses.docx"))
    store.remove_document(travel.id)
    store.close()
    r = run(db, "chat", "--export", str(cid))
    assert r.returncode == 0 and "the cited document is no longer in the library" in r.stdout
    r = run(db, "ask", "--conversation", str(cid), "and who approves it?", "--json", "--no-generate")
    assert r.returncode == 0, r.stderr[-2000:]
    store = Store(db)
    conv = ConversationStore(store).get(cid)
    assert len(conv.turns) == 3  # the empty turn was not kept
    # the 100 kB follow-up is stored as it was read, clipped (issue 38: it was stored whole, with no note)
    assert conv.turns[1].question.startswith("and what about parking and tolls?")
    assert len(conv.turns[1].question) < len(big)
    store.close()
