"""The real window, offscreen, on a large synthetic library: it opens, its library tree lists the documents when a
collection is expanded, and a question is answered with the walk shown, the asked passage first.

The library is built once for the module the way ``benchmarks/product/growth.py`` builds its libraries (the
synthetic tree of ``benchmarks/product/synthetic.py``: documents, sections, passages; a vector on
every node: a few real MiniLM vectors repeated with noise, sections, documents and clusters the mean of their
children; indexed as ``shelfwise index`` leaves a library, calibration off). How long each step takes at 10^3 and
10^5 passages is measured by ``benchmarks/product/window_scale.py`` (docs/scale.md, "The window"), not here.
"""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from PySide6.QtCore import QSettings

from shelfwise.app.gui.window import MainWindow
from shelfwise.core.models.factory import make_embedder
from shelfwise.core.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "product"))
from growth import build_library, question_for
from synthetic import vocabulary

pytestmark = [pytest.mark.gui, pytest.mark.model]

PASSAGES = 10_000  # documents, sections, passages (the 10^5 tree adds topic clusters above them: the benchmark's)
QUERY_TIMEOUT = 600


@pytest.fixture(scope="module")
def large_library(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    folder = tmp_path_factory.mktemp("large-library")
    emb = make_embedder("minilm")
    try:
        words = vocabulary()
        real = np.asarray(emb.embed([" ".join(words[i:i + 12]) for i in range(0, 384, 12)]), np.float32)
        db = build_library(folder, PASSAGES, real, emb, 0.3, encoder="minilm", sentences=False)
    finally:
        emb.close()
    with closing(sqlite3.connect(db)) as conn:
        counts = dict(conn.execute("SELECT kind, count(*) FROM nodes GROUP BY kind").fetchall())
    return SimpleNamespace(db=db, counts=counts, question=question_for(db))


def test_the_window_opens_a_large_library_lists_it_and_answers(qtbot, tmp_path: Path,
                                                               large_library: SimpleNamespace) -> None:
    counts = large_library.counts
    assert counts["passage"] == PASSAGES and counts["section"] > 0
    window = MainWindow(Settings(db_path=large_library.db, embedder_path="minilm", use_calibration=False,
                                 answer_generate=False),
                        QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    try:
        tree = window.library.tree
        assert tree.topLevelItemCount() == 1
        top = tree.topLevelItem(0)
        assert top.text(0) == f"synthetic ({counts['document']})"
        top.setExpanded(False)
        top.setExpanded(True)
        assert top.childCount() == counts["document"]
        assert not window.ingest_host.busy  # the index is complete: nothing to finish at start

        window.answer_view.question.setText(large_library.question)
        with qtbot.waitSignal(window.query_finished, timeout=QUERY_TIMEOUT * 1000):
            window.answer_view.ask_button.click()
        answer = window.session.last_answer
        assert answer is not None and answer.search is not None
        asked = large_library.question.rstrip("?").split()
        first = answer.search.hits[0].text.split()
        assert first[:len(asked)] == asked, (asked, first[:12])
        labels = [level.label for level in answer.search.trace.levels]
        assert labels[:2] == ["documents", "sections"], labels
        assert window.walk.tree.topLevelItemCount() >= 2  # the walk's levels are shown
    finally:
        window.shutdown()
