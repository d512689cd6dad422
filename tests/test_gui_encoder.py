"""The window names the library's sentence encoder and switches it after showing what the switch takes (measured),
with the real encoders, offscreen."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QMessageBox

from shelfwise.app.gui.window import MainWindow
from shelfwise.core.indexing.encoder import META_KEY, name_of_model_id
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store.db import Store

pytestmark = [pytest.mark.gui, pytest.mark.model]


def test_the_window_switches_a_minilm_library_to_embeddinggemma_after_showing_the_time(
        qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embeddinggemma_model: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "urlaub.md").write_text("# Urlaub\n\nMitarbeiter bekommen 27 Tage Urlaub im Jahr.\n\n## Antrag\n\n"
                                    "Urlaub wird im Portal beantragt.\n")
    db = tmp_path / "lib.db"
    with Shelf(Settings(db_path=db, embedder_path="minilm", use_calibration=False)) as shelf:
        shelf.ingest([docs], "default")
    asked: list[str] = []

    def yes(_parent: object, _title: str, text: str, *a: object) -> QMessageBox.StandardButton:
        asked.append(text)
        return QMessageBox.StandardButton.Yes

    monkeypatch.setattr(QMessageBox, "question", yes)
    window = MainWindow(Settings(db_path=db), QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    bar = window.encoder_bar
    assert bar.label.text() == "Encoder: all-MiniLM-L6-v2 (faster, English only)"
    assert bar.switch_button.text() == "Switch to EmbeddingGemma-300M…" and bar.switch_button.isEnabled()
    with qtbot.waitSignal(window.ingest_finished, timeout=600_000):
        qtbot.mouseClick(bar.switch_button, Qt.MouseButton.LeftButton)
    est = window.last_estimate
    assert est.encoder == "embeddinggemma" and est.texts > 0 and est.tokens > est.texts and est.seconds > 0
    assert len(asked) == 1 and "Switch this library to EmbeddingGemma-300M" in asked[0] and "about " in asked[0]
    assert bar.label.text().startswith("Encoder: EmbeddingGemma-300M")
    assert bar.switch_button.text() == "Switch to all-MiniLM-L6-v2…"
    window.shutdown()
    with Store(db) as store:
        assert store.get_meta(META_KEY) == "embeddinggemma"
        passages = [n.id for n in store.iter_nodes(("passage",))]
        eg = [m for m in store.stats().embeddings_by_model if name_of_model_id(m) == "embeddinggemma"]
        assert len(eg) == 1 and not store.nodes_missing_embedding(eg[0], kinds=["passage"])
        assert passages
