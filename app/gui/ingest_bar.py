"""The ingest strip under the library: a progress bar, the file being read, the ETA, and Cancel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget


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
        self.file_label = QLabel()
        self.file_label.setObjectName("ingestFile")
        self.file_label.setMinimumWidth(40)
        self.eta_label = QLabel()
        self.eta_label.setObjectName("ingestEta")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop after the file being read (what is done so far is kept)")
        self.cancel_button.clicked.connect(self._on_cancel)

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.bar, 1)
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
        self.setVisible(True)

    def update_progress(self, progress: Any) -> None:
        """Takes an ``IngestProgress(done, total, path, status, message, eta_seconds, elapsed)``."""
        total = int(getattr(progress, "total", 0) or 0)
        done = int(getattr(progress, "done", 0) or 0)
        if total > 0:
            self.bar.setRange(0, total)
            self.bar.setValue(min(done, total))
            self.bar.setFormat(f"ingest: {done}/{total} · %p%")
        if total > 0 and done >= total and getattr(progress, "status", "") != "working":
            self.bar.setRange(0, 0)  # files done; the index (embeddings, topics) is being updated
            self.file_label.setText("Updating the index: embeddings and topics…")
            self.eta_label.clear()
            return
        path = getattr(progress, "path", None)
        status = getattr(progress, "status", "") or ""
        name = Path(str(path)).name if path else ""
        text = name if status in ("", "ok", "reading", "started") else f"{name} ({status})"
        message = getattr(progress, "message", "") or ""
        if status == "working" and message:  # the parser's own progress, e.g. "OCR page 3/12"
            text = f"{name} · {message}"
        self.file_label.setText(text)
        self.file_label.setToolTip(str(path or ""))
        if message:
            self.file_label.setToolTip(f"{path}\n{message}")
        self.eta_label.setText(format_eta(getattr(progress, "eta_seconds", None)))

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
