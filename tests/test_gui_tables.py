"""A table answer in the real window with the real models, offscreen (issue 49): the sample's workbook questions
(a lookup, a count, an average) show the computed value in the preview above the table as a grid, the cells used
highlighted, the lookup's cell among them.

Slow (real models on CPU): ``pytest -m gui``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt

from shelfwise.app.gui.window import MainWindow
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from tests.cli_sample import SampleLibrary

pytestmark = [pytest.mark.gui, pytest.mark.model]

QUERY_TIMEOUT = 1200


@pytest.fixture(scope="module")
def sample_db(sample_copy: Callable[[str], SampleLibrary]) -> Path:
    """The sample ingested with MiniLM into "default" (a copy of the session's: tests/conftest.py)."""
    return sample_copy("tables-sample").db


def test_table_answers_show_the_table_as_a_grid(qtbot, sample_db: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window = MainWindow(Settings(db_path=sample_db, answer_generate=False, embedder_path="minilm"),
                        QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()

    def ask(question: str) -> None:
        window.answer_view.question.setText(question)
        with qtbot.waitSignal(window.query_finished, timeout=QUERY_TIMEOUT * 1000):
            qtbot.mouseClick(window.answer_view.ask_button, Qt.MouseButton.LeftButton)

    grid = window.preview.grid
    ask("What is the maximum salary for band L5?")
    assert window.preview.stack.currentWidget() is grid
    assert grid.value.text() == "102,000" and "L5" in grid.explanation.text()
    l5 = next(r for r in range(grid.model.rowCount()) if grid.model.item(r, 0).text() == "L5")
    assert (l5, 5) in grid.highlighted and grid.model.item(l5, 5).text() == "102,000"
    assert grid.model.headerData(5, Qt.Orientation.Horizontal) == "Maximum (EUR/year)"
    assert grid.model.headerData(l5, Qt.Orientation.Vertical) == "6"  # the sheet's own row number
    assert "Salary bands" in window.preview.header.text() and window.preview.open_button.isEnabled()
    ask("How many holidays does the Lisbon office have?")
    # each of the eight rows counted: its holiday's name and the office it was kept for
    assert grid.value.text() == "8" and len({r for r, _c in grid.highlighted}) == 8
    assert {grid.model.item(r, c).text() for r, c in grid.highlighted} >= {"Portugal Day", "Lisbon", "All offices"}
    # the answer pane says the operation once: the cited line below the value, not again in grey above it
    pane = window.answer_view.browser.toPlainText()
    assert pane.count(grid.explanation.text()) == 1, pane
    ask("What is the average midpoint salary of the bands?")
    assert grid.value.text() == "77,571.43" and {c for _r, c in grid.highlighted} == {4}
    window.grab().save(str(tmp_path / "table-grid.png"))
    window.shutdown()


def test_a_negated_filter_shows_its_rows_in_the_grid(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A count over the rows a key leaves out ("not played in Belgrade", a part of the City cells): the window
    shows the count above the grid and highlights the five rows counted, none of the Belgrade ones."""
    from tests.table_workbooks import write_matches

    db = tmp_path / "matches.db"
    with Shelf(Settings(db_path=db, embedder_path="minilm")) as shelf:
        shelf.ingest([write_matches(tmp_path / "docs" / "matches.xlsx").parent], "default")
    window = MainWindow(Settings(db_path=db, answer_generate=False, embedder_path="minilm"),
                        QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    window.answer_view.question.setText("How many matches were not played in Belgrade?")
    with qtbot.waitSignal(window.query_finished, timeout=QUERY_TIMEOUT * 1000):
        qtbot.mouseClick(window.answer_view.ask_button, Qt.MouseButton.LeftButton)
    grid = window.preview.grid
    assert window.preview.stack.currentWidget() is grid and grid.value.text() == "5"
    rows = {r for r, _c in grid.highlighted}
    assert len(rows) == 5
    assert not any("Belgrade" in grid.model.item(r, 2).text() for r in rows)
