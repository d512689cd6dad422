"""The window starts loading its library's encoder when it opens (``app/gui/window.py``, the preload of
``core/models/encoders/preload.py`` that ``shelfwise ask`` uses), and its first question takes that model instead of
loading one: on a large library the load was most of the first question's wait (docs/scale.md, "Session 22"). The
real window offscreen, a copy of the sample library and its MiniLM encoder (real llama.cpp)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt

from shelfwise.app.gui.window import MainWindow
from shelfwise.core.models.encoders import preload
from shelfwise.core.settings import Settings

pytestmark = [pytest.mark.gui, pytest.mark.model]

TAKEN = "loaded while the program started is used"


def test_the_first_question_takes_the_encoder_the_window_loaded(  # type: ignore[no-untyped-def]
        qtbot, sample_copy: Callable[[str], Any], tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = sample_copy("gui-preload").db
    with caplog.at_level(logging.DEBUG, logger=preload.__name__):
        window = MainWindow(Settings(db_path=db, answer_generate=False, embedder_path="minilm"),
                            QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
        qtbot.addWidget(window)
        try:
            window.show()
            window.answer_view.question.setText("How many days of annual leave do employees get?")
            with qtbot.waitSignal(window.query_finished, timeout=600_000):
                qtbot.mouseClick(window.answer_view.ask_button, Qt.MouseButton.LeftButton)
            answer = window.session.last_answer
            assert answer is not None and answer.found
        finally:
            window.shutdown()
    assert TAKEN in caplog.text
