"""Issue 38, case 4 and the window's half of the output boundary: no widget renders text from a document or a file
name as rich text. The real window, offscreen, with the real core and models: a library whose headings, passages
and file names hold HTML (a heading ``<img src=...> ... <h1 style=...>``) is added through the window, a question
is asked and its source opened in the preview; then every widget, tooltip and item of the window is walked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import Qt as QtGui_Qt
from PySide6.QtWidgets import QLabel, QListWidget, QTextEdit, QTreeWidget, QWidget

from shelfwise.app.gui.window import MainWindow
from shelfwise.core.settings import Settings
from tests.test_gui_window import INGEST_TIMEOUT, ask_in_window, pump_until

pytestmark = [pytest.mark.gui, pytest.mark.model]

HEADING = '<img src="/tmp/x.png" width=900> Notice <h1 style="color:red">HACKED</h1>'
# the documents' markup as written: in a rich-text widget it appears only when it was not escaped
MARKERS = ('<img src="/tmp/x.png"', '<h1 style="color:red">', '<a href="file:///etc/passwd">', "<table><tr>",
           "<b>bold")


def write_library(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notice.md").write_text(f"# {HEADING}\n\nThe notice says the office closes early on Fridays at "
                                      "three o'clock.\n", encoding="utf-8")
    (folder / "<b>bold name.md").write_text(
        "# Parking <a href=\"file:///etc/passwd\">open me</a>\n\nVisitors park on level two <table><tr><td>cell"
        "</td></tr></table> of the garage.\n", encoding="utf-8")


def renders_markup(text: str, rich: bool) -> bool:
    """Whether ``text`` shown in a widget that is ``rich`` (or decides by the text, as QLabel's AutoText and every
    tooltip do) would render a document's markup."""
    if not rich and not QtGui_Qt.mightBeRichText(text):
        return False
    return any(m in text for m in MARKERS)


def markup_widgets(root: QWidget) -> list[str]:
    """Every widget, tooltip and item under ``root`` that renders a document's raw markup as rich text."""
    found = []
    for w in [root, *root.findChildren(QWidget)]:
        name = f"{type(w).__name__}({w.objectName() or ''})"
        if isinstance(w, QLabel):
            fmt = w.textFormat()
            if fmt != Qt.TextFormat.PlainText and renders_markup(w.text(), fmt == Qt.TextFormat.RichText):
                found.append(f"{name} text: {w.text()[:120]}")
        if renders_markup(w.toolTip(), False):
            found.append(f"{name} tooltip: {w.toolTip()[:120]}")
        if isinstance(w, QTextEdit) and any(m in w.toHtml() for m in MARKERS):
            found.append(f"{name} html: {w.toHtml()[:120]}")
        if isinstance(w, QListWidget):
            for i in range(w.count()):
                item = w.item(i)
                if renders_markup(item.toolTip(), False):
                    found.append(f"{name} item tooltip: {item.toolTip()[:120]}")
        if isinstance(w, QTreeWidget):
            stack = [w.topLevelItem(i) for i in range(w.topLevelItemCount())]
            while stack:
                item = stack.pop()
                if item is None:
                    continue
                for col in range(w.columnCount()):
                    if renders_markup(item.toolTip(col), False):
                        found.append(f"{name} item tooltip: {item.toolTip(col)[:120]}")
                stack.extend(item.child(i) for i in range(item.childCount()))
    return found


@pytest.fixture
def window(qtbot, qapp, tmp_path: Path) -> Iterator[MainWindow]:
    files = tmp_path / "files"
    write_library(files)
    w = MainWindow(Settings(db_path=tmp_path / "library.db"),
                   QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    w.resize(1400, 900)
    w.show()
    qtbot.addWidget(w)
    reports: list[object] = []
    w.ingest_finished.connect(reports.append)
    w.library.add_paths([files], "Hostile")
    pump_until(lambda: reports, INGEST_TIMEOUT)
    yield w
    w.shutdown()


def test_a_heading_with_html_is_plain_text_in_the_preview_header(qtbot, window: MainWindow) -> None:
    answer = ask_in_window(qtbot, window, "When does the office close early?")
    assert answer is not None and answer.citations
    hit = next(c.hit for c in answer.citations if c.hit.path.endswith("notice.md"))
    window.preview.show_hit(hit)
    header = window.preview.header
    assert HEADING in header.text()  # shown as it is written
    assert header.textFormat() == Qt.TextFormat.PlainText
    assert not markup_widgets(window.preview)


def test_no_widget_of_the_window_renders_document_text_as_rich_text(qtbot, window: MainWindow) -> None:
    ask_in_window(qtbot, window, "Where do visitors park?")
    sources = window.answer_view.sources
    for i in range(sources.count()):  # every source in the preview, as a user clicks through them
        qtbot.mouseClick(sources.viewport(), Qt.MouseButton.LeftButton,
                         pos=sources.visualItemRect(sources.item(i)).center())
    for item in window.library.document_items():
        window.preview.show_document(item.data(0, Qt.ItemDataRole.UserRole + 1))
        assert not markup_widgets(window)
    assert not markup_widgets(window)


@pytest.mark.parametrize("what", ["another program's database", "a device"])
def test_the_window_on_a_library_it_cannot_open_says_why(qapp, qtbot, tmp_path: Path, what: str) -> None:
    """Issue 38: ``shelfwise-app`` on a library it cannot open exited with a traceback and no window."""
    import sqlite3

    from PySide6.QtWidgets import QMessageBox

    from shelfwise.app.gui.main import open_window

    if what == "a device":
        db = Path("/dev/null")
    else:
        db = tmp_path / "contacts.sqlite"
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE contacts (name TEXT)")
        conn.commit()
        conn.close()
    shown = open_window(Settings(db_path=db), QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    assert isinstance(shown, QMessageBox) and shown.isVisible()
    qtbot.addWidget(shown)
    assert shown.textFormat() == Qt.TextFormat.PlainText
    assert "--db FILE" in shown.text()
    assert ("not a Shelfwise library" if what != "a device" else "it is a device") in shown.text()
    shown.done(0)
