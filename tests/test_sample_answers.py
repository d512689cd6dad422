"""Every question of resources/sample_questions.jsonl answered through the CLI with the real bundled models.

The sample library is ingested by ``shelfwise ingest`` into a temporary database; ``shelfwise eval
resources/sample_questions.jsonl --answers --no-generate`` then answers each question with the real walk and the
real embedder, and writes every answer beside its report. Each shown answer must hold its gold answer: the gold
contained as whole words, or, for the sample's free-text golds ("09:00 at reception" against "Come to reception
at 09:00"), every number, date and time of the gold and half its other words (``fact_match``). No shown answer may
hold a number or date its cited passages lack. The window is checked in tests/test_gui_window.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shelfwise.core.evaluation.answer_modes import fact_match
from shelfwise.resources import path as resource_path

pytestmark = pytest.mark.model

QUESTIONS = [json.loads(line) for line in resource_path("sample_questions.jsonl").read_text().splitlines() if line]


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "shelfwise"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=1800)


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> list[dict]:
    folder = tmp_path_factory.mktemp("sample-answers")
    db = folder / "sample.db"
    env = dict(os.environ)
    env.setdefault("SHELFWISE_HOME", str(Path.home() / ".cache" / "shelfwise-test-home"))
    r = _run(["--db", str(db), "ingest", str(resource_path("sample"))], env)
    assert r.returncode == 0, r.stderr[-2000:]
    r = _run(["--db", str(db), "eval", str(resource_path("sample_questions.jsonl")), "--answers", "--no-generate",
              "--methods", "navigation", "--no-sweep", "--out", str(folder / "reports")], env)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads((folder / "reports" / "answers-sample_questions-all.json").read_text())["rows"]


@pytest.mark.parametrize("n", range(len(QUESTIONS)), ids=[q["question"][:40] for q in QUESTIONS])
def test_each_sample_question_is_answered_with_its_gold(rows: list[dict], n: int) -> None:
    row, q = rows[n], QUESTIONS[n]
    assert row["gold"] == [q["answer"]] and row["found"]
    shown = row["texts"]["shown"]
    assert fact_match(shown, [q["answer"]]), f"{q['question']!r}: gold {q['answer']!r}, shown {shown!r}"
    assert row["violations"]["shown"] == []  # no number or date that its cited passages lack
