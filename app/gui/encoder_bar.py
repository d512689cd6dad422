"""Under the library: which sentence encoder this library is built with, and a button to switch to the other one.

The window measures what a switch would take (``EncoderJob(estimate=True)``) and asks before it re-embeds.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QWidget

from shelfwise.app.gui.plain import plain_label, shown_name
from shelfwise.core.api.indexing import LABELS, NOTES, SwitchEstimate, canonical, label
from shelfwise.core.settings import EMBEDDER_NAMES


def other_encoder(name: str) -> str:
    """The installed encoder a library built with ``name`` can switch to (EmbeddingGemma from anything else)."""
    others = [n for n in EMBEDDER_NAMES if n != canonical(name)]
    return "embeddinggemma" if "embeddinggemma" in others else others[0]


class EncoderBar(QWidget):
    switch_requested = Signal(str)  # the encoder to switch to

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.encoder = ""
        self.target = ""
        self.label = plain_label()  # the encoder's file name is stored in the library: shown as text
        self.label.setObjectName("hint")
        self.label.setWordWrap(True)
        self.switch_button = QPushButton()
        self.switch_button.clicked.connect(lambda: self.switch_requested.emit(self.target))
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.switch_button)

    def set_encoder(self, name: str, busy: bool = False) -> None:
        """Show ``name`` as the library's encoder; the button offers the other one (disabled while ``busy``)."""
        self.encoder = canonical(name)
        self.target = other_encoder(self.encoder)
        note = NOTES.get(self.encoder, "an embedding GGUF")
        self.label.setText(f"Encoder: {shown_name(label(self.encoder))} ({note})")
        self.switch_button.setText(f"Switch to {LABELS[self.target]}…")
        self.switch_button.setToolTip(f"{LABELS[self.target]}: {NOTES[self.target]}. Re-embeds this library (the "
                                      "time is measured first and shown before anything changes).")
        self.switch_button.setEnabled(not busy)


def switch_question(estimate: SwitchEstimate) -> str:
    """The question the window asks before a switch, with the measured time."""
    name = label(estimate.encoder)
    if not estimate.texts:
        return f"Switch this library to {name}? It has nothing to re-embed."
    return (f"Switch this library to {name} ({NOTES.get(estimate.encoder, 'an embedding GGUF')})?\n\n"
            f"It re-embeds {estimate.texts:,} texts ({estimate.tokens:,} tokens): about {duration(estimate.seconds)} "
            f"on this machine (measured now: {estimate.tokens_per_second:,.0f} tokens/s). Until it is done, "
            "questions are answered from the library's words and the new vectors made so far.")


def duration(seconds: float) -> str:
    """``40 s``, ``3 min``, ``1 h 20 min``."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"
