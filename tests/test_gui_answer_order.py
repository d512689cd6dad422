"""The window shows what the CLI shows, in the same order (issue 48): the value asked for, large; the sentence it is
read from, highlighted in the preview; then the model's text with the exact checks it passed, or why it is not
shown. The real window offscreen on a small library of real files (real SQLite, the real MiniLM encoder); the answer
model is the scripted stand-in of tests/test_answer_rules.py (what is done with its text is under test)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from PySide6.QtCore import QSettings, Qt

from shelfwise.app.cli.main import main
from shelfwise.app.gui.window import MainWindow
from shelfwise.core.models import factory
from shelfwise.core.models.fake import FakeBackend
from shelfwise.core.settings import Settings
from tests.test_answer_rules import DOCS, Writes

pytestmark = [pytest.mark.gui]


@pytest.fixture
def window(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text)
    monkeypatch.setattr(factory, "make_backend", lambda settings: FakeBackend())
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "lib.db"), "ingest", str(docs)])
    assert result.exit_code == 0, result.output
    w = MainWindow(Settings(db_path=tmp_path / "lib.db", embedder_path="minilm"),
                   QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    w.resize(1200, 800)
    w.show()
    qtbot.addWidget(w)
    yield w
    w.shutdown()


def ask(qtbot, window: MainWindow, question: str, reply: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(factory, "make_backend", lambda settings: Writes(reply))
    window.answer_view.question.setText(question)
    with qtbot.waitSignal(window.query_finished, timeout=600_000):
        qtbot.mouseClick(window.answer_view.ask_button, Qt.MouseButton.LeftButton)
    return window.session.last_answer


def test_value_then_sentence_then_the_checked_text(qtbot, window: MainWindow, monkeypatch) -> None:
    reply = "Revenue was EUR 102000 [1]. Costs went to rent and salaries [1]."
    answer = ask(qtbot, window, "What was the revenue in 2025?", reply, monkeypatch)
    assert answer is not None and answer.short is not None and answer.short.text == "EUR 102,000"
    shown = window.answer_view.browser.toPlainText()
    value, sentence = shown.index("EUR 102,000 ["), shown.index("Revenue in 2025 was EUR 102,000.")
    label = shown.index("The model's answer (checked: its numbers, dates and names are in the passages shown; "
                        "each of its sentences stands in one sentence of a passage; it gives a number, as the "
                        "question asks; its number is one the sentences found give)")
    assert value == 0 and value < sentence < label < shown.index("Costs went to rent and salaries")
    assert "x-large" in window.answer_view.browser.toHtml().split("EUR 102,000")[0][-400:]  # the value, large
    qtbot.waitUntil(lambda: window.preview.sentence == answer.sentences[0].text, timeout=10_000)
    assert window.preview.sentence_highlights > 0  # the sentence, highlighted in the preview


def test_a_reversed_yes_no_is_not_shown_in_the_window(qtbot, window: MainWindow, monkeypatch) -> None:
    answer = ask(qtbot, window, "Do I need the VPN on the office Wi-Fi?", "Yes, you do [1].", monkeypatch)
    assert answer is not None and answer.generated == "" and answer.generated_raw
    shown = window.answer_view.browser.toPlainText()
    assert shown.startswith("No [") and "does not need the VPN" in shown
    assert "Yes, you do" not in shown and "it says yes where the deciding sentence [1] says no" in shown


def test_not_found_offers_the_nearest_passages_as_related(qtbot, window: MainWindow, monkeypatch) -> None:
    answer = ask(qtbot, window, "Who won the football world cup in 1998?", "unused", monkeypatch)
    assert answer is not None and not answer.found and answer.short is None
    assert window.answer_view.browser.toPlainText().startswith("Not found in your documents.")
    assert window.answer_view.sources_title.text() == "Related passages (nearest; they do not answer it)"
    assert window.answer_view.sources.count() >= 1
    ask(qtbot, window, "What was the revenue in 2025?", "unused", monkeypatch)
    assert window.answer_view.sources_title.text() == "Sources"
