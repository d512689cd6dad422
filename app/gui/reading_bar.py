"""Under the search box: says when the question was read as a follow-up (and as what), with one click to ask it
alone instead. Emits ``ask_alone(question)``."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QSizePolicy, QWidget

from shelfwise.app.gui.conversation_session import ReadingNote
from shelfwise.app.gui.plain import plain_label, plain_tip, shown_name


class ReadingBar(QWidget):
    ask_alone = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("readingBar")
        self.label = plain_label()
        self.label.setObjectName("hint")
        self.label.setWordWrap(True)
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.alone_button = QPushButton("Ask it alone instead")
        self.alone_button.setToolTip("Ask this question without the conversation before it")
        self.alone_button.clicked.connect(self._on_alone)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.alone_button)
        self.note: ReadingNote | None = None
        self.hide()

    def show_note(self, note: ReadingNote | None) -> None:
        self.note = note
        if note is None:
            self.hide()
            return
        self.label.setText(shown_name(note.text))
        self.label.setToolTip(plain_tip(note.text))
        self.alone_button.setEnabled(True)
        self.show()

    def _on_alone(self) -> None:
        if self.note is not None:
            self.alone_button.setEnabled(False)
            self.ask_alone.emit(self.note.question)
