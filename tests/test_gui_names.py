"""Issue 50, the window: names shown as the command line shows them. The real window, offscreen, on a library made
through the real CLI with the real models: file names and headings holding bidi controls (U+202E, U+200F) and a C1
control (U+0085), and an encoder GGUF whose file name is markup (``<font size=7 color=red>``), which the library
stores and every window opened on it showed under the library as rich text. Every label that shows a name is plain
text, and the sources list, the walk tree, the library tree and the preview header show controls escaped
(``\\u202e``), as ``app/cli/shown.py`` prints them. A symbolic link loop dropped on the library is ingested as the
failed file it is (``Path.resolve()`` raised RuntimeError in the drop)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QLabel, QTreeWidget

from shelfwise.app.gui.window import MainWindow
from shelfwise.core.settings import Settings
from tests.cli_sample import run_shelfwise
from tests.test_gui_window import INGEST_TIMEOUT, ask_in_window, copy_library, pump_until

pytestmark = [pytest.mark.gui, pytest.mark.model]

RAW = ("\u202e", "\u200f", "\x85")  # what a name must not carry into the window unescaped
HEADING = "Visitors \u202egnp.exe \x85 parking"
ENCODER = "<font size=7 color=red>BIG.gguf"


def raw(text: str) -> bool:
    return any(ch in text for ch in RAW)


def tree_texts(tree: QTreeWidget) -> list[str]:
    out, stack = [], [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    while stack:
        item = stack.pop()
        if item is None:
            continue
        out += [item.text(c) for c in range(tree.columnCount())]
        stack += [item.child(i) for i in range(item.childCount())]
    return out


@pytest.fixture(scope="module")
def hostile_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("names")
    files = root / "files"
    files.mkdir()
    (files / "visitors\u202egnp.md").write_text(f"# {HEADING}\n\nVisitors park on level two of the garage.\n",
                                                encoding="utf-8")
    (files / "parking\x85\u200fnotes.md").write_text("# Staff parking\n\nStaff park on level three.\n",
                                                     encoding="utf-8")
    from shelfwise.core.paths import models_dir

    encoder = root / ENCODER
    shutil.copy(models_dir() / "all-MiniLM-L6-v2-q8_0.gguf", encoder)
    db = root / "library.db"
    r = run_shelfwise(db, ["--embedder", str(encoder), "ingest", str(files)])
    assert r.returncode == 0, r.stdout[-2000:]
    return db


@pytest.fixture
def window(qtbot, qapp, tmp_path: Path, hostile_library: Path) -> Iterator[MainWindow]:
    db = copy_library(hostile_library, tmp_path / "library.db")  # a test may add to it
    w = MainWindow(Settings(db_path=db), QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    w.resize(1400, 900)
    w.show()
    qtbot.addWidget(w)
    yield w
    w.shutdown()


def test_the_encoders_file_name_is_plain_text_under_the_library(window: MainWindow) -> None:
    label = window.encoder_bar.label
    assert ENCODER in label.text() and label.textFormat() == Qt.TextFormat.PlainText


def test_names_with_controls_are_escaped_in_sources_walk_library_and_preview(qtbot, window: MainWindow) -> None:
    answer = ask_in_window(qtbot, window, "Where do visitors park?")
    assert answer is not None and answer.citations
    sources = window.answer_view.sources
    texts = [sources.item(i).text() for i in range(sources.count())]
    assert texts and not any(raw(t) for t in texts) and any("\\u202e" in t for t in texts), texts
    walk = tree_texts(window.walk.tree)
    assert not any(raw(t) for t in walk) and any("Visitors \\u202egnp.exe \\x85 parking" in t for t in walk), walk
    for i in range(sources.count()):  # each source in the preview, as a user clicks through them
        qtbot.mouseClick(sources.viewport(), Qt.MouseButton.LeftButton,
                         pos=sources.visualItemRect(sources.item(i)).center())
        header = window.preview.header
        assert header.textFormat() == Qt.TextFormat.PlainText and not raw(header.text()), header.text()
    assert "\\u202e" in window.preview.header.text() or "\\x85" in window.preview.header.text()
    names = [item.text(0) for item in window.library.document_items()]
    assert len(names) == 2 and not any(raw(n) for n in names) and any("\\u202e" in n for n in names), names
    shown_as_names = [w for w in window.findChildren(QLabel) if raw(w.text())]
    assert not shown_as_names, [w.text() for w in shown_as_names]


def test_a_symlink_loop_dropped_on_the_library_is_a_failed_file(qtbot, window: MainWindow, tmp_path: Path) -> None:
    loop = tmp_path / "loop.md"
    loop.symlink_to("loop.md")
    tree = window.library.tree
    top = tree.topLevelItem(0)  # the collection: the drop goes there without asking which
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(loop))])
    event = QDropEvent(QPointF(tree.visualItemRect(top).center()), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    reports: list[object] = []
    window.ingest_finished.connect(reports.append)
    with qtbot.captureExceptions() as raised:  # what the drop's slot raises (Qt prints it and goes on)
        tree.dropEvent(event)
    assert not raised, [str(e[1]) for e in raised]
    pump_until(lambda: reports, INGEST_TIMEOUT)
    [report] = reports
    failed = [r for r in report.results if r.path.endswith("loop.md")]  # type: ignore[attr-defined]
    assert failed and failed[0].status == "error" and "symbolic link loop" in failed[0].message, report
    assert "failed" in window.statusBar().currentMessage(), window.statusBar().currentMessage()
