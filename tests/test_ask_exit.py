"""A question's process ends without the interpreter's teardown (``app/cli/group.py``, ``end_process``): what it
prints, its exit code and its library's clean-close record are as before. The real ``shelfwise`` program in a
subprocess on a copy of the sample library (MiniLM)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shelfwise.core.store.opening import closed_record
from tests.cli_sample import SHELFWISE, TRACEBACK, run_shelfwise


@pytest.fixture(scope="module")
def sample(sample_copy: Callable[[str], Any]) -> Any:
    return sample_copy("ask-exit")


def test_a_question_ends_with_its_whole_answer_and_a_clean_close(sample: Any) -> None:
    record = closed_record(sample.db)
    record.unlink(missing_ok=True)
    # through a pipe, so the answer must be flushed before the process ends
    done = subprocess.run([str(SHELFWISE), "--db", str(sample.db), "ask", "How many days of paid annual leave?",
                           "--no-generate", "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout)
    assert answer["found"] and "27" in json.dumps(answer)
    assert record.is_file()  # the library was closed cleanly before the process ended
    again = run_shelfwise(sample.db, ["-v", "ask", "What is the dress code?", "--no-generate"])
    assert again.returncode == 0 and TRACEBACK not in again.stdout
    assert "quick_check skipped" in again.stdout  # the record written by the first process was read


def test_an_ask_that_fails_keeps_its_exit_code(tmp_path: Path) -> None:
    done = run_shelfwise(tmp_path / "none.db", ["ask", "anything?"])
    assert done.returncode == 2
    assert "No library at" in done.stdout
