"""The preview strip: the cited place in its file, with the passage highlighted, and an "Open file" button.

PDF pages are rendered with PyMuPDF at the passage's page; the passage is found on the page (``search_for`` over
its text in short chunks, the first one being its first ~60 characters) and the matches are painted over the
page; on a scan (no text layer) the passage's stored OCR line boxes are painted instead. Slides, sheets and
sections are shown as text: the passage's neighbours with the passage highlighted.
"""

from __future__ import annotations

import html
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QProcess, QRectF, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QColor, QDesktopServices, QImage, QPainter, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from shelfwise.app.gui.open_target import OpenTarget, open_target
from shelfwise.app.gui.plain import plain_label, plain_tip, shown_name
from shelfwise.app.gui.table_grid import TableGridView
from shelfwise.core.answers.types import ShortAnswer
from shelfwise.core.api.reads import DocumentRow, TableGrid
from shelfwise.core.navigation.trace import Hit, Location

if TYPE_CHECKING:
    import pymupdf

Box = tuple[int, float, float, float, float]  # an OCR'd line: (page, x0, y0, x1, y1) in PDF points

log = logging.getLogger(__name__)
HIGHLIGHT = QColor(255, 214, 0, 110)
SENTENCE = QColor(255, 140, 0, 150)  # the answer's sentence, stronger than its passage
CHUNK_WORDS = 8
MAX_CHUNKS = 40
MAX_PAGE_WIDTH = 820  # pixels


def text_chunks(text: str, words: int = CHUNK_WORDS, first_chars: int = 60) -> list[str]:
    """Search strings for a passage: its first ~60 characters (at a word boundary), then runs of ``words`` words."""
    tokens = text.split()
    if not tokens:
        return []
    first: list[str] = []
    while tokens and len(" ".join(first + tokens[:1])) <= first_chars:
        first.append(tokens.pop(0))
    if not first:
        first.append(tokens.pop(0))
    out = [" ".join(first)]
    for i in range(0, len(tokens), words):
        piece = tokens[i:i + words]
        if len(" ".join(piece)) >= 12 or i + words >= len(tokens):
            out.append(" ".join(piece))
        if len(out) >= MAX_CHUNKS:
            break
    return [c for c in out if c.strip()]


def find_passage_rects(page: pymupdf.Page, text: str) -> list[pymupdf.Rect]:
    """Rectangles (PDF points) covering the passage on ``page``; empty if it is not found there."""
    rects: list[pymupdf.Rect] = []
    for chunk in text_chunks(text):
        try:
            found = page.search_for(chunk)
        except Exception:
            found = []
        if not found and len(chunk) > 30:
            found = page.search_for(chunk[:30].rsplit(" ", 1)[0])
        rects.extend(found)
    return rects


def render_pdf_page(
    path: str, page_number: int, passage: str, width: int, boxes: tuple[Box, ...] = (),
    sentence: str = "",
) -> tuple[QImage, int, int, float, int]:
    """(image with highlights, highlight count, page count, y of the first highlight as a share of the height,
    rectangles of ``sentence``).

    ``boxes`` are the passage's stored line boxes ``(page, x0, y0, x1, y1)`` (OCR'd text): used on a page where
    the passage cannot be found in the text layer (a scan has none). ``sentence`` (the answer's) is painted over
    the passage in a stronger colour and scrolled to."""
    import pymupdf  # imported on first use: the window starts without it

    with pymupdf.open(path) as doc:
        page_count = doc.page_count
        index = max(0, min(page_number - 1, page_count - 1))
        page = doc[index]
        zoom = max(0.4, min(3.0, width / max(page.rect.width, 1.0)))
        pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
        image = QImage(pix.samples, pix.width, pix.height, pix.stride, QImage.Format.Format_RGB888).copy()
        rects = find_passage_rects(page, passage) if passage else []
        if not rects:
            rects = [pymupdf.Rect(b[1:5]) for b in boxes if b[0] == index + 1]
        strong = find_passage_rects(page, sentence) if sentence else []
        page_height = page.rect.height
    if rects or strong:
        painter = QPainter(image)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Multiply)
        for colour, found in ((HIGHLIGHT, rects), (SENTENCE, strong)):
            painter.setBrush(colour)
            for r in found:
                painter.drawRect(QRectF(r.x0 * zoom - 1, r.y0 * zoom - 1, r.width * zoom + 2, r.height * zoom + 2))
        painter.end()
    anchor = strong or rects
    first_y = min(r.y0 for r in anchor) / page_height if anchor else 0.0
    return image, len(rects) + len(strong), page_count, first_y, len(strong)


class PreviewPane(QWidget):
    """Shows a hit (``show_hit``), any text (``show_text``), or a document's first page (``show_document``).
    ``opened(message)``: "Open file" ran, and where the file opened."""

    opened = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.header = plain_label("Preview: click a citation, a source or a passage in the walk")
        self.header.setObjectName("paneTitle")
        self.header.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.prev_button = QPushButton("◀")
        self.next_button = QPushButton("▶")
        for b, step in ((self.prev_button, -1), (self.next_button, 1)):
            b.setFixedWidth(32)
            b.setToolTip("Previous page" if step < 0 else "Next page")
            b.clicked.connect(lambda _=False, s=step: self._turn(s))
        self.open_button = QPushButton("Open file")
        self.open_button.setEnabled(False)
        self.open_button.clicked.connect(self.open_file)

        self.image = QLabel()
        self.image.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.page_view = QScrollArea()
        self.page_view.setWidget(self.image)
        self.page_view.setWidgetResizable(True)
        self.page_view.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.text = QTextBrowser()
        self.text.setObjectName("previewText")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.text)
        self.stack.addWidget(self.page_view)
        self.grid = TableGridView()  # a table answer: the value above the table, the cells used highlighted
        self.stack.addWidget(self.grid)

        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.prev_button)
        top.addWidget(self.next_button)
        top.addWidget(self.open_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.stack, 1)

        self.current_path: str | None = None
        self.current_location: Location | None = None  # the shown place, for "Open file"
        self.current_page: int | None = None
        self.page_count = 0
        self.highlights = 0
        self.sentence = ""  # the answer's sentence highlighted in the passage ("" when none)
        self._span: tuple[int, int] | None = None
        self.sentence_highlights = 0  # rectangles (PDF) or spans (text) painted for the sentence
        self._passage = ""
        self._boxes: tuple[Box, ...] = ()  # the passage's OCR line boxes, if any
        self._label = ""
        self._rendered_width = 0
        self._resize_timer = QTimer(self)
        self._resize_timer.setSingleShot(True)
        self._resize_timer.setInterval(150)
        self._resize_timer.timeout.connect(self._rerender)
        self._set_paging(False)

    # -- showing ------------------------------------------------------------------------------------------------
    def show_hit(self, hit: Hit, context: list[str] | None = None,
                 sentence: tuple[int, int] | None = None) -> None:
        """A passage: its PDF page with the passage highlighted, or its text among its neighbours; ``sentence``
        (character offsets in the passage) highlighted more strongly within it."""
        self.sentence = hit.text[sentence[0]:sentence[1]] if sentence else ""
        self._span = sentence
        self.current_path = hit.path
        self.current_location = hit.location
        self.open_button.setEnabled(bool(hit.path) and Path(hit.path).exists())
        if hit.path:
            target = open_target(hit.path, hit.location)
            self.open_button.setToolTip(plain_tip(f"Open at {target.place}" if target.exact and target.place else
                                                  target.note or "Open the file"))
        self._passage = hit.text
        self._boxes = tuple(hit.location.boxes or ())
        where = hit.location_label()
        heading = " > ".join(h for h in hit.heading_path if h)
        self._label = shown_name(" · ".join(x for x in (Path(hit.path).name, heading, where) if x))
        page = hit.location.page
        if hit.path.lower().endswith(".pdf") and page and Path(hit.path).exists():
            self._show_pdf_page(page)
            return
        self.current_page = page or hit.location.slide
        self._show_context(hit.text, context or [hit.text])

    def show_table(self, grid: TableGrid, short: ShortAnswer | None, hit: Hit | None = None) -> None:
        """A table an answer computed from (``Shelf.table_grid``) as a grid, with the value above it; ``hit`` (a
        passage of the table) gives the file "Open file" opens."""
        self.current_path = hit.path if hit is not None else None
        self.current_location = hit.location if hit is not None else None
        self.current_page = None
        self.sentence, self._span = "", None
        self.open_button.setEnabled(bool(self.current_path) and Path(str(self.current_path)).exists())
        where = f"{grid.sheet} · " if grid.sheet else ""
        name = Path(hit.path).name + " · " if hit is not None and hit.path else ""
        self.header.setText(f"Preview: {shown_name(name + where + grid.title)}")
        self.grid.show_table(grid, short)
        self.highlights = len(self.grid.highlighted)
        self.stack.setCurrentWidget(self.grid)
        self._set_paging(False)

    def show_text(self, title: str, text: str, path: str | None = None) -> None:
        self.current_path = path
        self.current_location = None
        self.current_page = None
        self.highlights = 0
        self.sentence, self._span = "", None
        self.open_button.setEnabled(bool(path and Path(path).exists()))
        self.header.setText(f"Preview: {shown_name(title)}")
        self.text.setHtml(f"<h3>{html.escape(title)}</h3><p>{html.escape(text).replace(chr(10), '<br>')}</p>")
        self.stack.setCurrentWidget(self.text)
        self._set_paging(False)

    def show_document(self, doc: DocumentRow) -> None:
        """A library document: page 1 of a PDF, otherwise what the library knows about it."""
        self.current_path = doc.path
        self.current_location = None
        self._passage = ""
        self._boxes = ()
        self.sentence, self._span = "", None
        self._label = shown_name(Path(doc.path).name)
        self.open_button.setEnabled(Path(doc.path).exists())
        if doc.path.lower().endswith(".pdf") and doc.status == "ok" and Path(doc.path).exists():
            self._show_pdf_page(1)
            return
        lines = [doc.title or Path(doc.path).name, doc.path, f"status: {doc.status}"]
        if doc.message:
            lines.append(doc.message)
        self.show_text(Path(doc.path).name, "\n".join(lines), doc.path)

    def clear(self) -> None:
        self.current_path = None
        self.current_page = None
        self.text.clear()
        self.image.clear()
        self.open_button.setEnabled(False)
        self._set_paging(False)

    # -- PDF ----------------------------------------------------------------------------------------------------
    def _target_width(self) -> int:
        """Fit the page to the pane's width, but no wider than a comfortable reading size."""
        return max(min(self.stack.width() - 40, MAX_PAGE_WIDTH), 320)

    def _show_pdf_page(self, page: int) -> None:
        assert self.current_path is not None
        try:
            image, self.highlights, self.page_count, first_y, self.sentence_highlights = render_pdf_page(
                self.current_path, page, self._passage, self._target_width(), self._boxes, self.sentence
            )
        except Exception as exc:
            log.warning("cannot render %s p. %s: %s", self.current_path, page, exc)
            self.show_text(self._label, f"Cannot show this page: {exc}\n\n{self._passage}", self.current_path)
            return
        self.current_page = max(1, min(page, self.page_count))
        self._rendered_width = self._target_width()
        self.image.setPixmap(QPixmap.fromImage(image))
        self.stack.setCurrentWidget(self.page_view)
        found = "passage highlighted" if self.highlights else ("" if not self._passage else "passage not located")
        name = self._label.split(" · ")[0]
        self.header.setText(
            " · ".join(x for x in (f"Preview: {name}", f"page {self.current_page} of {self.page_count}", found) if x)
        )
        self.header.setToolTip(plain_tip(self._label))
        self._set_paging(True)
        QTimer.singleShot(0, lambda: self._scroll_to(first_y, image.height()))

    def _scroll_to(self, share: float, height: int) -> None:
        bar = self.page_view.verticalScrollBar()
        bar.setValue(max(0, int(share * height) - 40))

    def _turn(self, step: int) -> None:
        if self.current_path and self.current_page and self.stack.currentWidget() is self.page_view:
            target = self.current_page + step
            if 1 <= target <= self.page_count:
                self._show_pdf_page(target)

    def _rerender(self) -> None:
        on_page = self.stack.currentWidget() is self.page_view and self.current_page and self.current_path
        if on_page and abs(self._target_width() - self._rendered_width) > 24:
            self._show_pdf_page(self.current_page)  # type: ignore[arg-type]

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._resize_timer.start()

    def _set_paging(self, on: bool) -> None:
        self.prev_button.setVisible(on)
        self.next_button.setVisible(on)

    # -- text ---------------------------------------------------------------------------------------------------
    def _show_context(self, passage: str, context: list[str]) -> None:
        blocks = []
        self.highlights = 0
        span = self._span
        self.sentence_highlights = 0
        for text in context:
            body = html.escape(text).replace("\n", "<br>")
            if text == passage and not self.highlights:
                self.highlights = 1
                if span is not None and 0 <= span[0] < span[1] <= len(text):
                    def esc(part: str) -> str:
                        return html.escape(part).replace("\n", "<br>")

                    self.sentence_highlights = 1
                    body = (f"{esc(text[:span[0]])}<span style='background:#ffb74d; font-weight:600'>"
                            f"{esc(text[span[0]:span[1]])}</span>{esc(text[span[1]:])}")
                blocks.append(f"<a name='hit'></a><p style='background:#fff0a0; padding:4px'>{body}</p>")
            else:
                blocks.append(f"<p style='color:#444'>{body}</p>")
        self.text.setHtml("".join(blocks))
        self.stack.setCurrentWidget(self.text)
        self.header.setText(f"Preview: {self._label} · passage highlighted")
        self._set_paging(False)
        QTimer.singleShot(0, lambda: self.text.scrollToAnchor("hit"))

    def open_target(self) -> OpenTarget | None:
        """Where "Open file" opens the shown place (:mod:`shelfwise.app.gui.open_target`)."""
        if not self.current_path:
            return None
        return open_target(self.current_path, self.current_location)

    def open_file(self) -> None:
        """The file in the system viewer at the shown page where the viewer can be told it; else at its start,
        with ``opened`` saying where the place is (the preview shows it)."""
        target = self.open_target()
        if target is None:
            return
        if target.argv and QProcess.startDetached(target.argv[0], list(target.argv[1:]))[0]:
            self.opened.emit(f"Opened {Path(target.path).name} at {target.place}")
            return
        QDesktopServices.openUrl(QUrl(target.url) if target.url else QUrl.fromLocalFile(target.path))
        self.opened.emit(target.note or f"Opened {Path(target.path).name}")
