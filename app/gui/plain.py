"""Text from files shown as text in the window, never as markup.

Qt renders a QLabel, a tooltip or a message box as rich text when the string merely looks like HTML
(``Qt.mightBeRichText``): a heading ``<img src="/tmp/x.png">`` would load a local image, ``<h1 style=...>`` restyle the
pane. Every widget that shows names, headings, passages or model output is either plain text (:func:`plain_label`,
:func:`warn`) or rich text that Shelfwise builds itself from escaped pieces (:func:`plain_tip`, the answer and
preview browsers). ``tests/test_gui_plain.py`` walks the window's widgets to check it.

A name (a file's, a heading's, a document's title, the encoder's file) is also shown through :func:`shown_name`, the
command line's rule (``app/cli/shown.py``'s ``shown``): every control character (C0 and C1), bidi control,
zero-width character and line separator written escaped (``\\u202e``), so a name cannot reorder or hide the text
around it in a label, a list or the walk tree, as it cannot in the terminal.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as QtGui
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget

from shelfwise.app.cli.shown import shown


def shown_name(text: object) -> str:
    """``text`` (a name) with controls, bidi and zero-width characters escaped as the command line prints them."""
    return shown(text)


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A QLabel that shows its text as it is, whatever it holds."""
    label = QLabel(parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setText(text)
    return label


def plain_tip(text: str) -> str:
    """A tooltip showing ``text`` as it is. A tooltip has no plain-text mode: Qt guesses from the string
    (``Qt.mightBeRichText``), so text that looks like markup is escaped and wrapped in markup of our own; other text
    is shown plain by Qt already and is returned unchanged."""
    if not QtGui.mightBeRichText(text):
        return text
    return f"<p style='white-space:pre-wrap'>{html.escape(text)}</p>"


def warn(parent: QWidget | None, title: str, text: str) -> None:
    """A warning box whose text is shown as it is (an error message holds file names)."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.exec()
