"""The ingest strip under the library: a bar for parsing (the file being read, its ETA, Cancel) and beside it a
bar for indexing (embedding N/M with its ETA, then topics and calibration). Questions are never blocked by either:
they run on their own worker and answer from what is indexed so far."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from shelfwise.app.gui.plain import plain_label, plain_tip, shown_name
from shelfwise.core.api.indexing import IndexProgress, IngestProgress


def format_eta(seconds: float | None) -> str:
    """``ETA 2m 05s`` / ``ETA 40s`` / empty when unknown."""
    if seconds is None or seconds < 0:
        return ""
    seconds = round(seconds)
    if seconds >= 3600:
        return f"ETA {seconds // 3600}h {seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"ETA {seconds // 60}m {seconds % 60:02d}s"
    return f"ETA {seconds}s"


class IngestBar(QWidget):
    """Shows the progress of the running ingest; hidden when nothing is running."""

    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bar = QProgressBar()
        self.bar.setTextVisible(True)
        self.bar.setFormat("ingest: %p%")
        self.file_label = plain_label()
        self.file_label.setObjectName("ingestFile")
        self.file_label.setMinimumWidth(40)
        self.eta_label = QLabel()
        self.eta_label.setObjectName("ingestEta")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop after the file being read (what is done so far is kept)")
        self.cancel_button.clicked.connect(self._on_cancel)
        self.index_bar = QProgressBar()
        self.index_bar.setObjectName("indexBar")
        self.index_bar.setTextVisible(True)
        self.index_bar.setFormat("index: waiting")
        self.index_bar.setToolTip("Embedding, topics and calibration. You can ask meanwhile: passages not embedded "
                                  "yet are found by their words.")

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.bar, 1)
        row.addWidget(self.index_bar, 1)
        row.addWidget(self.cancel_button)
        info = QHBoxLayout()
        info.setContentsMargins(0, 0, 0, 0)
        info.addWidget(self.file_label, 1)
        info.addWidget(self.eta_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addLayout(info)
        self.setVisible(False)

    def start(self, what: str = "Preparing…") -> None:
        self.bar.setRange(0, 0)  # busy until the first progress report gives a total
        self.file_label.setText(what)
        self.eta_label.clear()
        self.cancel_button.setEnabled(True)
        self.index_bar.setRange(0, 1)
        self.index_bar.setValue(0)
        self.index_bar.setFormat("index: waiting")
        self.setVisible(True)

    def update_progress(self, progress: IngestProgress | IndexProgress) -> None:
        """Takes an ``IngestProgress(done, total, path, status, message, eta_seconds, elapsed)``, or an
        ``IndexProgress(stage, done, total, eta_seconds, ...)`` for the indexing bar."""
        if isinstance(progress, IndexProgress):
            self.update_index(progress)
            return
        total, done = progress.total, progress.done
        if total > 0:
            self.bar.setRange(0, total)
            self.bar.setValue(min(done, total))
            self.bar.setFormat(f"ingest: {done}/{total} · %p%")
        if total > 0 and done >= total and progress.status != "working":
            self.file_label.setText("Files read: you can ask now. Indexing…")
            self.eta_label.clear()
            return
        path, status = progress.path, progress.status
        name = shown_name(Path(str(path)).name) if path else ""
        text = name if status in ("", "ok", "reading", "started") else f"{name} ({status})"
        message = progress.message
        if status == "working" and message:  # the parser's own progress, e.g. "OCR page 3/12"
            text = f"{name} · {message}"
        self.file_label.setText(text)
        self.file_label.setToolTip(plain_tip(f"{path}\n{message}" if message else str(path or "")))
        self.eta_label.setText(format_eta(progress.eta_seconds))

    def update_index(self, progress: IndexProgress) -> None:
        stage, done, total = progress.stage, progress.done, progress.total
        if stage == "embedding" and total > 0:
            self.index_bar.setRange(0, total)
            self.index_bar.setValue(min(done, total))
            self.index_bar.setFormat(f"index: {done}/{total} · %p%")
            self.eta_label.setText(format_eta(progress.eta_seconds))
        elif stage == "sentences" and total > 0:
            self.index_bar.setRange(0, total)
            self.index_bar.setValue(min(done, total))
            self.index_bar.setFormat(f"index: sentences {done}/{total}")
            self.eta_label.setText(format_eta(progress.eta_seconds))
        elif stage == "calibrating" and total > 1:
            self.index_bar.setRange(0, total)
            self.index_bar.setValue(min(done, total))
            self.index_bar.setFormat(f"index: calibrating {done}/{total}")
            self.eta_label.setText(format_eta(progress.eta_seconds))
        elif stage == "calibrating":
            self.index_bar.setRange(0, 0)  # busy: topics, and calibration before its first probe
            self.index_bar.setFormat("index: topics and calibration")
            self.eta_label.clear()
        elif stage == "done":
            self.index_bar.setRange(0, 1)
            self.index_bar.setValue(1)
            self.index_bar.setFormat("index: done")
            self.eta_label.clear()

    def finish(self, summary: str = "") -> None:
        self.setVisible(False)
        self.bar.setRange(0, 1)
        self.bar.setValue(0)
        self.file_label.setText(summary)
        self.eta_label.clear()

    def _on_cancel(self) -> None:
        self.cancel_button.setEnabled(False)
        self.file_label.setText("Cancelling…")
        self.cancel_requested.emit()
