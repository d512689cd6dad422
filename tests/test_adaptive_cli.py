"""Adaptive retrieval (DeepRAG, ``ask --adaptive``) through the command line on the sample built with the defaults
(EmbeddingGemma, the bundled Gemma 3 270M deciding per sub-question): two questions asked at once are walked one by
one, and each step's answer is what its passages say (the value and the sentence, cited by the sources listed),
never a text the model wrote from them unchecked. Before, "How many days ... ? And how do I request it?" showed the
steps "-> 10 days" and "-> You can request leave by sending a letter to the IT desk at ... 1023 Amsterdam Avenue"
(the model's own text, in no document) as "searched the documents"."""

from __future__ import annotations

import json
import re

import pytest

from tests.cli_sample import SampleLibrary, run_shelfwise

pytestmark = pytest.mark.model

QUESTION = "How many days of annual leave do I get? And how do I request it?"


@pytest.fixture(scope="module")
def library(gemma_sample_copy) -> SampleLibrary:
    lib = gemma_sample_copy("adaptive-cli")
    assert isinstance(lib, SampleLibrary)
    return lib


def test_each_step_answers_from_its_passages_cited_by_the_sources_listed(library: SampleLibrary) -> None:
    done = run_shelfwise(library.db, ["ask", QUESTION, "--adaptive", "--no-generate", "--json"],
                         unset=("SHELFWISE_EMBEDDER",))
    assert done.returncode == 0, done.stdout[-2000:]
    out = json.loads(done.stdout[done.stdout.index("{"):])
    steps = out["steps"]
    assert [s["source"] for s in steps] == ["documents", "documents"], steps
    assert "27 days" in steps[0]["answer"] and "LeaveDesk" in steps[1]["answer"], steps
    listed = {c["number"]: c for c in out["citations"]}
    passages = " ".join(" ".join(c["text"].split()) for c in listed.values())
    for step in steps:
        numbers = {int(n) for n in re.findall(r"\[(\d+)\]", step["answer"])}
        assert numbers and numbers <= set(listed), (step, sorted(listed))  # every source a step cites is listed
        for piece in filter(None, re.split(r"\s*(?:\[\d+\]|\u2014)\s*|(?<=[.!?])\s+", step["answer"])):
            assert " ".join(piece.split()) in passages, piece  # each value and sentence stands in a passage listed
    annual = next(c for c in listed.values() if "27 days" in c["text"])
    assert f"[{annual['number']}]" in steps[0]["answer"]
    # the terminal: both steps under "Steps:", each source they cite under "Sources:"
    text = run_shelfwise(library.db, ["ask", QUESTION, "--adaptive", "--no-generate"],
                         unset=("SHELFWISE_EMBEDDER",)).stdout
    shown = text[text.index("Steps:"):]
    assert "1. How many days of annual leave do I get? -> 27 days [" in shown, shown
    assert "(searched the documents" in shown and "3.1 Annual leave" in shown[shown.index("Sources:"):]


@pytest.mark.gui
def test_the_window_shows_each_step_with_its_cited_sources(qtbot, library: SampleLibrary, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QSettings, Qt

    from shelfwise.app.gui.window import MainWindow
    from shelfwise.core.settings import Settings

    window = MainWindow(Settings(db_path=library.db, adaptive=True, answer_generate=False),
                        QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    window.answer_view.question.setText(QUESTION)
    with qtbot.waitSignal(window.query_finished, timeout=1200 * 1000):
        qtbot.mouseClick(window.answer_view.ask_button, Qt.MouseButton.LeftButton)
    pane = window.answer_view.browser.toPlainText()
    assert pane.count("searched the documents") == 2, pane
    assert "27 days [" in pane and "LeaveDesk" in pane, pane
    html = window.answer_view.browser.toHtml()
    cited = {int(n) for n in re.findall(r'href="cite:(\d+)"', html)}
    assert cited and cited <= set(window.answer_view.hits_by_number()), (cited, html[-2000:])
    window.shutdown()
