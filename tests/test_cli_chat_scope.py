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
