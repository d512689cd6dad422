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


@pytest.mark.parametrize("ends_with_command", [True, False])
def test_a_command_shelf_frees_its_models_unless_the_process_ends_with_it(
        sample: Any, monkeypatch: pytest.MonkeyPatch, ends_with_command: bool) -> None:
    """The program running ``ask`` (it ends with ``end_process`` right after) leaves the encoder loaded for the kernel
    to free and still closes its library cleanly; anywhere else (click's runner, the window) the models are freed."""
    from shelfwise.app.cli import group
    from shelfwise.core.settings import Settings

    monkeypatch.setattr(group, "_ENDS_WITH_COMMAND", [ends_with_command])
    monkeypatch.setattr(group, "_LEFT_FOR_EXIT", [])
    record = closed_record(sample.db)
    record.unlink(missing_ok=True)
    with group.command_shelf(Settings(db_path=sample.db)) as shelf:
        embedder = shelf.models.embedder
        assert embedder.embed_query("annual leave").shape[-1] == embedder.dim
    assert record.is_file()  # the library closed cleanly either way
    if ends_with_command:
        assert group._LEFT_FOR_EXIT == [shelf]
        assert embedder.embed_query("dress code").shape[-1] == embedder.dim  # still loaded, not freed
    else:
        assert group._LEFT_FOR_EXIT == []
        assert embedder._model is None  # freed
