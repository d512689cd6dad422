"""The stored conversations: listed newest first, reopened, deleted, exported as Markdown."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from shelfwise.app.gui.conversation_session import ConversationSession
from shelfwise.app.gui.plain import shown_name, warn
from shelfwise.core.api.asking import write_text_atomically


class ConversationsDialog(QDialog):
    """``chosen`` is the id to reopen after ``exec()`` (None when closed without opening one)."""

    def __init__(self, session: ConversationSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Conversations")
        self.session = session
        self.chosen: int | None = None
        self.list = QListWidget()
        self.list.itemActivated.connect(lambda _item: self.open_selected())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.open_button = QPushButton("Open")
        self.delete_button = QPushButton("Delete")
        self.export_button = QPushButton("Export…")
        for b in (self.open_button, self.export_button, self.delete_button):
            buttons.addButton(b, QDialogButtonBox.ButtonRole.ActionRole)
        self.open_button.clicked.connect(self.open_selected)
        self.delete_button.clicked.connect(self.delete_selected)
        self.export_button.clicked.connect(self.export_selected)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.list)
        layout.addWidget(buttons)
        self.resize(560, 360)
        self.refresh()

    def refresh(self) -> None:
        self.list.clear()
        for s in self.session.listing():
            title = shown_name(s.title) or "(untitled)"
            item = QListWidgetItem(f"{title}  ·  {s.turns} question(s)  ·  {s.updated_at}")
            item.setData(Qt.ItemDataRole.UserRole, s.id)
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)
        for b in (self.open_button, self.delete_button, self.export_button):
            b.setEnabled(self.list.count() > 0)

    def selected_id(self) -> int | None:
        item = self.list.currentItem()
        return int(item.data(Qt.ItemDataRole.UserRole)) if item is not None else None

    def open_selected(self) -> None:
        cid = self.selected_id()
        if cid is not None:
            self.chosen = cid
            self.accept()

    def delete_selected(self) -> None:
        cid = self.selected_id()
        if cid is not None:
            self.session.delete(cid)
            self.refresh()

    def export_selected(self, path: str | None = None) -> Path | None:
        cid = self.selected_id()
        if cid is None:
            return None
        if not path:
            path, _ = QFileDialog.getSaveFileName(self, "Export conversation", str(Path.home() / "conversation.md"),
                                                  "Markdown (*.md)")
        if not path:
            return None
        try:
            out = Path(path)
            write_text_atomically(out, self.session.export_markdown(cid))
            return out
        except (OSError, ValueError) as exc:
            warn(self, "Export", str(exc))
            return None
