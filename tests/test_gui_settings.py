"""The window's settings through the real window, offscreen: the Settings dialog opened from the window, edited and
accepted writes the core's settings file (which ``shelfwise`` reads too), never QSettings, which keeps the window's
geometry only; the encoder it shows is the library's (``Shelf.library_encoder``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication

from shelfwise.app.gui.settings_dialog import SettingsDialog
from shelfwise.app.gui.window import MainWindow
from shelfwise.core.settings import Settings, load_settings, settings_path

pytestmark = [pytest.mark.gui]


def test_the_settings_dialog_writes_the_settings_file(qtbot, qapp, tmp_path: Path) -> None:
    ui = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    window = MainWindow(Settings(db_path=tmp_path / "library.db"), ui)
    qtbot.addWidget(window)
    window.show()
    seen: list[SettingsDialog] = []

    def edit() -> None:
        dialog = next(w for w in QApplication.topLevelWidgets() if isinstance(w, SettingsDialog) and w.isVisible())
        seen.append(dialog)
        dialog.threads.setValue(3)
        dialog.judge.setCurrentText("bundled")
        dialog.accept()

    try:
        assert window.library_encoder() == "embeddinggemma"  # a new library: the default encoder
        QTimer.singleShot(50, edit)
        window.settings_dialog()
        assert seen and seen[0].embedder.currentText() == "embeddinggemma"
        assert not seen[0].advanced.isVisible()  # the budgets stay folded away
        data = json.loads(settings_path().read_text(encoding="utf-8"))
        assert data["n_threads"] == 3 and data["judge"] == "bundled" and "db_path" not in data
        assert load_settings().settings.n_threads == 3 and window.settings.n_threads == 3
    finally:
        window.shutdown()
    assert not any(k.split("/")[0] in ("model", "search", "budgets") for k in ui.allKeys())
    assert "window/geometry" in ui.allKeys()
