"""A table shown as a grid in the preview (issue 49): the computed value above it, the operation in words, and the
table (``Shelf.table_grid``) in a QTableView with the cells the answer used highlighted and the first of them in
view."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QAbstractItemView, QLabel, QTableView, QVBoxLayout, QWidget

from shelfwise.app.gui.plain import plain_label, plain_tip
from shelfwise.core.answers.types import ShortAnswer
from shelfwise.core.api.reads import TableGrid

USED = QColor(255, 236, 150)  # a cell the answer used


class TableGridView(QWidget):
    """``show_table(grid, short)``: the value and its explanation above the grid; ``highlighted`` lists the
    (row, column) cells painted, in the grid's own rows and columns."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.value = QLabel()
        self.value.setObjectName("tableValue")
        self.value.setTextFormat(Qt.TextFormat.PlainText)
        font = self.value.font()
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        self.value.setFont(font)
        self.explanation = plain_label("")
        self.explanation.setWordWrap(True)
        self.model = QStandardItemModel(self)
        self.view = QTableView()
        self.view.setModel(self.model)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setAlternatingRowColors(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.value)
        layout.addWidget(self.explanation)
        layout.addWidget(self.view, 1)
        self.highlighted: list[tuple[int, int]] = []

    def show_table(self, grid: TableGrid, short: ShortAnswer | None) -> None:
        """``short``: the answer's value, its cells in ``grid.table_id`` (None: the table alone, nothing marked)."""
        self.value.setText(short.text if short is not None else "")
        self.explanation.setText(short.explanation if short is not None else "")
        self.model.clear()
        self.model.setHorizontalHeaderLabels(list(grid.names))
        for row in grid.rows:
            self.model.appendRow([QStandardItem(cell) for cell in row])
        self.model.setVerticalHeaderLabels(list(grid.row_labels))
        where = {r: i for i, r in enumerate(grid.row_numbers)}
        self.highlighted = []
        for cell in short.cells if short is not None else []:
            if cell.table_id != grid.table_id or cell.row not in where:
                continue
            item = self.model.item(where[cell.row], cell.column)
            if item is None:
                continue
            item.setBackground(USED)
            item.setToolTip(plain_tip(f"{cell.address}: {cell.value}"))
            self.highlighted.append((where[cell.row], cell.column))
        self.view.resizeColumnsToContents()
        if self.highlighted:
            r, c = self.highlighted[0]
            self.view.scrollTo(self.model.index(r, c), QAbstractItemView.ScrollHint.PositionAtCenter)
