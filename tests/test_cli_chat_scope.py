"""``shelfwise chat`` with an inline filter that names nothing (``in:nope.pdf``), typed as the first line and
after a line of only filters: the chat says what is wrong with the filter and goes on to the next line, as
``ask`` does. Before, the turn read the filter again and the chat ended in a ``ScopeError`` traceback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from shelfwise.app.cli.main import main
from tests.cli_sample import TRACEBACK, SampleLibrary

pytestmark = pytest.mark.model


def test_chat_says_a_filter_names_nothing_and_goes_on(sample_library: SampleLibrary) -> None:
    lines = "in:nope.pdf leave?\nin:handbook.pdf\nin:nope.pdf leave?\n/list\n/quit\n"
    r = CliRunner().invoke(main, ["--db", str(sample_library.db), "chat"], input=lines)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 0 and TRACEBACK not in r.output, r.output[-3000:]
    told = "in:nope.pdf in the question: no such file or folder"
    assert r.stderr.count(told) == 2, r.stderr
    assert "Nothing was searched." in r.stderr
    assert "Answer:" not in r.stdout  # nothing was asked of the library


def test_the_chat_history_is_one_chats_and_bounded(sample_library: SampleLibrary, tmp_path, monkeypatch) -> None:
    # readline's read_history_file appends: a process that ran several chats (the window's tests, CliRunner) doubled
    # the history each time and wrote it back; the test home's file reached 1.4 GB and readline crashed writing it
    from shelfwise.app.cli import chat

    history = tmp_path / "chat_history"
    history.write_text("What is the leave policy?\n/new\n", encoding="utf-8")
    monkeypatch.setattr(chat, "_history_file", lambda: history)
    for _ in range(3):
        r = CliRunner().invoke(main, ["--db", str(sample_library.db), "chat"], input="/quit\n")
        assert r.exit_code == 0, r.output[-2000:]
    assert history.read_text(encoding="utf-8").splitlines() == ["What is the leave policy?", "/new"]
    history.write_text("a line typed once\n" * 100_000, encoding="utf-8")  # 1.8 MB: past what a chat keeps
    r = CliRunner().invoke(main, ["--db", str(sample_library.db), "chat"], input="/quit\n")
    assert r.exit_code == 0, r.output[-2000:]
    assert len(history.read_text(encoding="utf-8").splitlines()) <= chat.HISTORY_LINES
