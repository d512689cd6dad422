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
    # the terminal: both steps are the answer, one a line with where it came from, each source they cite under
    # "Sources:" (before, "Answer:" was a sentence read for the whole text, the steps below it)
    text = run_shelfwise(library.db, ["ask", QUESTION, "--adaptive", "--no-generate"],
                         unset=("SHELFWISE_EMBEDDER",)).stdout
    shown = text[text.index("Answer:"):]
    assert shown.startswith("Answer:\n1. How many days of annual leave do I get? -> 27 days ["), shown
    assert "\n2. And how do I request it? -> " in shown and "Steps:" not in shown, shown
    assert "(searched the documents, P(retrieve)" in shown and "3.1 Annual leave" in shown[shown.index("Sources:"):]


def _asked_in_window(qtbot, library: SampleLibrary, tmp_path, question: str, *, adaptive: bool):  # type: ignore[no-untyped-def]
    """The real window on ``library`` (no model text), ``question`` typed and the Ask button clicked; the window,
    its answer shown."""
    from PySide6.QtCore import QSettings, Qt

    from shelfwise.app.gui.window import MainWindow
    from shelfwise.core.settings import Settings

    window = MainWindow(Settings(db_path=library.db, adaptive=adaptive, answer_generate=False),
                        QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    window.answer_view.question.setText(question)
    with qtbot.waitSignal(window.query_finished, timeout=1200 * 1000):
        qtbot.mouseClick(window.answer_view.ask_button, Qt.MouseButton.LeftButton)
    return window


@pytest.mark.gui
def test_the_window_shows_each_step_with_its_cited_sources(qtbot, library: SampleLibrary, tmp_path) -> None:  # type: ignore[no-untyped-def]
    window = _asked_in_window(qtbot, library, tmp_path, QUESTION, adaptive=True)
    pane = window.answer_view.browser.toPlainText()
    assert pane.count("searched the documents") == 2, pane
    assert "27 days [" in pane and "LeaveDesk" in pane, pane
    html = window.answer_view.browser.toHtml()
    cited = {int(n) for n in re.findall(r'href="cite:(\d+)"', html)}
    assert cited and cited <= set(window.answer_view.hits_by_number()), (cited, html[-2000:])
    window.shutdown()


TOGETHER = "What is the maximum salary for band L5? And how many days of annual leave do I get?"


def test_two_questions_typed_at_once_each_get_their_answer_first(library: SampleLibrary) -> None:
    # without --adaptive: each question walked alone, a table's value computed as for a question asked alone
    # (before, the two were walked as one text and only the salary row was answered)
    text = run_shelfwise(library.db, ["ask", TOGETHER, "--no-generate"], unset=("SHELFWISE_EMBEDDER",)).stdout
    lines = text[text.index("Answer:"):].splitlines()
    assert lines[0] == "Answer:", lines[:4]
    assert lines[1].startswith("1. What is the maximum salary for band L5? -> 102,000 ["), lines[:4]
    assert lines[2].startswith("2. And how many days of annual leave do I get? -> 27 days ["), lines[:4]
    assert "Steps:" not in text and "P(retrieve)" not in text, text[-1500:]  # no decision was made or shown
    done = run_shelfwise(library.db, ["ask", TOGETHER, "--no-generate", "--json"], unset=("SHELFWISE_EMBEDDER",))
    out = json.loads(done.stdout[done.stdout.index("{"):])
    assert [s["decided"] for s in out["steps"]] == [False, False] and out["found"], out["steps"]
    assert out["answer"].splitlines()[0].startswith("What is the maximum salary for band L5? -> 102,000 [")
    listed = {c["number"]: c for c in out["citations"]}
    cited = {int(n) for n in re.findall(r"\[(\d+)\]", out["answer"])}
    assert cited == set(listed), (cited, sorted(listed))  # every source cited is listed, none listed uncited
    assert any("Salary bands" in c["location"] or "benefits-and-pay" in c["path"] for c in listed.values()), listed
    # within a scope (--in, or in: in the question) each part is searched there, and only there
    for scoped in (["ask", QUESTION, "--in", "handbook.pdf"], ["ask", f"{QUESTION} in:handbook.pdf"]):
        done = run_shelfwise(library.db, [*scoped, "--no-generate", "--json"], unset=("SHELFWISE_EMBEDDER",))
        assert done.returncode == 0, done.stdout[-2000:]
        out = json.loads(done.stdout[done.stdout.index("{"):])
        assert [s["decided"] for s in out["steps"]] == [False, False], out["steps"]
        assert "27 days" in out["steps"][0]["answer"] and "LeaveDesk" in out["steps"][1]["answer"], out["steps"]
        assert {c["path"].rsplit("/", 1)[-1] for c in out["citations"]} == {"handbook.pdf"}, out["citations"]
    # --adaptive within a scope decides and searches each part there too (it was one walk, with a note, before)
    done = run_shelfwise(library.db, ["ask", "How many days of annual leave do I get, and how do I request it?",
                                      "--adaptive", "--in", "handbook.pdf", "--no-generate", "--json"],
                         unset=("SHELFWISE_EMBEDDER",))
    assert done.returncode == 0, done.stdout[-2000:]
    out = json.loads(done.stdout[done.stdout.index("{"):])
    assert len(out["steps"]) >= 2 and all(s["decided"] for s in out["steps"]), out["steps"]
    assert not any("does not take a scope" in n for n in out["notes"]), out["notes"]
    assert {c["path"].rsplit("/", 1)[-1] for c in out["citations"]} == {"handbook.pdf"}, out["citations"]


@pytest.mark.gui
def test_the_window_shows_each_question_typed_at_once_with_its_answer(qtbot, library: SampleLibrary,  # type: ignore[no-untyped-def]
                                                                      tmp_path) -> None:
    window = _asked_in_window(qtbot, library, tmp_path, TOGETHER, adaptive=False)
    pane = window.answer_view.browser.toPlainText()
    assert "Your questions, each answered from your documents" in pane, pane
    assert pane.index("102,000") < pane.index("27 days"), pane
    assert "P(retrieve)" not in pane and "searched the documents" not in pane, pane
    window.shutdown()
