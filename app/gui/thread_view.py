"""The conversation's earlier turns above the current answer: each question, the answer shown, its sources (a
removed document says so) and a link that shows that turn's walk. Emits ``walk_requested(position)`` and
``citation_requested(position, number)``."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QUrl, Signal
from PySide6.QtWidgets import QTextBrowser, QWidget

from shelfwise.app.gui.answer_view import CITATION
from shelfwise.core.api.asking import REMOVED
from shelfwise.core.conversation.model import Turn


def turn_html(turn: Turn) -> str:
    pos = turn.position

    def link(match: re.Match[str]) -> str:
        nums = [n.strip() for n in match.group(1).replace(";", ",").split(",")]
        return "[" + ", ".join(f'<a href="cite:{pos}:{n}" style="text-decoration:none">{n}</a>' for n in nums) + "]"

    answer = CITATION.sub(link, html.escape(turn.shown if turn.found else "Not found in your documents."))
    how = ""
    if turn.reading.mode == "followup":
        how = (f"<br><span style='color:gray'>read as a follow-up: "
               f"{html.escape(' '.join(turn.reading.query.split())[:200])}</span>")
    elif turn.reading.mode in ("shift", "alone"):
        how = "<br><span style='color:gray'>read alone</span>"
    sources = "".join(
        f"<li><a href='cite:{pos}:{c.number}'>[{c.number}]</a> {html.escape(c.where())}"
        + (f" <b style='color:#b00020'>({REMOVED})</b>" if c.missing else "")
        + f"<br><i style='color:#5f6368'>“{html.escape(c.quote[:240])}”</i></li>"
        for c in turn.citations)
    return (f"<p style='margin:6px 0 2px 0'><b>{html.escape(turn.question[:500])}</b>{how}</p>"
            f"<p style='margin:0 0 2px 0'>{answer}</p>"
            + (f"<ul style='margin:0 0 2px 12px'>{sources}</ul>" if sources else "")
            + f"<p style='margin:0 0 8px 0'><a href='walk:{pos}'>Show this turn's walk</a></p>")


class ThreadView(QTextBrowser):
    walk_requested = Signal(int)
    citation_requested = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("conversationThread")
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)
        self.anchorClicked.connect(self._on_anchor)
        self.setPlaceholderText("Earlier questions of this conversation appear here.")
        self.turns: list[Turn] = []

    def show_turns(self, turns: list[Turn]) -> None:
        self.turns = list(turns)
        self.setVisible(bool(turns))
        self.setHtml("".join(turn_html(t) for t in turns))
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _on_anchor(self, url: QUrl) -> None:
        text = url.toString()
        kind, _, rest = text.partition(":")
        try:
            if kind == "walk":
                self.walk_requested.emit(int(rest))
            elif kind == "cite":
                pos, _, num = rest.partition(":")
                self.citation_requested.emit(int(pos), int(num))
        except ValueError:
            pass
