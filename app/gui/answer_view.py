"""The centre of the window: the question box, the answer streaming in with [n] links, and the Sources list."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt, QUrl, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QSizePolicy,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from shelfwise.app.gui.plain import plain_label, plain_tip, shown_name
from shelfwise.core.answers.types import Answer, ShortAnswer
from shelfwise.core.api.asking import source_label
from shelfwise.core.navigation.trace import Hit, SearchResult

ROLE_SNIPPET = Qt.ItemDataRole.UserRole + 1


class SourceDelegate(QStyledItemDelegate):
    """A source in two lines: ``[1] file > heading > p. 4``, then the start of the passage, greyed and elided."""

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        snippet = str(index.data(ROLE_SNIPPET) or "")
        opt.text = ""
        style = opt.widget.style() if opt.widget else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        r = option.rect.adjusted(6, 3, -6, -3)
        fm = QFontMetrics(option.font)
        painter.save()
        painter.setPen(option.palette.color(QPalette.ColorRole.Text))
        label = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        painter.drawText(QRect(r.left(), r.top(), r.width(), fm.height()), Qt.AlignmentFlag.AlignVCenter,
                         fm.elidedText(label, Qt.TextElideMode.ElideMiddle, r.width()))
        painter.setPen(QColor("#5f6368"))
        painter.drawText(QRect(r.left() + 14, r.top() + fm.height() + 1, r.width() - 14, fm.height()),
                         Qt.AlignmentFlag.AlignVCenter,
                         fm.elidedText(snippet, Qt.TextElideMode.ElideRight, r.width() - 14))
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        fm = QFontMetrics(option.font)
        return QSize(200, 2 * fm.height() + 8)


CITATION = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")


def answer_html(text: str, known: set[int] | None = None) -> str:
    """The answer as HTML: escaped, paragraphs kept, every ``[n]`` (or ``[1, 2]``) a ``cite:n`` link."""

    def link(match: re.Match[str]) -> str:
        numbers = [int(n) for n in re.split(r"\s*[,;]\s*", match.group(1))]
        parts = []
        for n in numbers:
            if known is not None and n not in known:
                parts.append(str(n))
            else:
                parts.append(f'<a href="cite:{n}" style="text-decoration:none; font-weight:600">{n}</a>')
        return "[" + ", ".join(parts) + "]"

    escaped = html.escape(text)
    linked = CITATION.sub(link, escaped)
    paragraphs = [p.replace("\n", "<br>") for p in re.split(r"\n\s*\n", linked.strip())]
    return "".join(f"<p style='margin:0 0 8px 0'>{p}</p>" for p in paragraphs)


def _inline(paragraphs: str) -> str:
    """``answer_html``'s paragraphs as one run of text (inside a list item)."""
    return re.sub(r"</p><p style='margin:0 0 8px 0'>", "<br>", paragraphs).removeprefix(
        "<p style='margin:0 0 8px 0'>").removesuffix("</p>")


def short_html(short: ShortAnswer, known: set[int] | None = None, below: str = "") -> str:
    """The value asked for, large, with its citation; a table value's explanation (unless the text ``below`` it
    says the same, cited) and cells beneath it."""
    cite = f" [{short.number}]" if short.number else ""
    inner = _inline(answer_html(short.text + cite, known))
    out = f"<p class='shortAnswer' style='font-size:x-large; font-weight:600; margin:0 0 6px 0'>{inner}</p>"
    if short.explanation and " ".join(CITATION.sub("", below).split()) != " ".join(short.explanation.split()):
        out += f"<p style='color:gray; margin:0 0 4px 0'>{html.escape(short.explanation)}</p>"
    if short.cells:
        cells = "; ".join(f"{c.address} = {c.value}" for c in short.cells)
        out += f"<p style='color:gray; margin:0 0 4px 0'>Cells used: {html.escape(cells)}</p>"
    return out


class AnswerView(QWidget):
    """Emits ``ask_requested(question, collection or "")`` and ``hit_activated(hit)`` (a citation or a source)."""

    ask_requested = Signal(str, str)
    cancel_requested = Signal()
    hit_activated = Signal(object)
    ask_about = Signal(str, str)  # (a source's document path, ""): "Ask about this document" on a source

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.question = QLineEdit()
        self.question.setPlaceholderText("Ask a question about your documents…")
        self.question.setClearButtonEnabled(True)
        self.question.returnPressed.connect(self._on_ask)
        self.scope = QComboBox()
        self.scope.setToolTip("Which collection to search")
        self.scope.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.ask_button = QPushButton("Ask")
        self.ask_button.setDefault(True)
        self.ask_button.clicked.connect(self._on_ask)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_requested)

        self.status = plain_label()
        self.status.setObjectName("answerStatus")
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.browser = QTextBrowser()
        self.browser.setObjectName("answerText")
        self.browser.setOpenLinks(False)
        self.browser.setOpenExternalLinks(False)
        self.browser.anchorClicked.connect(self._on_anchor)
        self.browser.setPlaceholderText("The answer appears here, with numbered sources you can click.")
        self.sources = QListWidget()
        self.sources.setObjectName("sources")
        self.sources.setAlternatingRowColors(True)
        self.sources.setItemDelegate(SourceDelegate(self.sources))
        self.sources.itemActivated.connect(self._on_source)
        self.sources.itemClicked.connect(self._on_source)
        self.sources.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.sources.customContextMenuRequested.connect(self._source_menu)

        ask_row = QHBoxLayout()
        ask_row.addWidget(self.question, 1)
        ask_row.addWidget(self.scope)
        ask_row.addWidget(self.ask_button)
        ask_row.addWidget(self.cancel_button)
        answer_title = QLabel("Answer")
        answer_title.setObjectName("paneTitle")
        sources_title = QLabel("Sources")
        sources_title.setObjectName("paneTitle")
        self.sources_title = sources_title
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(ask_row)
        title_row = QHBoxLayout()
        title_row.addWidget(answer_title)
        title_row.addWidget(self.status, 1, Qt.AlignmentFlag.AlignRight)
        layout.addLayout(title_row)
        layout.addWidget(self.browser, 3)
        layout.addWidget(sources_title)
        layout.addWidget(self.sources, 2)
        self.sources.setMinimumHeight(80)

        self._text = ""
        self._streamed = ""  # the model's answer as it is written, until it is checked
        self._provisional: dict[int, Hit] = {}
        self._cited: dict[int, Hit] = {}
        self.answer: Answer | None = None
        self.search: SearchResult | None = None

    # -- inputs -------------------------------------------------------------------------------------------------
    def set_collections(self, names: list[str]) -> None:
        current = self.scope.currentData()
        self.scope.blockSignals(True)
        self.scope.clear()
        for name in names:
            self.scope.addItem(name, name)
        index = self.scope.findData(current)
        self.scope.setCurrentIndex(max(index, 0))
        self.scope.setVisible(len(names) > 1)
        self.scope.blockSignals(False)

    def collection(self) -> str:
        return str(self.scope.currentData() or "")

    def _on_ask(self) -> None:
        text = self.question.text().strip()
        if text and self.ask_button.isEnabled():
            self.ask_requested.emit(text, self.collection())

    # -- a query's life -----------------------------------------------------------------------------------------
    def set_busy(self, busy: bool) -> None:
        self.ask_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)

    def begin(self, question: str) -> None:
        """A new query: clear the answer, show that the walk is running."""
        self.question.setText(question)
        self.question.setCursorPosition(0)
        self._text = ""
        self._streamed = ""
        self._provisional = {}
        self._cited = {}
        self.answer = None
        self.search = None
        self.browser.clear()
        self.sources.clear()
        self.sources_title.setText("Sources")
        self.status.setText("Walking the library…")

    def show_search(self, result: SearchResult, answer_passages: int = 5) -> None:
        """The walk is done: the passages the answer will be written from are the provisional sources."""
        self.search = result
        self._provisional = {i: hit for i, hit in enumerate(result.hits[:answer_passages], 1)}
        self._fill_sources(self._provisional)
        self.status.setText(f"Found {len(result.hits)} passages · writing the answer…")
        if not result.hits:
            self.status.setText("Nothing found in your documents")

    def show_extract(self, answer: Answer) -> None:
        """The sentence(s) that answer, at once, with their sources; the model's answer streams in below."""
        self.answer = answer
        self._text = answer.text
        self._cited = {c.number: c.hit for c in answer.citations}
        self._render()
        if answer.found and answer.sentences:
            self.status.setText(f"Answer from the sources in {answer.first_seconds:.1f} s · the model is "
                                "writing…")

    def append_token(self, piece: str) -> None:
        """A piece of the model's answer, shown below the extracted one until it is checked."""
        self._streamed += piece
        self._render()

    def show_generated(self, answer: Answer) -> None:
        """The model's answer is checked: the kept text replaces the streamed one, or it is withdrawn (why)."""
        self.answer = answer
        self._streamed = ""
        self._cited = {c.number: c.hit for c in answer.citations}
        self._render()

    def streamed(self) -> str:
        """The model's answer streamed so far and not yet checked ("" once checked)."""
        return self._streamed

    def show_answer(self, answer: Answer) -> None:
        self.answer = answer
        if answer.search is not None:
            self.search = answer.search
        self._text = answer.text
        self._streamed = ""
        self._cited = {c.number: c.hit for c in answer.citations}
        if self._cited:
            self._fill_sources(self._cited)
        elif not self._provisional:
            self.sources.clear()
        self._render()
        found = "" if answer.found else "Not found in your documents · "
        # not found: the passages listed are the nearest ones, offered as related, not as an answer
        self.sources_title.setText("Sources" if answer.found or answer.kind or not self.sources.count()
                                   else "Related passages (nearest; they do not answer it)")
        first = f"first answer {answer.first_seconds:.1f} s · " if answer.sentences else ""
        notes = list(dict.fromkeys([*answer.notes, *(answer.search.trace.notes if answer.search else [])]))
        clipped = " · ".join(notes) + " · " if notes else ""  # e.g. the question was clipped to fit the model
        scope = answer.search.trace.scope if answer.search else ""
        where = f"Scope {scope} · " if scope else ""
        kind = "from the outline · " if answer.kind else ""
        self.status.setText(f"{where}{kind}{clipped}{found}{first}{answer.tokens} tokens · {answer.seconds:.1f} s")
        self.status.setToolTip(plain_tip("\n".join(notes)))

    def show_cancelled(self) -> None:
        self.status.setText("Cancelled")
        if self._streamed:  # a model's answer cut off mid-way was never checked: it goes
            self._streamed = ""
            self._render()
        if not self._text:
            self.browser.setHtml("<p style='color:gray'>Cancelled.</p>")

    def show_error(self, message: str) -> None:
        self.status.setText("Failed")
        self.browser.setHtml(f"<p style='color:#b00020'>{html.escape(message)}</p>")

    # -- rendering ----------------------------------------------------------------------------------------------
    def hits_by_number(self) -> dict[int, Hit]:
        return {**self._provisional, **self._cited}

    def text(self) -> str:
        return self._text

    def _render(self) -> None:
        known = set(self.hits_by_number())
        parts = self.answer is not None and self.answer.by_steps  # the steps below are the answer
        body = "" if parts else answer_html(self._text, known)
        if self.answer is not None and self.answer.found and self.answer.short is not None:
            body = short_html(self.answer.short, known, self._text) + body
        if self._streamed:
            body += ("<p class='generating' style='color:gray; margin:8px 0 0 0'>The model's answer (being "
                     f"written; checked against the sources when done)</p>{answer_html(self._streamed, known)}")
        elif self.answer is not None and self.answer.generated:
            checks = html.escape("; ".join(self.answer.generation_checks))
            body += (f"<p class='checkedLabel' style='color:gray; margin:8px 0 0 0'>The model's answer (checked: "
                     f"{checks})</p>{answer_html(self.answer.generated, known)}")
        elif self.answer is not None and self.answer.generation_note:
            body += (f"<p class='generationNote' style='color:gray; margin:8px 0 0 0'>"
                     f"{html.escape(self.answer.generation_note)}</p>")
        if self.answer is not None and self.answer.steps:
            steps = "".join(
                f"<li><b>{html.escape(s.question)}</b>"
                + (f" <span style='color:gray'>({html.escape(s.label)})</span>" if s.decided else "")
                + f"<br>{_inline(answer_html(s.answer, known))}</li>"
                for s in self.answer.steps
            )
            decided = any(s.decided for s in self.answer.steps)
            title = ("Steps" if not parts else "The question in parts (adaptive retrieval)" if decided
                     else "Your questions, each answered from your documents")
            body = f"<p style='color:gray; margin:0'>{title}</p><ol style='margin-top:2px'>{steps}</ol>" + body
        bar = self.browser.verticalScrollBar()
        at_end = bar.value() >= bar.maximum() - 4
        self.browser.setHtml(body)
        if at_end:
            bar.setValue(bar.maximum())

    def _fill_sources(self, hits: dict[int, Hit]) -> None:
        self.sources.clear()
        for number in sorted(hits):
            hit = hits[number]
            snippet = " ".join(hit.text.split())
            item = QListWidgetItem(f"[{number}] {shown_name(source_label(hit))}")
            item.setData(Qt.ItemDataRole.UserRole, number)
            item.setData(ROLE_SNIPPET, f"“{snippet[:400]}”")
            item.setToolTip(plain_tip(f"{hit.path}\n\n{snippet[:500]}"))
            self.sources.addItem(item)

    def _on_anchor(self, url: QUrl) -> None:
        if url.scheme() == "cite":
            self.activate_citation(int(url.path() or url.toString().split(":", 1)[1]))

    def activate_citation(self, number: int) -> None:
        hit = self.hits_by_number().get(number)
        if hit is not None:
            for row in range(self.sources.count()):
                item = self.sources.item(row)
                if item.data(Qt.ItemDataRole.UserRole) == number:
                    self.sources.setCurrentItem(item)
            self.hit_activated.emit(hit)

    def source_actions(self, number: int) -> list[tuple[str, Callable[[], None]]]:
        """The context menu of source ``[number]``: (label, action) pairs."""
        hit = self.hits_by_number().get(number)
        if hit is None or not hit.path:
            return []
        folder = str(Path(hit.path).parent)
        return [("Show", lambda: self.hit_activated.emit(hit)),
                ("Ask about this document…", lambda: self.ask_about.emit(hit.path, "")),
                (f"Ask about its folder ({Path(folder).name})…", lambda: self.ask_about.emit(folder, ""))]

    def _source_menu(self, pos: QPoint) -> None:
        item = self.sources.itemAt(pos)
        if item is None:
            return
        menu = QMenu(self)
        for label, action in self.source_actions(int(item.data(Qt.ItemDataRole.UserRole))):
            menu.addAction(label, action)
        menu.exec(self.sources.viewport().mapToGlobal(pos))

    def ask_about_scope(self, scope_filter: str) -> None:
        """Start a question limited by ``scope_filter`` (``in:handbook.pdf``): typed into the box, the cursor
        after it, for the user to write the question."""
        text = self.question.text()
        rest = " ".join(w for w in text.split() if not w.startswith("in:"))
        self.question.setText(f"{scope_filter} {rest}".rstrip() + " ")
        self.question.setFocus()
        self.question.setCursorPosition(len(self.question.text()))
        self.status.setText(f"Ask about {scope_filter[3:]}: type your question after the filter")

    def _on_source(self, item: QListWidgetItem) -> None:
        number = item.data(Qt.ItemDataRole.UserRole)
        hit = self.hits_by_number().get(int(number))
        if hit is not None:
            self.hit_activated.emit(hit)
