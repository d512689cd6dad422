"""Unit tests of the window's widgets with hand-built traces (offscreen, no model, no core engine)."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QSettings, Qt, QUrl
from PySide6.QtWidgets import QLabel

from shelfwise.app.gui.answer_view import AnswerView, answer_html
from shelfwise.app.gui.demo import DemoBar, demo_steps
from shelfwise.app.gui.ingest_bar import IngestBar, format_eta
from shelfwise.app.gui.jobs import CancelFlag, IngestJob, QueryJob
from shelfwise.app.gui.preview import PreviewPane, text_chunks
from shelfwise.app.gui.settings_dialog import ADVANCED_NOTE, SettingsDialog, window_settings
from shelfwise.app.gui.walk_view import COL_ACTION, COL_TITLE, ROLE_ROW, WalkView
from shelfwise.app.gui.workers import IngestWorker, QueryWorker, WorkerHost
from shelfwise.core.answers.export import answer_to_markdown, source_label
from shelfwise.core.answers.types import Answer, Citation
from shelfwise.core.indexing.finish import IndexProgress
from shelfwise.core.ingestion.runner import IngestProgress
from shelfwise.core.models.backend import Cancelled
from shelfwise.core.navigation.trace import Candidate, Hit, Level, SearchResult, Trace
from shelfwise.core.settings import Budgets, Settings, save_settings
from shelfwise.core.shelf import Shelf
from shelfwise.ingest.model import Location

PASSAGE = "Meals on business trips are reimbursed up to 40 euros a day when receipts are attached to the claim."


def make_pdf(path: Path) -> Path:
    pymupdf = pytest.importorskip("pymupdf")
    doc = pymupdf.open()
    for i in range(3):
        page = doc.new_page()
        page.insert_text((72, 72), f"Travel policy, page {i + 1}", fontsize=14)
        if i == 1:
            page.insert_textbox(pymupdf.Rect(72, 120, 520, 300), PASSAGE, fontsize=11)
    doc.save(str(path))
    return path


def make_result(pdf: str = "/nowhere/travel.pdf", levels: int = 3, per_level: int = 12) -> SearchResult:
    trace = Trace(query="How much for meals?", readout="fused", seconds=1.4)
    labels = ["topics", "documents", "sections", "passages"]
    node = 100
    for depth in range(1, levels + 1):
        cands = []
        for i in range(per_level):
            node += 1
            cands.append(Candidate(node, labels[depth - 1][:-1], f"{labels[depth - 1]} {i}", f"about thing {i}",
                                   score=round(0.95 - i * 0.07, 2), kept=i < 3,
                                   features={"cosine": 0.5 - i * 0.01, "bm25": 2.0 - i * 0.1}))
        trace.levels.append(Level(depth, labels[depth - 1], cands, requests=1, tokens=100 * depth,
                                  seconds=0.2 * depth))
    hits = [
        Hit(1, 1, PASSAGE, 0.9, pdf, "Travel policy", ["Claims", "Meals"], Location(page=2)),
        Hit(2, 2, "Slides say hello.", 0.5, "/nowhere/deck.pptx", "Deck", ["Intro"], Location(slide=4)),
    ]
    return SearchResult(trace.query, hits, trace)


def make_answer(result: SearchResult) -> Answer:
    return Answer(result.query, "You can claim 40 euros a day [1]. See also [2].",
                  [Citation(1, result.hits[0]), Citation(2, result.hits[1])], True, result, tokens=42, seconds=2.5)


# -- pure helpers ------------------------------------------------------------------------------------------------
def test_answer_html_links_citations() -> None:
    out = answer_html("A <b> [1] and [2, 3].\n\nNext [9]", known={1, 2, 3})
    assert 'href="cite:1"' in out and 'href="cite:3"' in out
    assert "cite:9" not in out and "[9]" in out
    assert "&lt;b&gt;" in out and out.count("<p") == 2


def test_source_label_and_eta() -> None:
    hit = make_result().hits[0]
    assert source_label(hit) == "travel.pdf > Claims > Meals p. 2"
    assert format_eta(None) == "" and format_eta(40) == "ETA 40s" and format_eta(125) == "ETA 2m 05s"


def test_text_chunks_start_with_first_60_chars() -> None:
    chunks = text_chunks(PASSAGE)
    assert len(chunks[0]) <= 60 and PASSAGE.startswith(chunks[0])
    assert " ".join(chunks).split() == PASSAGE.split()


def test_markdown_export_has_answer_sources_and_walk() -> None:
    md = answer_to_markdown(make_answer(make_result()))
    assert md.startswith("# How much for meals?")
    assert "[1] travel.pdf > Claims > Meals p. 2" in md and "[2] deck.pptx > Intro slide 4" in md
    assert "### Level 2 · documents · 12 -> kept 3" in md and "| kept |" in md and "| pruned |" in md


# -- widgets -----------------------------------------------------------------------------------------------------
def test_answer_view_streams_and_opens_citations(qtbot) -> None:
    view = AnswerView()
    qtbot.addWidget(view)
    result = make_result()
    view.begin(result.query)
    view.show_search(result)
    assert view.sources.count() == 2
    extracted = make_answer(result)
    view.show_extract(extracted)  # the extracted sentence at once, the model's answer streamed below it
    for piece in ["You ", "can ", "claim [1", "]."]:
        view.append_token(piece)
    assert view.text() == "You can claim 40 euros a day [1]. See also [2]." and view.streamed() == "You can claim [1]."
    shown = view.browser.toPlainText()
    assert shown.index("40 euros a day") < shown.index("being written") < shown.index("You can claim [1].")
    assert 'href="cite:1"' in view.browser.toHtml()
    extracted.generated_raw, extracted.generation_note = "You can claim [1].", "The model's answer is not shown: x."
    view.show_generated(extracted)  # withdrawn: the streamed text goes, the reason is said
    shown = view.browser.toPlainText()
    assert view.streamed() == "" and "You can claim [1]." not in shown and "is not shown: x." in shown
    extracted.generated, extracted.generation_note = "You can claim it [1].", ""
    view.show_generated(extracted)  # kept: the checked text replaces the stream
    assert "You can claim it [1]." in view.browser.toPlainText()
    view.begin("again")
    view.show_extract(make_answer(result))
    view.append_token("Half an ans")
    view.show_cancelled()  # cut off mid-way, never checked: not left on screen as if it were being written
    assert view.streamed() == "" and "Half an ans" not in view.browser.toPlainText()
    assert "40 euros a day" in view.browser.toPlainText()
    with qtbot.waitSignal(view.hit_activated) as blocker:
        view.browser.anchorClicked.emit(QUrl("cite:1"))
    assert blocker.args[0].location.page == 2
    view.show_answer(make_answer(result))
    assert view.sources.item(0).text().startswith("[1] travel.pdf > Claims > Meals p. 2")
    with qtbot.waitSignal(view.hit_activated) as blocker:
        view.sources.itemClicked.emit(view.sources.item(1))
    assert blocker.args[0].location.slide == 4
    with qtbot.waitSignal(view.ask_requested) as blocker:
        view.question.setText("  what?  ")
        qtbot.mouseClick(view.ask_button, Qt.MouseButton.LeftButton)
    assert blocker.args[0] == "what?"


def test_walk_view_funnel_kept_pruned_and_look_here(qtbot) -> None:
    walk = WalkView()
    qtbot.addWidget(walk)
    walk.resize(480, 700)
    result = make_result()
    walk.show_trace(result.trace)
    assert len(walk.level_items()) == 3
    head = walk.level_items()[1].text(COL_TITLE)
    assert head == "Level 2 · documents · 12 -> kept 3 · 200 tokens · 0.4 s"
    rows = walk.candidate_items(1)
    kept = [r for r in rows if r.data(COL_TITLE, Qt.ItemDataRole.UserRole).kept]
    pruned = [r for r in rows if not r.data(COL_TITLE, Qt.ItemDataRole.UserRole).kept]
    assert len(kept) == 3 and len(pruned) == 6  # 3 more pruned behind "... more"
    assert all(r.font(COL_TITLE).bold() for r in kept)
    assert all(r.text(COL_ACTION) == "look here too" for r in pruned)
    assert "cosine" in pruned[0].toolTip(COL_TITLE) and "about thing" in pruned[0].toolTip(COL_TITLE)
    with qtbot.waitSignal(walk.look_here) as blocker:
        walk.tree.itemClicked.emit(pruned[0], COL_ACTION)
    assert blocker.args[0].node_id == pruned[0].data(COL_TITLE, Qt.ItemDataRole.UserRole).node_id
    with qtbot.waitSignal(walk.node_activated):
        walk.tree.itemClicked.emit(kept[0], COL_TITLE)
    more = walk.level_items()[1].child(walk.level_items()[1].childCount() - 1)
    assert more.data(COL_TITLE, ROLE_ROW) == "more"
    walk.tree.itemClicked.emit(more, COL_TITLE)
    assert len(walk.candidate_items(1)) == 12
    walk.grab()  # paints the delegate


def test_demo_replays_level_by_level(qtbot) -> None:
    walk = WalkView()
    demo = DemoBar(walk)
    qtbot.addWidget(walk)
    qtbot.addWidget(demo)
    trace = make_result().trace
    assert len(demo_steps(trace)) == 9
    demo.start(trace, autoplay=False)
    assert len(walk.level_items()) == 1 and walk.candidate_items(0)[0].text(1) == ""  # listed, not scored yet
    demo.step()
    assert walk.candidate_items(0)[0].text(1) != ""
    demo.speed.setValue(10)
    demo.play()
    qtbot.waitUntil(lambda: demo.position == 8, timeout=10_000)
    assert len(walk.level_items()) == 3 and not demo.timer.isActive()
    demo.stop()
    assert not demo.isVisible() and len(walk.level_items()) == 3


def test_ingest_bar_progress(qtbot) -> None:
    bar = IngestBar()
    qtbot.addWidget(bar)
    bar.start()
    assert bar.isVisibleTo(bar.parentWidget() or bar)
    bar.update_progress(IngestProgress(done=3, total=10, path="/x/HR policies.pdf", status="working",
                                       message="", eta_seconds=125, elapsed=4.0))
    assert bar.bar.maximum() == 10 and bar.bar.value() == 3
    assert bar.file_label.text() == "HR policies.pdf (working)" and bar.eta_label.text() == "ETA 2m 05s"
    assert bar.index_bar.format() == "index: waiting"
    bar.update_progress(IndexProgress("embedding", 40, 160, eta_seconds=30.0))  # the indexing bar, beside
    assert bar.index_bar.maximum() == 160 and bar.index_bar.value() == 40 and bar.eta_label.text() == "ETA 30s"
    assert bar.bar.value() == 3  # the parsing bar is left as it was
    bar.update_progress(IndexProgress("sentences", 50, 200, eta_seconds=12.0))  # the extractive answer's vectors
    assert bar.index_bar.maximum() == 200 and bar.index_bar.value() == 50
    assert bar.index_bar.format() == "index: sentences 50/200" and bar.eta_label.text() == "ETA 12s"
    bar.update_progress(IndexProgress("calibrating", 0, 1))
    assert bar.index_bar.maximum() == 0 and "calibration" in bar.index_bar.format()
    bar.update_progress(IndexProgress("done", 1, 1))
    assert bar.index_bar.format() == "index: done"
    with qtbot.waitSignal(bar.cancel_requested):
        qtbot.mouseClick(bar.cancel_button, Qt.MouseButton.LeftButton)
    bar.finish()
    assert not bar.isVisible()


def test_settings_roundtrip(qtbot, tmp_path: Path) -> None:
    """The window's settings live in the core's settings file (QSettings keeps the geometry only); the dialog shows
    the models, GPU layers and threads, and keeps the budgets and research options under a collapsed Advanced."""
    qs = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    path = tmp_path / "settings.json"
    base = Settings(db_path=tmp_path / "x.db")
    loaded = window_settings(qs, base, path)
    assert loaded.settings == base and not loaded.found and not path.exists()
    changed = Settings(db_path=base.db_path, model_path="/m.gguf", n_gpu_layers=8, n_threads=3, readout="likelihood",
                       budgets=Budgets(first_keep_ratio=0.5, keep=6), adaptive=True, answer_passages=3,
                       judge="bundled")
    save_settings(changed, path)
    again = window_settings(qs, base, path).settings
    assert again == changed
    # the encoder is the library's, not the app's: a switch is never saved as a setting
    save_settings(replace(changed, embedder_path="minilm"), path)
    assert window_settings(qs, base, path).settings.embedder_path is None
    assert qs.allKeys() == []  # nothing of the settings in QSettings
    dialog = SettingsDialog(again, encoder="minilm")
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.settings() == changed and dialog.encoder_choice() == "minilm"
    assert dialog.judge.currentText() == "bundled"
    assert not dialog.advanced.isVisible() and not dialog.budgets["keep"].isVisible()  # collapsed
    qtbot.mouseClick(dialog.advanced_toggle, Qt.MouseButton.LeftButton)
    assert dialog.advanced.isVisible() and dialog.budgets["keep"].isVisible()
    assert dialog.findChild(QLabel, "advancedNote").text() == ADVANCED_NOTE and "calibration" in ADVANCED_NOTE.lower()
    dialog.budgets["keep"].setValue(9)
    dialog.readout.setCurrentText("embedding")
    dialog.judge.setCurrentText("off")
    out = dialog.settings()
    assert out.budgets.keep == 9 and out.readout == "embedding" and out.db_path == base.db_path
    assert out.embedder_path is None and out.judge is None
    dialog.embedder.setCurrentText("EmbeddingGemma")
    assert dialog.encoder_choice() == "embeddinggemma"
    dialog.embedder.setCurrentText(" /models/my-encoder.gguf ")
    assert dialog.encoder_choice() == "/models/my-encoder.gguf"
    dialog._defaults()
    assert dialog.encoder_choice() == "embeddinggemma"  # what a new library gets


def test_an_older_windows_qsettings_move_into_the_settings_file_once(tmp_path: Path) -> None:
    qs = QSettings(str(tmp_path / "old.ini"), QSettings.Format.IniFormat)
    qs.setValue("window/geometry", b"kept")
    qs.setValue("model/path", "/old.gguf")
    qs.setValue("model/threads", 6)
    qs.setValue("search/readout", "binary")
    qs.setValue("budgets/keep", 7)
    qs.sync()
    path = tmp_path / "settings.json"
    base = Settings(db_path=tmp_path / "x.db")
    moved = window_settings(qs, base, path)
    assert moved.found and path.exists() and not moved.problem
    s = moved.settings
    assert (s.model_path, s.n_threads, s.readout, s.budgets.keep) == ("/old.gguf", 6, "binary", 7)
    assert s.db_path == base.db_path
    assert qs.allKeys() == ["window/geometry"]  # QSettings keeps the window's own state only
    # the file is the truth from now on: a value written there later is what the next start reads
    save_settings(replace(s, n_threads=2), path)
    assert window_settings(qs, base, path).settings.n_threads == 2


def test_a_damaged_settings_file_opens_the_window_with_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("{not json", encoding="utf-8")
    qs = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    base = Settings(db_path=tmp_path / "x.db")
    loaded = window_settings(qs, base, path)
    assert loaded.settings == base and "damaged" in loaded.problem and str(path) in loaded.problem


def test_preview_pdf_page_highlight_and_text(qtbot, tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "travel.pdf")
    pane = PreviewPane()
    qtbot.addWidget(pane)
    pane.resize(900, 400)
    result = make_result(str(pdf))
    pane.show_hit(result.hits[0])
    assert pane.current_page == 2 and pane.page_count == 3 and pane.highlights >= 2
    assert "page 2 of 3" in pane.header.text() and "highlighted" in pane.header.text()
    assert pane.open_button.isEnabled()
    pane.next_button.click()
    assert pane.current_page == 3
    pane.show_hit(result.hits[1], ["Before.", "Slides say hello.", "After."])
    assert pane.stack.currentWidget() is pane.text and pane.highlights == 1
    assert "#fff0a0" in pane.text.toHtml().lower() and "slide 4" in pane.header.text()


# -- workers (threads, cancel, shutdown) with a stand-in Shelf -----------------------------------------------------
class StubShelf:
    def __init__(self, settings: Settings) -> None:
        self.thread = threading.get_ident()
        self.closed_in: int | None = None
        self.store = SimpleNamespace(remove_document=lambda _id: None)
        self.removed: list[int] = []

    def before_question(self, collection, **_):
        return None

    def remove_documents(self, document_ids, collection="default", **_):
        self.removed.extend(document_ids)

    def ask(self, question, collection, *, events, keep, cancel):
        result = make_result()
        events.searched(result)
        for _ in range(200):
            if cancel():
                raise Cancelled("cancelled")
            events.on_token("word ")
            time.sleep(0.005)
        return make_answer(result)

    def search(self, question, collection, *, keep, cancel):
        return make_result()

    def ask_in_conversation(self, conversation_id, question, collection="default", *, alone=False,
                            replaces_turn=None, keep=(), cancel=None, events=None):
        """What the window's conversation path calls: this stand-in's ``ask`` as the first turn of a conversation."""
        from shelfwise.core.conversation.model import Conversation, Reading
        from shelfwise.core.conversation.turn import TurnEvents, turn_from

        reading = Reading("first", question, question)
        events = events or TurnEvents()
        if events.on_reading is not None:
            events.on_reading(reading)
        answer = self.ask(question, collection, events=events, keep=keep, cancel=cancel or (lambda: False))
        turn = turn_from(question, reading, answer)
        turn.id = turn.position = 1
        return Conversation(conversation_id or 1, collection, question, [turn]), turn, answer

    def ingest(self, paths, collection, *, progress, cancel, force=False, index_progress=None):
        for i in range(3):
            progress(IngestProgress(done=i, total=3, path=str(paths[0]), status="working", message="",
                                    eta_seconds=1.0, elapsed=0.1))
        return SimpleNamespace(collection=collection, cancelled=False)

    def refresh(self, collection):
        pass

    def close(self) -> None:
        self.closed_in = threading.get_ident()


def test_query_worker_streams_off_the_ui_thread_and_cancels(qtbot) -> None:
    shelves: list[StubShelf] = []

    def factory(settings):
        shelves.append(StubShelf(settings))
        return shelves[-1]

    host = WorkerHost(QueryWorker(Settings(), factory), "test-query")
    tokens: list[str] = []
    host.worker.token.connect(lambda job, piece: tokens.append(piece))
    with qtbot.waitSignal(host.worker.answered, timeout=10_000) as blocker:
        host.submit(QueryJob("q"))
    assert blocker.args[1].citations and len(tokens) == 200
    assert shelves[0].thread != threading.get_ident()
    with qtbot.waitSignal(host.worker.cancelled, timeout=10_000):
        host.submit(QueryJob("q2"))
        qtbot.waitUntil(lambda: len(tokens) > 210)
        host.cancel()
    qtbot.waitUntil(lambda: not host.busy)
    assert host.shutdown(5000)
    assert shelves[0].closed_in == shelves[0].thread


def test_ingest_worker_progress_and_shutdown_while_busy(qtbot, tmp_path: Path) -> None:
    host = WorkerHost(IngestWorker(Settings(), StubShelf), "test-ingest")
    seen = []
    host.worker.progress.connect(seen.append)
    with qtbot.waitSignal(host.worker.done, timeout=10_000) as blocker:
        host.submit(IngestJob([tmp_path], "c"))
    assert blocker.args[1].collection == "c"
    qtbot.waitUntil(lambda: len(seen) == 3)
    qhost = WorkerHost(QueryWorker(Settings(), StubShelf), "test-query2")
    qhost.submit(QueryJob("long"))
    time.sleep(0.05)
    t0 = time.perf_counter()
    assert qhost.shutdown(5000) and host.shutdown(5000)
    assert time.perf_counter() - t0 < 3
    assert CancelFlag()() is False


# -- the library pane on a real store (no models) ------------------------------------------------------------------
def test_library_lists_documents_with_status_and_watches_folders(qtbot, tmp_path: Path) -> None:
    from shelfwise.app.gui.library import FolderWatcher, LibraryView
    from shelfwise.core.store.db import FileMeta, Store
    from shelfwise.ingest.model import ParsedDocument, ParsedNode

    store = Store(tmp_path / "lib.db")
    coll = store.collection("Handbooks")
    doc = ParsedDocument("HR policies", "pdf", [ParsedNode("section", "Leave", children=[
        ParsedNode("passage", "", PASSAGE, Location(page=2))])], pages=3)
    store.write_document(coll.id, str(tmp_path / "hr.pdf"), FileMeta(1, 1.0, "a"), doc)
    store.record_failure(coll.id, str(tmp_path / "locked.docx"), FileMeta(1, 1.0, "b"), "error", "password protected")
    store.record_failure(coll.id, str(tmp_path / "scan.pdf"), FileMeta(1, 1.0, "c"), "needs_ocr", "no text layer")
    view = LibraryView()
    qtbot.addWidget(view)
    view.refresh(Shelf(store=store))
    assert view.tree.topLevelItem(0).text(0) == "Handbooks (3)"
    items = {i.text(0): i for i in view.document_items()}
    assert set(items) == {"hr.pdf", "locked.docx", "scan.pdf"}
    assert items["locked.docx"].toolTip(0) == "password protected"
    assert items["scan.pdf"].toolTip(0) == "no text layer"
    assert "HR policies" in items["hr.pdf"].toolTip(0)
    assert not items["hr.pdf"].icon(0).isNull()
    with qtbot.waitSignal(view.reingest_requested) as blocker:
        view.reingest([(items["hr.pdf"].data(0, Qt.ItemDataRole.UserRole + 1), "Handbooks")])
    assert blocker.args == [[str(tmp_path / "hr.pdf")], "Handbooks"]
    with qtbot.waitSignal(view.remove_requested) as blocker:
        view.remove([(items["scan.pdf"].data(0, Qt.ItemDataRole.UserRole + 1), "Handbooks")])
    assert blocker.args[1] == "Handbooks" and len(blocker.args[0]) == 1
    store.close()

    folder = tmp_path / "watched"
    (folder / "sub").mkdir(parents=True)
    with qtbot.waitSignal(view.add_requested) as blocker:
        view.add_paths([folder], "Handbooks")
    assert blocker.args == [[str(folder.resolve())], "Handbooks"]
    assert view.watcher.watched() == [(str(folder.resolve()), "Handbooks")]
    watcher = FolderWatcher(debounce_ms=200)
    watcher.watch(folder, "Notes")
    changes: list[tuple[str, str]] = []
    watcher.folder_changed.connect(lambda root, coll: changes.append((root, coll)))
    (folder / "a.md").write_text("one")
    (folder / "sub" / "b.md").write_text("two")
    qtbot.waitUntil(lambda: bool(changes), timeout=10_000)
    qtbot.wait(400)
    assert changes == [(str(folder.resolve()), "Notes")]  # several changes, one debounced report


# -- the whole window, wired to a stand-in Shelf (fast; the real core is in test_gui_window.py) --------------------
def test_window_wiring_with_a_stand_in_shelf(qtbot, tmp_path: Path) -> None:
    from shelfwise.app.gui.main import parse_args
    from shelfwise.app.gui.window import MainWindow

    assert parse_args(["--db", "x.db", "--sample"]).sample and parse_args([]).db is None
    pdf = str(make_pdf(tmp_path / "travel.pdf"))

    class PdfShelf(StubShelf):
        def ask(self, question, collection, *, events, keep, cancel):
            result = make_result(pdf)
            if keep:
                result.trace.levels[0].candidates[-1].kept = True
            events.searched(result)
            for piece in ["You can ", "claim 40 ", "euros [1]."]:
                events.on_token(piece)
            return make_answer(result)

    window = MainWindow(Settings(db_path=tmp_path / "lib.db"),
                        QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat), shelf_factory=PdfShelf)
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.query_finished, timeout=10_000):
        window.ask("How much for meals?")
    assert window.answer_view.text() == "You can claim 40 euros a day [1]. See also [2]."  # the final text
    assert len(window.walk.level_items()) == 3
    assert window.preview.current_path == pdf and window.preview.current_page == 2  # first source opened
    window.preview.clear()
    window.answer_view.activate_citation(2)
    assert window.preview.current_page == 4 and window.preview.stack.currentWidget() is window.preview.text
    md = window.export_markdown(tmp_path / "a.md").read_text()
    assert "[1] travel.pdf > Claims > Meals p. 2" in md
    pruned = next(r for r in window.walk.candidate_items(0) if r.text(COL_ACTION))
    forced = pruned.data(0, Qt.ItemDataRole.UserRole).node_id
    with qtbot.waitSignal(window.query_finished, timeout=10_000):
        window.walk.tree.itemClicked.emit(pruned, COL_ACTION)
    assert window.session.job is not None and list(window.session.job.keep) == [forced]
    assert "forced open: 1" in window.walk.summary.text()
    window.replay()
    assert window.demo.isVisible() and len(window.walk.level_items()) == 1
    window.close()
    assert window.query_host.worker_thread.isFinished() and window.ingest_host.worker_thread.isFinished()
