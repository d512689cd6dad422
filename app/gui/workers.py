"""Background work for the window: ingest and queries run on their own QThreads, never on the UI thread.

Each worker is a QObject moved to a QThread. It creates its own :class:`~shelfwise.core.shelf.Shelf` *inside*
that thread on its first job (one SQLite connection and one model per thread), turns the core's plain callbacks
into signals, and checks a :class:`CancelFlag` through the core's ``cancel`` callback. A :class:`WorkerHost`
owns the thread, hands jobs to the worker through a queued signal (so jobs run one after another, in order), and
shuts everything down cleanly: cancel, close the Shelf inside its thread, quit, wait.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtCore import QObject, QThread, Signal, Slot

from shelfwise.app.gui.jobs import EncoderJob, IngestJob, QueryJob, RemoveJob
from shelfwise.core.answers.types import Answer
from shelfwise.core.api.indexing import IndexProgress, IngestProgress, IngestReport
from shelfwise.core.settings import Settings

if TYPE_CHECKING:  # the facade itself loads on the worker's first job
    from shelfwise.core.api.asking import TurnEvents
    from shelfwise.core.shelf import Shelf

log = logging.getLogger(__name__)

ShelfFactory = Callable[[Settings], "Shelf"]
Job = IngestJob | RemoveJob | EncoderJob | QueryJob
J = TypeVar("J", IngestJob, RemoveJob, EncoderJob, QueryJob)
Progress = Callable[[IngestProgress | IndexProgress], None]


def default_shelf_factory(settings: Settings) -> Shelf:
    from shelfwise.core.shelf import Shelf

    return Shelf(settings)


def _is_cancelled(exc: BaseException) -> bool:
    from shelfwise.core.api.asking import Cancelled
    from shelfwise.core.api.indexing import IngestCancelled

    return isinstance(exc, (Cancelled, IngestCancelled))


def _message(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) < 600 else text[:600] + "…"


class ShelfWorker(QObject):
    """Base: owns a Shelf created lazily in the worker's thread; ``reset`` drops it (new settings, new data)."""

    error = Signal(str)
    finished = Signal(object)  # the job that ended (any outcome)

    def __init__(self, settings: Settings, shelf_factory: ShelfFactory | None = None) -> None:
        super().__init__()
        self._settings = settings
        self._factory = shelf_factory or default_shelf_factory
        self._shelf: Shelf | None = None

    def shelf(self) -> Shelf:
        if self._shelf is None:
            self._shelf = self._factory(self._settings)
        return self._shelf

    @Slot(object)
    def reset(self, settings: Settings | None = None) -> None:
        self._close_shelf()
        if settings is not None:
            self._settings = settings

    @Slot()
    def close(self) -> None:
        """Last job of the thread: close the Shelf here (its thread) and stop the event loop."""
        self._close_shelf()
        QThread.currentThread().quit()

    def _close_shelf(self) -> None:
        if self._shelf is not None:
            try:
                self._shelf.close()
            except Exception:
                log.exception("closing the shelf failed")
            self._shelf = None


def _ingest(shelf: Shelf, job: IngestJob, progress: Progress) -> IngestReport:
    """``Shelf.ingest`` of one job (``force`` re-reads unchanged files too)."""
    return shelf.ingest(job.paths, job.collection, progress=progress, index_progress=progress, cancel=job.cancel,
                        force=job.force)


class IngestWorker(ShelfWorker):
    progress = Signal(object)  # IngestProgress from core/ingestion/runner.py
    done = Signal(object, object)  # (job, report)
    cancelled = Signal(object)  # job
    estimated = Signal(object, object)  # (EncoderJob, SwitchEstimate): what switching the encoder would take

    @Slot(object)
    def run(self, job: IngestJob | RemoveJob | EncoderJob) -> None:
        try:
            if job.cancel():
                self.cancelled.emit(job)
                return
            shelf = self.shelf()
            report: IngestReport | None = None
            if isinstance(job, EncoderJob):
                self._encoder(shelf, job)
            elif isinstance(job, RemoveJob):
                shelf.remove_documents(job.document_ids, job.collection, cancel=job.cancel)
            else:
                report = _ingest(shelf, job, self.progress.emit)
            if job.cancel() or (report is not None and report.cancelled):
                self.cancelled.emit(job)
            else:
                self.done.emit(job, report)
        except BaseException as exc:
            if _is_cancelled(exc) or job.cancel():
                self.cancelled.emit(job)
            else:
                log.error("ingest failed:\n%s", traceback.format_exc())
                self.error.emit(_message(exc))
        finally:
            self.finished.emit(job)

    def _encoder(self, shelf: Shelf, job: EncoderJob) -> None:
        """Measure what switching to ``job.encoder`` would take, or switch: record it as the library's encoder,
        then re-embed every collection with a Shelf that reads it (progress as for an ingest)."""
        if job.estimate:
            self.estimated.emit(job, shelf.measure_encoder_switch(job.encoder))
            return
        shelf.switch_encoder(job.encoder)
        self._close_shelf()
        self._settings = replace(self._settings, embedder_path=job.encoder)
        shelf = self.shelf()
        for coll in shelf.collections():
            if job.cancel():
                return
            shelf.refresh(coll.name, progress=self.progress.emit, cancel=job.cancel)


class QueryWorker(ShelfWorker):
    """Signals carry the job first, so the window can drop what a superseded query still sends."""

    token = Signal(object, str)  # (job, piece of the model's answer, as it is written)
    searched = Signal(object, object)  # (job, SearchResult): the walk, before the answer is written
    extracted = Signal(object, object)  # (job, Answer): the sentence(s) that answer, before the model writes
    generated = Signal(object, object)  # (job, Answer): the model's answer checked: kept, or withdrawn
    answered = Signal(object, object)  # (job, Answer)
    cancelled = Signal(object)  # job
    failed = Signal(object, str)  # (job, message)
    read = Signal(object, object)  # (job, Reading): how a conversation's question is read, before the walk
    turned = Signal(object, object, object)  # (job, Conversation, Turn): the turn as stored

    @Slot(object)
    def run(self, job: QueryJob) -> None:
        try:
            if job.cancel():
                self.cancelled.emit(job)
                return
            shelf = self.shelf()
            collection = job.collection or None
            shelf.before_question(job.collection or "default")  # answer from what exists, or finish the index
            if job.answer and job.conversation is not None:
                answer = self._turn(shelf, job, job.conversation)
                if job.cancel():
                    self.cancelled.emit(job)
                else:
                    self.answered.emit(job, answer)
            elif job.answer:
                answer = shelf.ask(job.question, collection, events=self._events(job), keep=list(job.keep),
                                   cancel=job.cancel)
                if job.cancel():
                    self.cancelled.emit(job)
                else:
                    self.answered.emit(job, answer)
            else:
                result = shelf.search(job.question, collection, keep=list(job.keep), cancel=job.cancel)
                self.searched.emit(job, result)
        except BaseException as exc:
            if _is_cancelled(exc) or job.cancel():
                self.cancelled.emit(job)
            else:
                log.error("query failed:\n%s", traceback.format_exc())
                self.failed.emit(job, _message(exc))
                self.error.emit(_message(exc))
        finally:
            self.finished.emit(job)


    def _turn(self, shelf: Shelf, job: QueryJob, conversation: int) -> Answer:
        """A question of conversation ``conversation`` (0 starts a new one) through the facade; ``read`` and
        ``turned`` tell the window how it was read and what was kept."""
        conv, turn, answer = shelf.ask_in_conversation(
            conversation, job.question, job.collection or "default", alone=job.alone,
            replaces_turn=job.replaces_turn, keep=list(job.keep), cancel=job.cancel,
            events=self._events(job))
        self.turned.emit(job, conv, turn)
        return answer

    def _events(self, job: QueryJob) -> TurnEvents:
        """The events of ``job``'s answer (and of its turn: how it was read), each emitted as one of this worker's
        signals with the job."""
        from shelfwise.core.api.asking import TurnEvents

        return TurnEvents(on_search=lambda result: self.searched.emit(job, result),
                          on_extract=lambda answer: self.extracted.emit(job, answer),
                          on_token=lambda piece: self.token.emit(job, piece),
                          on_generated=lambda answer: self.generated.emit(job, answer),
                          on_reading=lambda reading: self.read.emit(job, reading))


class WorkerHost(QObject):
    """Owns one worker and its thread; ``submit`` queues a job, ``cancel`` cancels the running and queued ones."""

    _submit = Signal(object)
    _reset = Signal(object)
    _close = Signal()
    busy_changed = Signal(bool)

    def __init__(self, worker: ShelfWorker, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.worker = worker
        self.worker_thread = QThread()
        self.worker_thread.setObjectName(name)
        worker.moveToThread(self.worker_thread)
        self._submit.connect(worker.run)  # type: ignore[attr-defined]
        self._reset.connect(worker.reset)
        self._close.connect(worker.close)
        worker.finished.connect(self._on_finished)
        self._pending: list[Job] = []
        self._stopped = False
        self.worker_thread.start()

    @property
    def busy(self) -> bool:
        return bool(self._pending)

    @property
    def current(self) -> Job | None:
        return self._pending[0] if self._pending else None

    def submit(self, job: J) -> J:
        if self._stopped:
            raise RuntimeError("worker is shut down")
        self._pending.append(job)
        if len(self._pending) == 1:
            self.busy_changed.emit(True)
        self._submit.emit(job)
        return job

    def cancel(self) -> None:
        for job in self._pending:
            job.cancel.set()

    def reset(self, settings: Settings | None = None) -> None:
        """Drop the worker's Shelf after the jobs already queued (the next job builds a fresh one)."""
        if not self._stopped:
            self._reset.emit(settings)

    def _on_finished(self, job: Job) -> None:
        if job in self._pending:
            self._pending.remove(job)
        if not self._pending:
            self.busy_changed.emit(False)

    def shutdown(self, timeout_ms: int = 60_000) -> bool:
        """Cancel, close the Shelf in its own thread, stop the thread and wait for it. True if it stopped."""
        if self._stopped:
            return True
        self._stopped = True
        self.cancel()
        self._close.emit()
        stopped = self.worker_thread.wait(timeout_ms)
        if not stopped:
            log.warning("%s did not stop within %d ms", self.worker_thread.objectName(), timeout_ms)
        return stopped
