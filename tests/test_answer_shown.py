"""What a person reads first, through the CLI on the bundled sample (real SQLite, the real bundled models; the
encoder is MiniLM as in the other tests): the value asked for, then the sentence it is read from, the same in the
text and in ``ask --json`` (issue 48). German and French questions with the default encoder:
tests/test_sample_answers.py. The rules themselves: tests/test_short_answer.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.model


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "shelfwise"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=900)


@pytest.fixture(scope="module")
def sample_db(sample_copy) -> tuple[Path, dict[str, str]]:
    """The sample as ``shelfwise ingest`` made it (a copy of the session's: tests/conftest.py)."""
    return sample_copy("shown").db, dict(os.environ)


def ask_json(sample_db: tuple[Path, dict[str, str]], question: str, *more: str) -> dict:
    db, env = sample_db
    r = _run(["--db", str(db), "ask", question, "--json", *more], env)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def test_the_value_asked_for_comes_first_with_its_citation(sample_db) -> None:
    out = ask_json(sample_db, "How much is the one-time home office allowance?", "--no-generate")
    short = out["short_answer"]
    assert short["text"] == "EUR 600" and short["kind"] == "money"
    sentence = out["sentences"][0]["text"]
    assert out["answer"].startswith(f"EUR 600 [{short['number']}]\n") and sentence in out["answer"]
    cited = next(c for c in out["citations"] if c["number"] == short["number"])
    assert cited["text"][short["start"]:short["end"]] == "EUR 600"  # a span of the cited passage, not new words
    db, env = sample_db
    r = _run(["--db", str(db), "ask", "How much is the one-time home office allowance?", "--no-generate"], env)
    lines = r.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("Answer: "))
    assert lines[first] == f"Answer: EUR 600 [{short['number']}]"
    assert lines[first + 1].startswith("In the sources: ") and "EUR 600" in lines[first + 1]


def test_a_yes_no_question_is_answered_by_the_deciding_sentence(sample_db) -> None:
    out = ask_json(sample_db, "Do I need the VPN on the office Wi-Fi?", "--no-generate")
    short = out["short_answer"]
    assert short["kind"] == "yes_no" and short["text"] == "No", out["answer"]
    assert "does not need the VPN" in short["sentence"] and out["answer"].startswith("No: ")
    db, env = sample_db
    r = _run(["--db", str(db), "ask", "Do I need the VPN on the office Wi-Fi?", "--no-generate"], env)
    assert "Answer: No: " in r.stdout and "does not need the VPN" in r.stdout


def test_a_question_without_a_value_shows_the_sentence_first(sample_db) -> None:
    out = ask_json(sample_db, "How do you report a suspicious email?", "--no-generate")
    assert out["found"] and out["short_answer"] is None
    assert out["answer"].startswith(" ".join(out["sentences"][0]["text"].split())[:40])  # the sentence first
    assert "Report Phish" in out["answer"] or "phish@" in out["answer"]
