"""The CLI's progress lines when stderr is not a terminal (a pipe, a log file): app/cli/progress.py."""

from __future__ import annotations

import io

import pytest

from shelfwise.app.cli import progress
from shelfwise.app.cli.progress import IndexLine
from shelfwise.core.indexing.finish import IndexProgress


def test_a_long_tenth_of_the_index_still_shows_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 38: embedding 20,000 passages printed a line every 10% only, so the first ask after a large ingest sat
    at "0%" for minutes; a line now comes at least every ``heartbeat`` seconds while a tenth takes longer."""
    clock = [1000.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    line = IndexLine(out)
    total = 20_000
    for done in range(0, 1_900, 32):  # less than a tenth, over about five minutes
        line(IndexProgress("embedding", done, total, eta_seconds=None))
        clock[0] += 5.0
    lines = out.getvalue().splitlines()
    assert len(lines) >= 25, lines
    assert lines[0].startswith("Indexing: embedding 0/20000") and lines[-1].startswith("Indexing: embedding 18")


def test_steps_still_print_at_once_and_quiet_steps_do_not_repeat(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [0.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    line = IndexLine(out)
    for done in range(0, 1000, 10):  # each tenth of 1,000 at once, no time passing
        line(IndexProgress("embedding", done, 1000))
    assert len(out.getvalue().splitlines()) == 10
