"""A conversation in the real window with the real models, offscreen: ask, follow up, the follow-up's answer cites
the handbook's leave-request passage; the thread shows the first turn with its walk link; restart the window,
reopen the conversation, export it as Markdown with its citations; "ask it alone instead" replaces the follow-up.

Slow (real models on CPU): ``pytest -m gui``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt

from shelfwise.app.gui.window import MainWindow
from shelfwise.core.settings import Settings

pytestmark = [pytest.mark.gui, pytest.mark.model]

QUERY_TIMEOUT = 1200
FIRST = "How many days of annual leave do employees get?"
FOLLOW = "and how do I request it?"
REQUEST_PASSAGE = "All leave is requested in the LeaveDesk portal"


@pytest.fixture(scope="module")
def sample_db(sample_copy) -> Path:
    """The sample ingested with MiniLM into "default" (a copy of the session's: tests/conftest.py)."""
    return sample_copy("conv-sample").db


def make_window(db: Path, ui_ini: Path) -> MainWindow:
    w = MainWindow(Settings(db_path=db, answer_generate=False, embedder_path="minilm"),
                   QSettings(str(ui_ini), QSettings.Format.IniFormat))
    w.resize(1400, 900)
    w.show()
    return w


def ask(qtbot, window: MainWindow, question: str) -> None:
    window.answer_view.question.setText(question)
    with qtbot.waitSignal(window.query_finished, timeout=QUERY_TIMEOUT * 1000):
        qtbot.mouseClick(window.answer_view.ask_button, Qt.MouseButton.LeftButton)


@pytest.fixture
def db(tmp_path: Path, sample_db: Path) -> Path:
    out = tmp_path / "library.db"
    shutil.copy(sample_db, out)
    for suffix in ("-wal", "-shm"):
        if Path(str(sample_db) + suffix).exists():
            shutil.copy(Path(str(sample_db) + suffix), Path(str(out) + suffix))
    return out


@pytest.fixture
def window(qtbot, db: Path, tmp_path: Path) -> Iterator[MainWindow]:
    w = make_window(db, tmp_path / "ui.ini")
    qtbot.addWidget(w)
    yield w
    w.shutdown()


def test_follow_up_cites_the_leave_request_passage_and_the_conversation_survives_a_restart(
        qtbot, window: MainWindow, db: Path, tmp_path: Path) -> None:
    ask(qtbot, window, FIRST)
    first = window.session.last_answer
    assert first is not None and first.found
    assert not window.reading_bar.isVisible()  # a first question is not a follow-up
    ask(qtbot, window, FOLLOW)
    second = window.session.last_answer
    assert second is not None and second.found
    assert any(REQUEST_PASSAGE in c.hit.text for c in second.citations), [c.hit.text[:80] for c in second.citations]
    assert "LeaveDesk" in window.answer_view.browser.toPlainText()
    assert window.reading_bar.isVisible() and "follow-up" in window.reading_bar.label.text()
    turns = window.conversation.turns()
    assert [t.question for t in turns] == [FIRST, FOLLOW] and turns[1].reading.mode == "followup"
    assert window.thread_view.isVisible() and FIRST in window.thread_view.toPlainText()
    window.show_turn_walk(turns[0].position)  # the link under the first turn shows its walk again
    assert window.walk.tree.topLevelItemCount() > 0
    conv_id = window.conversation.conversation_id
    window.shutdown()

    again = make_window(db, tmp_path / "ui2.ini")
    qtbot.addWidget(again)
    try:
        listed = again.conversation.listing()
        assert [(s.id, s.turns) for s in listed] == [(conv_id, 2)]
        again.reopen_conversation(conv_id)
        text = again.thread_view.toPlainText()
        assert FIRST in text and FOLLOW in text and "LeaveDesk" in text
        out = again.export_conversation(tmp_path / "conversation.md")
        md = out.read_text(encoding="utf-8")
        assert f"## 2. {FOLLOW}" in md and "handbook.pdf, p. 5, 3 Leave > 3.2 Requesting leave" in md
        quotes = [line for line in md.splitlines() if line.lstrip().startswith("> ")]
        assert any(REQUEST_PASSAGE in q for q in quotes), quotes  # the quoted sentence under its citation
        ask(qtbot, again, "And how many days can I carry over?")  # continues the reopened conversation
        assert [t.position for t in again.conversation.turns()] == [0, 1, 2]
    finally:
        again.shutdown()


def test_ask_it_alone_instead_replaces_the_follow_up(qtbot, window: MainWindow) -> None:
    ask(qtbot, window, FIRST)
    ask(qtbot, window, FOLLOW)
    assert window.reading_bar.isVisible()
    with qtbot.waitSignal(window.query_finished, timeout=QUERY_TIMEOUT * 1000):
        qtbot.mouseClick(window.reading_bar.alone_button, Qt.MouseButton.LeftButton)
    turns = window.conversation.turns()
    assert [t.question for t in turns] == [FIRST, FOLLOW]
    assert turns[1].reading.mode == "alone" and turns[1].reading.query == FOLLOW
    stored = window.conversation.shelf.conversation(window.conversation.conversation_id)
    assert [t.reading.mode for t in stored.turns] == ["first", "alone"]
    window.new_conversation()  # Ctrl+N
    assert window.conversation.conversation_id == 0 and not window.thread_view.isVisible()
    ask(qtbot, window, FOLLOW)
    assert window.conversation.turns()[0].reading.mode == "first"
