"""The window's Markdown exports are written whole or not at all (issue 50): a write that fails at the end (the
disk fills as the file is flushed to it) keeps the old file. The real window, offscreen (pytest-qt)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from shelfwise.app.gui.window import MainWindow
from shelfwise.core.settings import Settings

pytestmark = pytest.mark.gui


def test_a_failed_answer_export_keeps_the_old_file(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    window = MainWindow(Settings(db_path=tmp_path / "lib.db"),
                        QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    monkeypatch.setattr(window.session, "export_markdown", lambda: "# A new answer\n\nIts text.\n")
    target = tmp_path / "answer.md"
    target.write_text("# The answer exported yesterday\n", encoding="utf-8")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        window.export_markdown(target)
    # (before, the file was written in place: a full disk left it cut short)
    assert target.read_text(encoding="utf-8") == "# The answer exported yesterday\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    monkeypatch.undo()
    monkeypatch.setattr(window.session, "export_markdown", lambda: "# A new answer\n\nIts text.\n")
    assert window.export_markdown(target).read_text(encoding="utf-8") == "# A new answer\n\nIts text.\n"
