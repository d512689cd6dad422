"""The walk: each level of the navigation as a band of a funnel, each candidate a row with its score bar.

Kept candidates are highlighted, pruned ones greyed; a pruned row offers "look here too" (re-run the query with
that node forced open). Tooltips show what the model read (the node description) and the evidence parts
(``Candidate.features``). ``show_trace(trace, reveal=...)`` can show the walk partly revealed (demo mode).
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from shelfwise.app.gui.plain import shown_name
from shelfwise.core.api.asking import level_summary
from shelfwise.core.navigation.trace import Candidate, Level, Outline, Trace

ROLE_CAND = Qt.ItemDataRole.UserRole
ROLE_ROW = Qt.ItemDataRole.UserRole + 1  # "level" | "cand" | "more"
ROLE_LEVEL = Qt.ItemDataRole.UserRole + 2
ROLE_FUNNEL = Qt.ItemDataRole.UserRole + 3  # (judged share, kept share) of the widest level
ROLE_BAR = Qt.ItemDataRole.UserRole + 4  # (bar fraction 0..1, kept, shown)
ROLE_HEAD = Qt.ItemDataRole.UserRole + 5  # ("Level 2 · documents", " · 31 -> kept 4 · 420 tokens · 0.6 s")

KEPT = QColor("#2f6fdb")
KEPT_BG = QColor(47, 111, 219, 28)
PRUNED = QColor("#9aa0a6")
FUNNEL = QColor(47, 111, 219, 38)
FUNNEL_KEPT = QColor(47, 111, 219, 90)
LINK = QColor("#2f6fdb")
LOOK_HERE = "look here too"
PRUNED_SHOWN = 6  # pruned rows shown per level before "... n more"

COL_TITLE, COL_SCORE, COL_ACTION = 0, 1, 2


@dataclass(frozen=True)
class Reveal:
    """How much of the walk a demo has shown: levels before ``level`` fully; at ``level``, ``phase`` 0 = the
    candidates listed, 1 = their scores, 2 = kept and pruned marked."""

    level: int
    phase: int = 2


def candidate_tooltip(candidate: Candidate) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(k)}</td><td align='right'>{v:.3f}</td></tr>" for k, v in candidate.features.items()
    )
    evidence = f"<table cellspacing='4'>{rows}</table>" if rows else ""
    state = "kept" if candidate.kept else "pruned"
    if "judge" in candidate.features:
        state += f" · relevance judge P = {1 / (1 + math.exp(-candidate.features['judge'])):.2f}"
    source = "" if candidate.source == "tree" else f" · added by {html.escape(candidate.source)} search"
    desc = html.escape(candidate.description.strip()[:600]) or "<i>(no description)</i>"
    return (
        f"<b>{html.escape(candidate.title)}</b><br><span style='color:gray'>{candidate.kind} · score "
        f"{candidate.score:.3f} · {state}{source}</span><p>{desc}</p>{evidence}"
    )


def bar_fractions(level: Level) -> dict[int, float]:
    """Score -> bar length. Probabilities are shown as they are; any other readout is min-max scaled per level."""
    scores = [c.score for c in level.candidates]
    if not scores:
        return {}
    if all(0.0 <= s <= 1.0 for s in scores):
        return {id(c): c.score for c in level.candidates}
    lo, hi = min(scores), max(scores)
    span = (hi - lo) or 1.0
    return {id(c): 0.05 + 0.95 * (c.score - lo) / span for c in level.candidates}


class WalkDelegate(QStyledItemDelegate):
    """Paints the funnel band behind level rows and the score bars of candidate rows."""

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        row = index.data(ROLE_ROW)
        if row == "level" and index.column() == COL_TITLE:
            self._paint_level(painter, option, index)
            return
        if row == "cand" and index.column() == COL_SCORE:
            fraction, kept, shown = index.data(ROLE_BAR) or (0.0, False, False)
            background = index.data(Qt.ItemDataRole.BackgroundRole)
            if isinstance(background, QBrush):
                painter.fillRect(option.rect, background)
            if option.state & QStyle.StateFlag.State_Selected:
                painter.fillRect(option.rect, option.palette.color(QPalette.ColorRole.Highlight).lighter(170))
            r = option.rect.adjusted(4, 5, -40, -5)
            painter.save()
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(0, 0, 0, 18))
            painter.drawRoundedRect(r, 3, 3)
            if shown:
                filled = QRect(r.left(), r.top(), max(int(r.width() * max(0.0, min(1.0, fraction))), 2), r.height())
                painter.setBrush(KEPT if kept else PRUNED)
                painter.drawRoundedRect(filled, 3, 3)
                painter.setPen(option.palette.color(QPalette.ColorRole.Text) if kept else PRUNED)
                text_rect = QRect(r.right() + 4, option.rect.top(), 36, option.rect.height())
                painter.drawText(text_rect, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                                 str(index.data(Qt.ItemDataRole.DisplayRole) or ""))
            painter.restore()
            return
        super().paint(painter, option, index)

    def _paint_level(self, painter: QPainter, option: QStyleOptionViewItem,
                     index: QModelIndex | QPersistentModelIndex) -> None:
        """A level: "Level 2 · documents" in bold, the counts and cost after it, and a funnel band under it whose
        width is the number judged (log scale, relative to the widest level) and whose dark core is the share kept."""
        judged, kept = index.data(ROLE_FUNNEL) or (1.0, 0.0)
        name, rest = index.data(ROLE_HEAD) or (str(index.data(Qt.ItemDataRole.DisplayRole) or ""), "")
        r = option.rect.adjusted(2, 3, -2, -2)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        bold = QFont(option.font)
        bold.setBold(True)
        fm_bold = QFontMetrics(bold)
        line = QRect(r.left() + 4, r.top(), r.width() - 8, fm_bold.height())
        painter.setFont(bold)
        painter.setPen(option.palette.color(QPalette.ColorRole.Text))
        painter.drawText(line, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, name)
        name_w = fm_bold.horizontalAdvance(name)
        painter.setFont(option.font)
        painter.setPen(QColor("#5f6368"))
        rest_rect = line.adjusted(name_w, 0, 0, 0)
        painter.drawText(rest_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                         QFontMetrics(option.font).elidedText(rest, Qt.TextElideMode.ElideRight, rest_rect.width()))
        w = r.width() - 8
        top = line.bottom() + 4
        band = QRect(r.left() + 4 + int(w * (1 - judged) / 2), top, max(int(w * judged), 6), 8)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(FUNNEL)
        painter.drawRoundedRect(band, 4, 4)
        if kept > 0:
            core = QRect(r.left() + 4 + int(w * (1 - kept) / 2), top, max(int(w * kept), 6), 8)
            painter.setBrush(FUNNEL_KEPT)
            painter.drawRoundedRect(core, 4, 4)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        size = super().sizeHint(option, index)
        if index.data(ROLE_ROW) == "level":
            bold = QFont(option.font)
            bold.setBold(True)
            return QSize(size.width(), QFontMetrics(bold).height() + 20)
        return QSize(size.width(), max(size.height(), 21))


class WalkView(QWidget):
    """Signals: ``node_activated(candidate)`` (a row clicked), ``look_here(candidate)`` ("look here too"),
    ``replay_requested()``."""

    node_activated = Signal(object)
    look_here = Signal(object)
    replay_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setObjectName("walkTree")
        self.tree.setColumnCount(3)
        self.tree.setHeaderHidden(True)
        self.tree.setRootIsDecorated(False)
        self.tree.setIndentation(10)
        self.tree.setUniformRowHeights(False)
        self.tree.setItemDelegate(WalkDelegate(self.tree))
        self.tree.setMouseTracking(True)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.itemClicked.connect(self._on_clicked)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(COL_TITLE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(COL_SCORE, QHeaderView.ResizeMode.Fixed)
        header.setSectionResizeMode(COL_ACTION, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setColumnWidth(COL_SCORE, 118)

        self.summary = QLabel("Ask a question to see how the library is walked.")
        self.summary.setObjectName("walkSummary")
        self.summary.setWordWrap(True)
        self.replay_button = QPushButton("Replay ▶")
        self.replay_button.setToolTip("Animate this walk level by level (demo mode)")
        self.replay_button.setEnabled(False)
        self.replay_button.clicked.connect(self.replay_requested)
        title = QLabel("The walk")
        title.setObjectName("paneTitle")

        footer = QHBoxLayout()
        footer.addWidget(self.summary, 1)
        footer.addWidget(self.replay_button)
        self.controls = QVBoxLayout()
        self.controls.setContentsMargins(0, 0, 0, 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(title)
        layout.addWidget(self.tree, 1)
        layout.addLayout(footer)
        layout.addLayout(self.controls)

        self.trace: Trace | None = None
        self.outline: Outline | None = None  # shown instead of the walk for a structural answer
        self.forced: set[int] = set()
        self._expanded: set[int] = set()
        self._reveal: Reveal | None = None

    # -- content ------------------------------------------------------------------------------------------------
    def clear(self, message: str = "") -> None:
        self.trace = None
        self.outline = None
        self.tree.clear()
        self.summary.setText(html.escape(message))  # a rich label (the summaries below): escaped
        self.replay_button.setEnabled(False)

    def show_trace(self, trace: Trace, reveal: Reveal | None = None, forced: set[int] | None = None) -> None:
        if trace is not self.trace:
            self._expanded = set()
        self.trace = trace
        self.outline = None
        if forced is not None:
            self.forced = set(forced)
        self._reveal = reveal
        self._rebuild()

    def show_outline(self, outline: Outline, trace: Trace | None = None) -> None:
        """A structural answer: the document's outline (or the documents listed), the part that answered in bold
        on the kept colour; clicking a heading shows it like a walk row."""
        self.trace = trace
        self.outline = outline
        self.tree.clear()
        head = QTreeWidgetItem([f"Outline · {shown_name(outline.title)}", "", ""])
        head.setData(COL_TITLE, ROLE_ROW, "outline")
        font = QFont(self.tree.font())
        font.setBold(True)
        head.setFont(COL_TITLE, font)
        head.setFlags(Qt.ItemFlag.ItemIsEnabled)
        self.tree.addTopLevelItem(head)
        head.setFirstColumnSpanned(True)
        for entry in outline.entries:
            where = entry.location.label() if entry.location is not None else ""
            item = QTreeWidgetItem(["    " * entry.depth + shown_name(entry.title), where, ""])
            cand = Candidate(node_id=entry.node_id, kind="document" if entry.depth == 0 else "section",
                             title=entry.title, description="", score=1.0 if entry.highlighted else 0.0,
                             kept=entry.highlighted, source="outline")
            item.setData(COL_TITLE, ROLE_ROW, "heading")
            item.setData(COL_TITLE, ROLE_CAND, cand)
            if entry.highlighted:
                bold = QFont(self.tree.font())
                bold.setBold(True)
                item.setFont(COL_TITLE, bold)
                for col in range(3):
                    item.setBackground(col, QBrush(KEPT_BG))
            else:
                item.setForeground(COL_TITLE, QBrush(PRUNED))
            head.addChild(item)
        self.tree.expandAll()
        marked = sum(1 for e in outline.entries if e.highlighted)
        scope = f" · scope {html.escape(trace.scope)}" if trace is not None and trace.scope else ""
        walked = f" · walk: {len(trace.levels)} levels" if trace is not None and trace.levels else ""
        self.summary.setText(f"<b>Answered from the outline</b> · {marked} of {len(outline.entries)} headings "
                             f"answered{walked}{scope}")
        self.replay_button.setEnabled(bool(trace is not None and trace.levels))

    def outline_items(self) -> list[QTreeWidgetItem]:
        """The heading rows of the outline shown (empty when a walk is shown)."""
        head = self.tree.topLevelItem(0)
        if head is None or head.data(COL_TITLE, ROLE_ROW) != "outline":
            return []
        return [it for it in (head.child(i) for i in range(head.childCount())) if it is not None]

    def level_items(self) -> list[QTreeWidgetItem]:
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [it for it in items if it is not None]

    def candidate_items(self, level_index: int) -> list[QTreeWidgetItem]:
        parent = self.tree.topLevelItem(level_index)
        if parent is None:
            return []
        items = (parent.child(i) for i in range(parent.childCount()))
        return [it for it in items if it is not None and it.data(COL_TITLE, ROLE_ROW) == "cand"]

    def _rebuild(self) -> None:
        trace = self.trace
        self.tree.clear()
        if trace is None:
            return
        widest = max((len(lv.candidates) for lv in trace.levels), default=1) or 1
        reveal = self._reveal
        for index, level in enumerate(trace.levels):
            if reveal is not None and index > reveal.level:
                break
            phase = reveal.phase if reveal is not None and index == reveal.level else 2
            self._add_level(index, level, widest, phase)
        self.tree.expandAll()
        shown = len(trace.levels) if reveal is None else min(reveal.level + 1, len(trace.levels))
        forced = f" · forced open: {len(self.forced)}" if self.forced else ""
        forced += f" · scope {html.escape(trace.scope)}" if trace.scope else ""
        readout = f" · readout {trace.readout}" if trace.readout else ""
        judge = f" · judge read {trace.judged}" if trace.judge else ""
        self.summary.setText(
            f"<b>{shown}/{len(trace.levels)} levels</b> · {trace.tokens} tokens · {trace.requests} requests · "
            f"{trace.seconds:.1f} s{readout}{judge}{forced}"
        )
        self.replay_button.setEnabled(bool(trace.levels))

    def _add_level(self, index: int, level: Level, widest: int, phase: int) -> None:
        n, kept = len(level.candidates), len(level.kept)
        scale = math.log1p(widest)
        judged_share = 0.25 + 0.75 * math.log1p(n) / scale if scale else 1.0
        kept_share = judged_share * (kept / n if n else 0.0) if phase >= 2 else 0.0
        name = f"Level {level.depth} · {level.label}"
        if phase >= 2:
            judged = f" · judge read {level.judged}" if level.judged else ""
            rest = f" · {n} → kept {kept} · {level.tokens} tokens{judged} · {level.seconds:.1f} s"
        else:
            rest = f" · {n} candidates" + (" · scoring…" if phase == 1 else "")
        head = QTreeWidgetItem([level_summary(level) if phase >= 2 else name + rest, "", ""])
        head.setData(COL_TITLE, ROLE_ROW, "level")
        head.setData(COL_TITLE, ROLE_HEAD, (name, rest))
        head.setData(COL_TITLE, ROLE_LEVEL, index)
        head.setData(COL_TITLE, ROLE_FUNNEL, (min(judged_share, 1.0), min(kept_share, 1.0)))
        font = QFont(self.tree.font())
        font.setBold(True)
        head.setFont(COL_TITLE, font)
        head.setToolTip(COL_TITLE, f"{level.requests} requests · {level.tokens} tokens evaluated · "
                                   f"{level.judged} read by the relevance judge · {level.seconds:.2f} s")
        head.setFlags(Qt.ItemFlag.ItemIsEnabled)
        self.tree.addTopLevelItem(head)
        head.setFirstColumnSpanned(True)  # only takes effect once the item is in the tree

        fractions = bar_fractions(level)
        if phase == 0:
            ranked = list(level.candidates)
        else:
            ranked = sorted(level.candidates, key=lambda c: (not (c.kept and phase >= 2), -c.score))
        pruned_seen = 0
        for cand in ranked:
            if phase >= 2 and not cand.kept and index not in self._expanded:
                pruned_seen += 1
                if pruned_seen > PRUNED_SHOWN:
                    continue
            head.addChild(self._candidate_item(cand, fractions.get(id(cand), 0.0), phase))
        hidden = pruned_seen - PRUNED_SHOWN
        if hidden > 0:
            more = QTreeWidgetItem([f"… {hidden} more pruned (show all)", "", ""])
            more.setData(COL_TITLE, ROLE_ROW, "more")
            more.setData(COL_TITLE, ROLE_LEVEL, index)
            more.setForeground(COL_TITLE, QBrush(LINK))
            head.addChild(more)

    def _candidate_item(self, cand: Candidate, fraction: float, phase: int) -> QTreeWidgetItem:
        marked = phase >= 2
        title = shown_name(cand.title.strip()) or f"#{cand.node_id}"
        if cand.source != "tree":
            title += f"  ({cand.source})"
        if cand.node_id in self.forced:
            title += "  (forced)"
        item = QTreeWidgetItem([title, f"{cand.score:.2f}" if phase >= 1 else "",
                                LOOK_HERE if marked and not cand.kept else ""])
        item.setData(COL_TITLE, ROLE_ROW, "cand")
        item.setData(COL_SCORE, ROLE_ROW, "cand")
        item.setData(COL_TITLE, ROLE_CAND, cand)
        item.setData(COL_SCORE, ROLE_BAR, (fraction, cand.kept or not marked, phase >= 1))
        tip = candidate_tooltip(cand)
        for col in (COL_TITLE, COL_SCORE):
            item.setToolTip(col, tip)
        if marked and cand.kept:
            font = QFont(self.tree.font())
            font.setBold(True)
            item.setFont(COL_TITLE, font)
            for col in range(3):
                item.setBackground(col, QBrush(KEPT_BG))
        elif marked:
            item.setForeground(COL_TITLE, QBrush(PRUNED))
            item.setForeground(COL_ACTION, QBrush(LINK))
            item.setToolTip(COL_ACTION, "Re-run the question with this branch forced open")
        return item

    # -- interaction --------------------------------------------------------------------------------------------
    def _on_clicked(self, item: QTreeWidgetItem, column: int) -> None:
        row = item.data(COL_TITLE, ROLE_ROW)
        if row == "more":
            self._expanded.add(int(item.data(COL_TITLE, ROLE_LEVEL)))
            self._rebuild()
            return
        if row == "heading":
            self.node_activated.emit(item.data(COL_TITLE, ROLE_CAND))
            return
        if row != "cand":
            return
        cand: Candidate = item.data(COL_TITLE, ROLE_CAND)
        if column == COL_ACTION and item.text(COL_ACTION):
            self.look_here.emit(cand)
        else:
            self.node_activated.emit(cand)

    def _context_menu(self, pos: QPoint) -> None:
        item = self.tree.itemAt(pos)
        if item is None or item.data(COL_TITLE, ROLE_ROW) != "cand":
            return
        cand: Candidate = item.data(COL_TITLE, ROLE_CAND)
        menu = QMenu(self)
        menu.addAction("Show", lambda: self.node_activated.emit(cand))
        look = menu.addAction("Look here too", lambda: self.look_here.emit(cand))
        look.setEnabled(not cand.kept)
        menu.exec(self.tree.viewport().mapToGlobal(pos))
