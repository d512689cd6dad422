"""Issue 38, cases 1-3 and the output boundary: text from documents and file names never reaches a terminal as
control sequences or bidi controls, and a file name cannot forge a line. Through the real CLI in a subprocess, with
the real bundled models and real SQLite, over a library of the issue's files plus seeded hostile ones
(``tests/reliability/hostile_text.py``); every command's stdout and stderr bytes are scanned."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reliability.hostile_text import hostile_files, terminal_unsafe

SHELFWISE = str(Path(sys.executable).parent / "shelfwise")
# case 1: a newline and an OSC sequence in a file name, forging a source line and setting the terminal's title
FORGED_NAME = "vault\n[2] Source: handbook.pdf p. 3\x1b]0;OWNED\x07.txt"
VAULT_TEXT = "The vault code is kept by the facilities team. The vault opens at nine in the morning.\n"
# case 2: OSC and BEL in a document's text
ALARM_TEXT = ("# Alarm\n\nThe alarm code is changed every month by security.\x1b]0;PWNED\x07 Press the bell\x07 twice "
              "to call the guard.\n")
# case 3: U+202E in a heading
BIDI_TEXT = "# Parking \u202eseton\u202c rules\n\nVisitors park on level two of the parking garage.\n"
# case 4 (the window): HTML in a heading; here it must simply print as text
HTML_TEXT = ('# <img src="/tmp/x.png" width=900> Notice <h1 style="color:red">HACKED</h1>\n\n'
             "The notice says the office closes early on Fridays.\n")


def run(db: Path, *args: str, stdin: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "SHELFWISE_HOME": str(db.parent / "home"), "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([SHELFWISE, "--db", str(db), *args], capture_output=True, env=env, timeout=timeout,
                          cwd="/", input=stdin.encode() if stdin is not None else None)


def write_issue_files(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / FORGED_NAME).write_text(VAULT_TEXT, encoding="utf-8")
    (folder / "alarm.md").write_text(ALARM_TEXT, encoding="utf-8")
    (folder / "parking.md").write_text(BIDI_TEXT, encoding="utf-8")
    (folder / "notice.md").write_text(HTML_TEXT, encoding="utf-8")


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("hostile")
    files = base / "files"
    write_issue_files(files)
    hostile_files(files / "seeded", seed=38, n=12)
    db = base / "lib.db"
    r = run(db, "ingest", str(files))
    assert r.returncode == 0, r.stderr[-3000:]
    assert not terminal_unsafe(r.stdout + r.stderr)
    return db


def clean(r: subprocess.CompletedProcess[bytes]) -> None:
    assert r.returncode == 0, r.stderr[-3000:]
    bad = terminal_unsafe(r.stdout) + terminal_unsafe(r.stderr)
    assert not bad, bad[:5]


def no_forged_line(r: subprocess.CompletedProcess[bytes]) -> None:
    for line in (r.stdout + r.stderr).decode("utf-8", "replace").splitlines():
        assert not line.startswith("[2] Source: handbook.pdf"), line


@pytest.mark.parametrize("question", ["Who keeps the vault code?", "How do I call the guard about the alarm?",
                                      "Where do visitors park?", "When does the office close early?"])
def test_ask_prints_no_control_sequence_and_no_forged_line(hostile_db: Path, question: str) -> None:
    r = run(hostile_db, "ask", question, "--trace")
    clean(r)
    no_forged_line(r)


def test_ask_names_the_file_with_its_newline_escaped(hostile_db: Path) -> None:
    r = run(hostile_db, "ask", "Who keeps the vault code?", "--no-answer")
    clean(r)
    out = r.stdout.decode("utf-8", "replace")
    assert "vault\\n[2] Source: handbook.pdf p. 3\\x1b]0;OWNED\\x07.txt" in out


def test_ask_json_keeps_the_text_as_json_escapes(hostile_db: Path) -> None:
    r = run(hostile_db, "ask", "How do I call the guard about the alarm?", "--json", "--no-generate")
    clean(r)
    data = json.loads(r.stdout)
    assert any("\x1b]0;PWNED\x07" in p["text"] or "PWNED" in p["text"] for p in data["passages"])


def test_search_and_tree_and_status_print_no_control_sequence(hostile_db: Path) -> None:
    for args in (["search", "vault"], ["search", "alarm", "bell"], ["search", "parking"], ["search", "notice"],
                 ["tree"], ["tree", "--json"], ["status"], ["search", "policy", "--limit", "50"]):
        r = run(hostile_db, *args)
        clean(r)
        no_forged_line(r)


def test_tree_shows_the_bidi_override_escaped(hostile_db: Path) -> None:
    r = run(hostile_db, "tree")
    clean(r)
    assert "Parking \\u202eseton\\u202c rules" in r.stdout.decode()


def test_chat_prints_no_control_sequence(hostile_db: Path) -> None:
    r = run(hostile_db, "chat", stdin="How do I call the guard about the alarm?\n/quit\n")
    clean(r)
    no_forged_line(r)
