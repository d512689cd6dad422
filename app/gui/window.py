"""The main window: library left, question + answer + sources centre, the walk right, preview at the bottom.

The window is wiring: it builds the widgets, connects their signals, and hands the decisions to two small
Qt-free classes tested on their own: :class:`~shelfwise.app.gui.query_session.QuerySession` (the question
lifecycle: current job, forced branches, last search and answer, export), :class:`~shelfwise.app.gui.ingest_ledger.
IngestLedger` (pairs an ingest job's outcome with its end and says what to show); the preview's look-ups are
the facade's (``Shelf.passage_context``, ``Shelf.shown_for``). It owns two background workers (ingest, query), each
with its own Shelf in its own thread, and one model-less Shelf on the UI thread (``reader``) for the reads.
:class:`~shelfwise.core.settings.Settings` is frozen: the workers hold the one they were given until
``apply_settings`` hands them a new one.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox, QSplitter, QWidget

from shelfwise.app.gui.answer_view import AnswerView
from shelfwise.app.gui.conversation_session import ConversationSession
from shelfwise.app.gui.conversations_dialog import ConversationsDialog
from shelfwise.app.gui.demo import DemoBar
from shelfwise.app.gui.encoder_bar import EncoderBar, switch_question
from shelfwise.app.gui.ingest_bar import IngestBar
from shelfwise.app.gui.ingest_ledger import IngestLedger
from shelfwise.app.gui.jobs import EncoderJob, IngestJob, QueryJob, RemoveJob
from shelfwise.app.gui.library import LibraryView
from shelfwise.app.gui.plain import warn
from shelfwise.app.gui.preview import PreviewPane
from shelfwise.app.gui.query_session import QuerySession
from shelfwise.app.gui.reading_bar import ReadingBar
from shelfwise.app.gui.settings_dialog import SettingsDialog
from shelfwise.app.gui.thread_view import ThreadView
from shelfwise.app.gui.walk_view import WalkView
from shelfwise.app.gui.workers import IngestWorker, Job, QueryWorker, ShelfFactory, WorkerHost
from shelfwise.core.answers.types import Answer
from shelfwise.core.api.asking import in_filter, write_text_atomically
from shelfwise.core.api.indexing import IngestReport, SwitchEstimate, label
from shelfwise.core.api.reads import NodeText
from shelfwise.core.api.starting import preload_library_encoder
from shelfwise.core.conversation.model import Conversation, Reading, Turn
from shelfwise.core.navigation.trace import Candidate, Hit, SearchResult
from shelfwise.core.paths import default_db
from shelfwise.core.settings import Settings, save_settings
from shelfwise.core.shelf import Shelf

log = logging.getLogger(__name__)

STYLE = """
QLabel#paneTitle { font-weight: 600; font-size: 13px; color: #202124; padding: 2px 0; }
QLabel#hint, QLabel#walkSummary, QLabel#answerStatus { color: #5f6368; }
QTextBrowser#answerText { font-size: 14px; padding: 6px; }
QTreeWidget#walkTree::item { padding: 1px 0; }
"""


class MainWindow(QMainWindow):
    """Signals for tests and scripts: ``ingest_finished(report or None)``, ``query_finished()``."""

    ingest_finished = Signal(object)
    query_finished = Signal()

    def __init__(
        self,
        settings: Settings | None = None,
        qsettings: QSettings | None = None,
        shelf_factory: ShelfFactory | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        settings = settings or Settings()
        db_path = settings.db_path if settings.db_path is not None else default_db()
        self.settings = replace(settings, db_path=db_path)
        self.qsettings = qsettings or QSettings("shelfwise", "shelfwise")
        # the UI thread's reads through the facade: a Shelf that loads no model (the workers have their own)
        self.reader = Shelf(self.settings)
        self.session = QuerySession()
        self.conversation = ConversationSession(self.reader)  # the thread the next question continues
        self._opened_for: QueryJob | None = None  # the query job whose answer sentence the preview opened
        self.ledger = IngestLedger()
        self.last_estimate: SwitchEstimate | None = None  # what the last measured encoder switch would take
        self._closed = False
        self.setWindowTitle(f"Shelfwise — {Path(db_path).name}")
        self.setStyleSheet(STYLE)

        self.library = LibraryView()
        self.ingest_bar = IngestBar()
        self.library.add_bottom(self.ingest_bar)
        self.encoder_bar = EncoderBar()
        self.library.add_bottom(self.encoder_bar)
        self.answer_view = AnswerView()
        self.reading_bar = ReadingBar()
        self.thread_view = ThreadView()
        self.thread_view.hide()
        self.answer_view.layout().insertWidget(1, self.reading_bar)  # type: ignore[union-attr]
        self.answer_view.layout().insertWidget(2, self.thread_view, 2)  # type: ignore[union-attr]
        self.walk = WalkView()
        self.demo = DemoBar(self.walk)
        self.walk.controls.addWidget(self.demo)
        self.preview = PreviewPane()

        self.columns = QSplitter(Qt.Orientation.Horizontal)
        self.columns.addWidget(self.library)
        self.columns.addWidget(self.answer_view)
        self.columns.addWidget(self.walk)
        self.columns.setStretchFactor(0, 2)
        self.columns.setStretchFactor(1, 4)
        self.columns.setStretchFactor(2, 5)
        self.columns.setSizes([250, 500, 620])
        self.rows = QSplitter(Qt.Orientation.Vertical)
        self.rows.addWidget(self.columns)
        self.rows.addWidget(self.preview)
        self.rows.setStretchFactor(0, 3)
        self.rows.setStretchFactor(1, 2)
        self.rows.setSizes([560, 260])
        self.setCentralWidget(self.rows)
        self.resize(1320, 860)

        self.ingest_host = WorkerHost(IngestWorker(self.settings, shelf_factory), "shelfwise-ingest", self)
        self.query_host = WorkerHost(QueryWorker(self.settings, shelf_factory), "shelfwise-query", self)
        if shelf_factory is None:
            # the library's encoder loads on a thread of its own while the window opens and the question is typed;
            # the first question's worker takes it instead of loading it then (docs/scale.md, "Session 22")
            preload_library_encoder(self.settings.db_path, self.settings.embedder_path)
        self._wire()
        self._menus()
        self.statusBar().showMessage("Ready")

        self._restore()
        self.refresh_library()
        state = self.reader.state
        if state.damage:  # opened read-only; the files are the truth
            self.statusBar().showMessage(
                f"This library is damaged ({state.damage}) and open read-only: browse and search what is "
                f"readable, or rebuild it from your files with: shelfwise --db {state.path} doctor --rebuild")
        elif state.read_only:
            self.statusBar().showMessage(f"Read-only library ({state.reason}): browse and search only")
        self.resume_unfinished_index()

    # -- wiring -------------------------------------------------------------------------------------------------
    def _wire(self) -> None:
        lib = self.library
        lib.add_requested.connect(lambda paths, coll: self.ingest(paths, coll))
        lib.reingest_requested.connect(lambda paths, coll: self.ingest(paths, coll, force=True))
        lib.remove_requested.connect(self.remove_documents)
        lib.document_activated.connect(self.preview.show_document)
        lib.ask_about.connect(self.ask_about)
        self.preview.opened.connect(self._on_opened)
        lib.watcher.folder_changed.connect(lambda root, coll: self.ingest([root], coll))
        self.ingest_bar.cancel_requested.connect(self.ingest_host.cancel)
        self.encoder_bar.switch_requested.connect(self.estimate_switch)

        iw = self.ingest_host.worker
        assert isinstance(iw, IngestWorker)
        iw.progress.connect(self.ingest_bar.update_progress)
        # Worker signals go to bound methods of this window, so they run on the UI thread (a lambda connected to
        # a signal of an object in another thread would run in that thread).
        iw.done.connect(self._on_ingest_done)
        iw.estimated.connect(self._on_estimated)
        iw.cancelled.connect(self._on_ingest_cancelled)
        iw.error.connect(self._on_ingest_error)
        iw.finished.connect(self._on_ingest_finished)  # after the host's own handler: busy is already updated
        self.ingest_host.busy_changed.connect(self._on_ingest_busy)

        av = self.answer_view
        av.ask_requested.connect(lambda q, coll: self.ask(q, coll))
        av.cancel_requested.connect(self.cancel_query)
        av.hit_activated.connect(self._on_hit_activated)
        av.ask_about.connect(self.ask_about)
        qw = self.query_host.worker
        assert isinstance(qw, QueryWorker)
        qw.searched.connect(self._on_searched)
        qw.token.connect(self._on_token)
        qw.extracted.connect(self._on_extracted)
        qw.generated.connect(self._on_generated)
        qw.answered.connect(self._on_answered)
        qw.cancelled.connect(self._on_query_cancelled)
        qw.failed.connect(self._on_query_failed)
        qw.finished.connect(self._on_query_job_finished)
        qw.read.connect(self._on_read)
        qw.turned.connect(self._on_turned)
        self.thread_view.walk_requested.connect(self.show_turn_walk)
        self.thread_view.citation_requested.connect(self.show_turn_citation)
        self.reading_bar.ask_alone.connect(self.ask_alone)
        self.query_host.busy_changed.connect(self._on_query_busy)

        self.walk.node_activated.connect(self.show_candidate)
        self.walk.look_here.connect(self.look_here)
        self.walk.replay_requested.connect(self.replay)

    def _menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction("Add &files…", QKeySequence.StandardKey.Open, self.library.add_files_dialog)
        file_menu.addAction("Add f&older…", self.library.add_folder_dialog)
        self.export_action = QAction("&Export answer as Markdown…", self)
        self.export_action.setShortcut(QKeySequence("Ctrl+E"))
        self.export_action.setEnabled(False)
        self.export_action.triggered.connect(self.export_dialog)
        file_menu.addAction(self.export_action)
        file_menu.addSeparator()
        file_menu.addAction("&Quit", QKeySequence.StandardKey.Quit, self.close)
        conv_menu = self.menuBar().addMenu("&Conversation")
        self.new_conversation_action = conv_menu.addAction("&New conversation", QKeySequence("Ctrl+N"),
                                                           self.new_conversation)
        conv_menu.addAction("&Conversations…", QKeySequence("Ctrl+Shift+O"), self.conversations_dialog)
        conv_menu.addAction("&Export conversation as Markdown…", self.export_conversation_dialog)
        edit_menu = self.menuBar().addMenu("&Edit")
        edit_menu.addAction("&Settings…", QKeySequence.StandardKey.Preferences, self.settings_dialog)
        view_menu = self.menuBar().addMenu("&View")
        self.replay_action = view_menu.addAction("&Replay the walk", self.replay)
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction("&About Shelfwise", self._about)

    # -- library ------------------------------------------------------------------------------------------------
    def refresh_library(self) -> None:
        self.library.refresh(self.reader)
        names = self.library.collections()
        self.answer_view.set_collections(names)
        self.encoder_bar.set_encoder(self.library_encoder(), busy=self.ingest_host.busy or self.read_only())

    def read_only(self) -> bool:
        """Whether the library refuses writes (damaged, or opened read-only)."""
        return self.reader.state.read_only

    def library_encoder(self) -> str:
        """The sentence encoder this library is built with (a new library: the default)."""
        return self.reader.library_encoder

    # -- the sentence encoder: which one, and switching it --------------------------------------------------------
    def estimate_switch(self, encoder: str) -> EncoderJob:
        """Measure what re-embedding the library with ``encoder`` takes; :meth:`_on_estimated` then asks."""
        self.encoder_bar.switch_button.setEnabled(False)
        self.statusBar().showMessage(f"Measuring what switching to {label(encoder)} takes on this machine…")
        return self.ingest_host.submit(EncoderJob(encoder, estimate=True))

    def _on_estimated(self, job: EncoderJob, estimate: SwitchEstimate) -> None:
        if self._closed:
            return
        self.last_estimate = estimate
        answer = QMessageBox.question(self, "Sentence encoder", switch_question(estimate))
        if answer == QMessageBox.StandardButton.Yes:
            self.switch_encoder(job.encoder)

    def switch_encoder(self, encoder: str) -> EncoderJob:
        """Make ``encoder`` the library's and re-embed it with progress; questions asked meanwhile use it already
        (by words and the vectors made so far)."""
        if self.settings.embedder_path is not None:  # a window opened with an encoder named follows the switch
            self.settings = replace(self.settings, embedder_path=encoder)
        self.query_host.reset(replace(self.settings, embedder_path=encoder))
        if not self.ingest_host.busy:
            self.ingest_bar.start(f"Re-embedding the library with {label(encoder)}…")
        return self.ingest_host.submit(EncoderJob(encoder))

    def resume_unfinished_index(self) -> list[str]:
        """At start: finish indexing that a quit or a crash interrupted (with the ingest bar's progress); returns
        the collections being finished."""
        if self.read_only() or self.reader.ingest_running():
            return []
        todo = [c.name for c in self.reader.collections() if self.reader.index_unfinished(c.name)]
        for name in todo:
            job = IngestJob([], name)
            if not self.ingest_host.busy:
                self.ingest_bar.start(f"Finishing the interrupted index of {name}…")
            self.ingest_host.submit(job)
        return todo

    def library_is_empty(self) -> bool:
        return self.reader.is_empty()

    def ingest(self, paths: list[str | Path], collection: str, force: bool = False) -> IngestJob:
        job = IngestJob([Path(p) for p in paths], collection, force=force)
        if not self.ingest_host.busy:
            self.ingest_bar.start(f"Reading {len(paths)} item(s) into {collection}…")
        self.ingest_host.submit(job)
        return job

    def remove_documents(self, ids: list[int], collection: str) -> None:
        answer = QMessageBox.question(self, "Remove", f"Remove {len(ids)} document(s) from the library? "
                                      "The files themselves are not touched.")
        if answer == QMessageBox.StandardButton.Yes:
            self.ingest_host.submit(RemoveJob(list(ids), collection))

    # worker signals arrive here (bound methods run on the UI thread); the ledger keeps the outcome until the end
    def _on_ingest_done(self, job: Job, report: IngestReport | None) -> None:
        self.ledger.done(job, report)

    def _on_ingest_cancelled(self, job: Job) -> None:
        self.ledger.cancelled(job)

    def _on_ingest_error(self, message: str) -> None:
        self.ledger.error(message)

    def _on_ingest_finished(self, job: Job) -> None:
        outcome = self.ledger.finished(job)
        if self._closed:
            return
        if isinstance(job, EncoderJob) and job.estimate:
            if outcome.kind == "error":
                self.statusBar().showMessage(*outcome.status())
            self.refresh_library()
            return
        self.refresh_library()
        self.statusBar().showMessage(*outcome.status())
        self.ingest_finished.emit(outcome.report)

    def _on_ingest_busy(self, busy: bool) -> None:
        self.encoder_bar.switch_button.setEnabled(not busy and not self.read_only())
        if not busy:
            self.ingest_bar.finish()

    # -- questions ----------------------------------------------------------------------------------------------
    def ask(self, question: str, collection: str = "", keep: list[int] | tuple[int, ...] = (),
            answer: bool = True, alone: bool = False, replaces_turn: int | None = None) -> QueryJob:
        """Run a question (cancelling one still running); ``keep`` forces branches open ("look here too"). An
        answered question is the next turn of the current conversation (read with it unless ``alone``)."""
        self.cancel_query()
        if self.demo.isVisible():
            self.demo.stop()
        collection = collection or self.answer_view.collection() or next(iter(self.library.collections()), "")
        job = self.session.start(question, collection, keep, answer=answer)
        if answer:
            job.conversation = self.conversation.conversation_id
            job.alone, job.replaces_turn = alone, replaces_turn
            shown = self.conversation.turns()
            self.thread_view.show_turns([t for t in shown if t.id != replaces_turn])
        self.reading_bar.show_note(None)
        self.export_action.setEnabled(False)
        self.answer_view.begin(job.question)
        self.walk.clear("Walking the library…")
        self.statusBar().showMessage("Searching…")
        self.query_host.submit(job)
        return job

    def ask_about(self, path: str, collection: str = "") -> str:
        """"Ask about this document / folder": the question box starts with the filter that limits it there;
        returns that filter."""
        known = [d.path for d in self.reader.documents()]
        scope_filter = in_filter(path, known)
        if collection:
            index = self.answer_view.scope.findData(collection)
            if index >= 0:
                self.answer_view.scope.setCurrentIndex(index)
        self.answer_view.ask_about_scope(scope_filter)
        return scope_filter

    def _on_opened(self, message: str) -> None:
        self.statusBar().showMessage(message, 10000)

    def cancel_query(self) -> None:
        self.query_host.cancel()

    def look_here(self, candidate: Candidate) -> None:
        again = self.session.look_here(candidate)
        if again is not None:
            self.statusBar().showMessage(f"Looking in {candidate.title} too…")
            question, collection, keep = again
            last = self.conversation.last_turn  # the same question again: it replaces its turn
            replaces = last.id if last is not None and last.question == question else None
            alone = last is not None and last.question == question and last.reading.mode == "alone"
            self.ask(question, collection, keep=keep, alone=alone, replaces_turn=replaces)

    def _on_query_job_finished(self, job: QueryJob) -> None:
        if self.session.is_current(job):
            self.query_finished.emit()

    def _on_searched(self, job: QueryJob, result: SearchResult) -> None:
        if not self.session.on_searched(job, result):
            return
        self.walk.show_trace(result.trace, forced=self.session.forced)
        self.answer_view.show_search(result, self.settings.answer_passages)
        self.export_action.setEnabled(True)
        if not job.answer:
            self._finish_query("Walk done")

    def _on_token(self, job: QueryJob, piece: str) -> None:
        if self.session.is_current(job):
            self.answer_view.append_token(piece)

    def _on_extracted(self, job: QueryJob, answer: Answer) -> None:
        """The sentence that answers: shown at once, and highlighted in its passage in the preview."""
        if not self.session.is_current(job):
            return
        self.answer_view.show_extract(answer)
        if answer.outline is not None:  # a structural answer: the outline it was read from, its part marked
            self.walk.show_outline(answer.outline, answer.search.trace if answer.search else None)
        self._open_answer_source(answer)
        self._opened_for = job

    def _on_generated(self, job: QueryJob, answer: Answer) -> None:
        """The model's answer is checked: the streamed text is replaced by the kept one, or withdrawn."""
        if self.session.is_current(job):
            self.answer_view.show_generated(answer)

    def _open_answer_source(self, answer: Answer) -> None:
        short = answer.short
        if short is not None and short.cells and short.operation:  # a table answer: the table as a grid
            grid = self.reader.table_grid(short.cells[0].table_id, [c.row for c in short.cells])
            if grid is not None:
                hit = next((c.hit for c in answer.citations if c.number == short.cells[0].number), None)
                self.preview.show_table(grid, short, hit)
                return
        if answer.sentences:
            first = answer.sentences[0]
            hit = next((c.hit for c in answer.citations if c.number == first.number), None)
            if hit is not None:
                self.show_hit(hit, (first.start, first.end))
                return
        if answer.citations:
            self.show_hit(min(answer.citations, key=lambda c: c.number).hit)

    def _on_answered(self, job: QueryJob, answer: Answer) -> None:
        update = self.session.on_answered(job, answer)
        if update is None:
            return
        if answer.outline is not None:
            self.walk.show_outline(answer.outline, answer.search.trace if answer.search else None)
        elif update.trace is not None:
            self.walk.show_trace(update.trace, forced=self.session.forced)
        self.answer_view.show_answer(answer)
        if self._opened_for is not job:  # open the answer's sentence, unless the extract already did
            self._open_answer_source(answer)
        self.export_action.setEnabled(True)
        self._finish_query(f"Answered in {answer.seconds:.1f} s")

    def _on_query_cancelled(self, job: QueryJob) -> None:
        if self.session.is_current(job):
            self.answer_view.show_cancelled()
            if self.session.last_search is None:
                self.walk.clear("Cancelled.")
            self._finish_query("Cancelled")

    def _on_query_failed(self, job: QueryJob, message: str) -> None:
        if self.session.is_current(job):
            self.answer_view.show_error(message)
            self.walk.clear("")
            self._finish_query("Failed")

    def _finish_query(self, message: str) -> None:
        self.statusBar().showMessage(message, 10000)

    def _on_query_busy(self, busy: bool) -> None:
        self.answer_view.set_busy(busy)

    # -- conversation -------------------------------------------------------------------------------------------
    def _on_read(self, job: QueryJob, reading: Reading) -> None:
        if self.session.is_current(job):
            self.reading_bar.show_note(self.conversation.note_for(reading))

    def _on_turned(self, job: QueryJob, conversation: Conversation, turn: Turn) -> None:
        self.conversation.on_turn(conversation, turn)
        if self.session.is_current(job):
            self.thread_view.show_turns(self.conversation.turns()[:-1])

    def ask_alone(self, question: str) -> None:
        """The last question again, read without the conversation (it replaces the follow-up it was)."""
        last = self.conversation.last_turn
        replaces = last.id if last is not None and last.question == question else None
        self.ask(question, alone=True, replaces_turn=replaces)

    def new_conversation(self) -> None:
        self.cancel_query()
        self.conversation.new()
        self.thread_view.show_turns([])
        self.reading_bar.show_note(None)
        self.answer_view.begin("")
        self.answer_view.status.setText("New conversation")
        self.walk.clear("")
        self.statusBar().showMessage("New conversation: the next question is read on its own", 8000)

    def reopen_conversation(self, conversation_id: int) -> None:
        self.cancel_query()
        conv = self.conversation.reopen(conversation_id)
        self.thread_view.show_turns(conv.turns)
        self.reading_bar.show_note(None)
        self.answer_view.begin("")
        self.answer_view.status.setText(f"Conversation reopened: {len(conv.turns)} question(s); ask a follow-up")
        if conv.turns:
            self.show_turn_walk(conv.turns[-1].position)

    def show_turn_walk(self, position: int) -> None:
        trace = self.conversation.trace_of(position)
        if trace is not None:
            self.walk.show_trace(trace)

    def show_turn_citation(self, position: int, number: int) -> None:
        found = self.conversation.citation_hit(position, number)
        if isinstance(found, Hit):
            self.show_hit(found)
        elif found is not None:
            self.statusBar().showMessage(f"[{number}] {found.where()}: the cited document is no longer in the "
                                         "library", 10000)
            self.thread_view.show_turns(self.thread_view.turns)

    def conversations_dialog(self) -> None:
        dialog = ConversationsDialog(self.conversation, self)
        if dialog.exec() and dialog.chosen is not None:
            self.reopen_conversation(dialog.chosen)

    def export_conversation(self, path: str | Path, conversation_id: int | None = None) -> Path:
        out = Path(path)
        write_text_atomically(out, self.conversation.export_markdown(conversation_id))
        return out

    def export_conversation_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export conversation", str(Path.home() / "conversation.md"),
                                              "Markdown (*.md)")
        if path:
            try:
                self.statusBar().showMessage(f"Exported to {self.export_conversation(path)}", 8000)
            except (OSError, ValueError) as exc:
                warn(self, "Export", str(exc))

    # -- preview ------------------------------------------------------------------------------------------------
    def _on_hit_activated(self, hit: Hit) -> None:
        """A citation or source clicked: its passage, with the answer's sentence highlighted when it is in it."""
        answer = self.answer_view.answer
        sentence = None
        if answer is not None:
            numbers = {c.number for c in answer.citations if c.hit.node_id == hit.node_id}
            first = next((s for s in answer.sentences if s.number in numbers), None)
            sentence = (first.start, first.end) if first is not None else None
        self.show_hit(hit, sentence)

    def show_hit(self, hit: Hit, sentence: tuple[int, int] | None = None) -> None:
        """A passage in the preview; ``sentence`` (offsets in ``hit.text``) is highlighted within it."""
        self.preview.show_hit(hit, self.reader.passage_context(hit), sentence)

    def show_candidate(self, candidate: Candidate) -> None:
        """A row of the walk: a passage opens the preview, any other node shows what the model read."""
        last = self.session.last_search
        shown = self.reader.shown_for(candidate, last.hits if last else ())
        if isinstance(shown, NodeText):
            self.preview.show_text(shown.title, shown.text, shown.path)
        else:
            self.show_hit(shown)

    # -- demo, export, settings ---------------------------------------------------------------------------------
    def replay(self) -> None:
        trace = self.session.replay_trace()
        if trace is not None:
            self.demo.start(trace)

    def export_markdown(self, path: str | Path) -> Path:
        text = self.session.export_markdown()
        out = Path(path)
        write_text_atomically(out, text)  # whole or not at all: a failed write keeps the old file
        return out

    def export_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export answer", str(Path.home() / "answer.md"),
                                              "Markdown (*.md)")
        if path:
            try:
                self.statusBar().showMessage(f"Exported to {self.export_markdown(path)}", 8000)
            except (OSError, ValueError) as exc:
                warn(self, "Export", str(exc))

    def settings_dialog(self) -> None:
        current = self.library_encoder()
        dialog = SettingsDialog(self.settings, self, encoder=current)
        if dialog.exec():
            self.apply_settings(dialog.settings())
            chosen = dialog.encoder_choice()
            if chosen != current and not self.read_only():  # measured and asked before anything changes
                self.estimate_switch(chosen)

    def apply_settings(self, settings: Settings) -> None:
        settings = replace(settings, db_path=self.settings.db_path)
        self.settings = settings
        self.query_host.reset(settings)
        self.ingest_host.reset(settings)
        try:  # the one settings file, which the command line reads too (QSettings keeps the geometry only)
            save_settings(settings)
        except OSError as exc:
            warn(self, "Settings", f"The settings apply to this session but could not be saved: {exc}")
            return
        self.statusBar().showMessage("Settings saved; the model reloads on the next question", 8000)

    def _about(self) -> None:
        QMessageBox.about(self, "About Shelfwise",
                          "<b>Shelfwise</b><br>Offline answers from your own documents. A small local model walks "
                          "the table of contents of your library, level by level, and cites what it found.")

    # -- lifetime -----------------------------------------------------------------------------------------------
    def _restore(self) -> None:
        qs = self.qsettings
        for key, widget in (("window/geometry", self), ("window/columns", self.columns), ("window/rows", self.rows)):
            value = qs.value(key)
            if isinstance(value, QByteArray | bytes):
                (widget.restoreGeometry if widget is self else widget.restoreState)(value)
        watched = qs.value("library/watched", [])
        for entry in watched if isinstance(watched, list) else [watched] if watched else []:
            coll, _, folder = str(entry).partition("\t")
            if folder and Path(folder).is_dir():
                self.library.watcher.watch(folder, coll)
                self.ingest([folder], coll)  # catch up with changes made while the app was closed

    def _save(self) -> None:
        qs = self.qsettings
        qs.setValue("window/geometry", self.saveGeometry())
        qs.setValue("window/columns", self.columns.saveState())
        qs.setValue("window/rows", self.rows.saveState())
        qs.setValue("library/watched", [f"{c}\t{f}" for f, c in self.library.watcher.watched()])
        qs.sync()

    def shutdown(self) -> None:
        """Cancel what runs, stop both threads (each closes its Shelf), close the store. Safe to call twice."""
        if self._closed:
            return
        self._closed = self.session.closed = True  # late worker signals are ignored from here on
        self.demo.timer.stop()
        self._save()
        self.query_host.shutdown()
        self.ingest_host.shutdown()
        self.reader.close()  # loaded no model; closes the window's store

    def closeEvent(self, event: QCloseEvent) -> None:
        self.statusBar().showMessage("Stopping…")
        self.shutdown()
        super().closeEvent(event)
