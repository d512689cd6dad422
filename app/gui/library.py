"""The library pane: collections and their documents with status icons; add, re-ingest, remove; watched folders.

Files and folders come in through the buttons (file dialogs) or by drag-and-drop; the pane only *asks* for work
(signals) and the window hands it to the ingest worker. Added folders are watched (``QFileSystemWatcher``); changes
are debounced and reported as ``folder_changed(folder, collection)`` for an incremental re-ingest.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QDragEnterEvent, QDragMoveEvent, QDropEvent, QFont, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMenu,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from shelfwise.app.gui.plain import plain_tip, shown_name
from shelfwise.core.api.reads import DocumentRow
from shelfwise.core.shelf import Shelf

ROLE_KIND = Qt.ItemDataRole.UserRole  # "collection" | "document"
ROLE_OBJ = Qt.ItemDataRole.UserRole + 1
MAX_WATCHED_DIRS = 2000
_ICONS: dict[str, QIcon] = {}


def status_icon(status: str) -> QIcon:
    """A small drawn badge: green dot (ok), red "!" (error), amber "T" (needs OCR: a scan without text)."""
    if status in _ICONS:
        return _ICONS[status]
    colour, mark = {"ok": ("#2e9d57", ""), "error": ("#d93025", "!"), "needs_ocr": ("#e6a700", "T")}.get(
        status, ("#9aa0a6", "?")
    )
    pix = QPixmap(32, 32)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor(colour))
    radius = 9 if status == "ok" else 14
    p.drawEllipse(QPoint(16, 16), radius, radius)
    if mark:
        font = QFont()
        font.setPixelSize(20)
        font.setBold(True)
        p.setFont(font)
        p.setPen(QColor("white"))
        p.drawText(pix.rect(), Qt.AlignmentFlag.AlignCenter, mark)
    p.end()
    _ICONS[status] = QIcon(pix)
    return _ICONS[status]


STATUS_TEXT = {"ok": "ingested", "error": "could not be read", "needs_ocr": "needs OCR (scanned, no text layer)"}


class FolderWatcher(QObject):
    """Watches added folders (and their subfolders); reports each changed root once the changes settle."""

    folder_changed = Signal(str, str)  # (root folder, collection)

    def __init__(self, parent: QObject | None = None, debounce_ms: int = 2000) -> None:
        super().__init__(parent)
        self.roots: dict[str, str] = {}  # root folder -> collection
        self._watcher = QFileSystemWatcher(self)
        self._watcher.directoryChanged.connect(self._on_change)
        self._dirty: set[str] = set()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._flush)

    def watch(self, folder: str | Path, collection: str) -> None:
        root = os.path.realpath(Path(folder).expanduser())
        if not Path(root).is_dir():
            return
        self.roots[root] = collection
        self._add_tree(root)

    def unwatch(self, folder: str | Path) -> None:
        root = os.path.realpath(Path(folder).expanduser())
        self.roots.pop(root, None)
        gone = [d for d in self._watcher.directories() if d == root or d.startswith(root + os.sep)]
        if gone:
            self._watcher.removePaths(gone)

    def watched(self) -> list[tuple[str, str]]:
        return sorted(self.roots.items())

    def _add_tree(self, root: str) -> None:
        have = set(self._watcher.directories())
        todo = [root]
        for dirpath, dirnames, _ in os.walk(root):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            todo.extend(os.path.join(dirpath, d) for d in dirnames)
            if len(have) + len(todo) > MAX_WATCHED_DIRS:
                break
        new = [d for d in todo if d not in have]
        if new:
            self._watcher.addPaths(new)

    def _root_of(self, path: str) -> str | None:
        best = None
        for root in self.roots:
            if (path == root or path.startswith(root + os.sep)) and (best is None or len(root) > len(best)):
                best = root
        return best

    def _on_change(self, path: str) -> None:
        root = self._root_of(path)
        if root is None:
            return
        self._dirty.add(root)
        self._timer.start()

    def _flush(self) -> None:
        dirty, self._dirty = self._dirty, set()
        for root in sorted(dirty):
            if root in self.roots:
                self._add_tree(root)  # new subfolders
                self.folder_changed.emit(root, self.roots[root])


class _DropTree(QTreeWidget):
    """A tree that accepts files and folders dropped from the desktop."""

    dropped = Signal(list, str)  # (paths, collection under the drop point or "")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAcceptDrops(True)
        self.viewport().setAcceptDrops(True)
        self.setDropIndicatorShown(True)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            super().dragEnterEvent(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            super().dragMoveEvent(event)

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if not paths:
            return
        item = self.itemAt(event.position().toPoint())
        collection = ""
        while item is not None:
            if item.data(0, ROLE_KIND) == "collection":
                collection = item.data(0, ROLE_OBJ).name
                break
            item = item.parent()
        event.acceptProposedAction()
        self.dropped.emit(paths, collection)


class LibraryView(QWidget):
    """Signals ask the window for work; ``refresh(shelf)`` redraws from the library as the facade reads it."""

    add_requested = Signal(list, str)  # (paths, collection)
    reingest_requested = Signal(list, str)  # (paths, collection)
    remove_requested = Signal(list, str)  # (document ids, collection)
    document_activated = Signal(object)  # DocumentRow
    ask_about = Signal(str, str)  # (path of a document or folder, collection): "Ask about this document / folder"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tree = _DropTree()
        self.tree.setObjectName("libraryTree")
        self.tree.setHeaderHidden(True)
        self.tree.setSelectionMode(QTreeWidget.SelectionMode.ExtendedSelection)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.tree.itemActivated.connect(self._on_activated)
        self.tree.dropped.connect(self._on_dropped)
        self.watcher = FolderWatcher(self)
        self.add_files_button = QPushButton("+ Add files…")
        self.add_files_button.clicked.connect(self.add_files_dialog)
        self.add_folder_button = QPushButton("+ Add folder…")
        self.add_folder_button.clicked.connect(self.add_folder_dialog)
        hint = QLabel("or drop files and folders here")
        hint.setObjectName("hint")
        hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title = QLabel("Library")
        title.setObjectName("paneTitle")

        buttons = QHBoxLayout()
        buttons.addWidget(self.add_files_button)
        buttons.addWidget(self.add_folder_button)
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(6, 6, 6, 6)
        self.layout_.addWidget(title)
        self.layout_.addWidget(self.tree, 1)
        self.layout_.addLayout(buttons)
        self.layout_.addWidget(hint)
        self.setAcceptDrops(True)
        self._collections: list[str] = []

    def add_bottom(self, widget: QWidget) -> None:
        """Place a widget (the ingest bar) under the buttons."""
        self.layout_.addWidget(widget)

    # -- content ------------------------------------------------------------------------------------------------
    def refresh(self, shelf: Shelf) -> None:
        """Show the library's collections and documents as the facade (``Shelf``) reads them."""
        expanded = {top.text(0).rsplit(" (", 1)[0] for top in self._top_items() if top.isExpanded()}
        first = self.tree.topLevelItemCount() == 0
        self.tree.clear()
        self._collections = []
        for coll in shelf.collections():
            docs = shelf.documents(coll.name)
            self._collections.append(coll.name)
            top = QTreeWidgetItem([f"{coll.name} ({len(docs)})"])
            top.setData(0, ROLE_KIND, "collection")
            top.setData(0, ROLE_OBJ, coll)
            font = top.font(0)
            font.setBold(True)
            top.setFont(0, font)
            problems = sum(1 for d in docs if d.status != "ok")
            top.setToolTip(0, f"{len(docs)} documents" + (f", {problems} with problems" if problems else ""))
            for doc in docs:
                top.addChild(self._document_item(doc))
            self.tree.addTopLevelItem(top)
            top.setExpanded(first or coll.name in expanded)

    def _document_item(self, doc: DocumentRow) -> QTreeWidgetItem:
        name = Path(doc.path).name
        ocr = doc.ocr_label()  # "OCR 3/12 pages": text read from page images
        name = shown_name(name)
        item = QTreeWidgetItem([f"{name} · OCR" if ocr else name])
        item.setData(0, ROLE_KIND, "document")
        item.setData(0, ROLE_OBJ, doc)
        item.setIcon(0, status_icon(doc.status))
        if doc.status == "ok":
            pages = f"{doc.pages} pages · " if doc.pages else ""
            tip = f"{doc.title}\n{pages}{doc.sections} sections · {doc.passages} passages\n{doc.path}"
            if ocr:
                tip += f"\n{ocr} read by OCR"
            if doc.message:
                tip += f"\n\n{doc.message}"
        else:
            tip = doc.message or STATUS_TEXT.get(doc.status, doc.status)
            item.setForeground(0, QColor("#d93025") if doc.status == "error" else QColor("#a06c00"))
        item.setToolTip(0, plain_tip(tip))
        return item

    def collections(self) -> list[str]:
        return list(self._collections)

    def selected_collection(self) -> str:
        item = self.tree.currentItem()
        while item is not None:
            if item.data(0, ROLE_KIND) == "collection":
                return str(item.data(0, ROLE_OBJ).name)
            item = item.parent()
        return ""

    def _top_items(self) -> list[QTreeWidgetItem]:
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [it for it in items if it is not None]

    def document_items(self) -> list[QTreeWidgetItem]:
        out: list[QTreeWidgetItem] = []
        for top in self._top_items():
            out.extend(ch for ch in (top.child(j) for j in range(top.childCount())) if ch is not None)
        return out

    # -- adding -------------------------------------------------------------------------------------------------
    def add_paths(self, paths: Sequence[str | Path], collection: str) -> None:
        """Ask for ``paths`` to be ingested into ``collection``; folders are watched from now on."""
        # realpath: a dropped symlink loop is ingested as the failed file it is (Path.resolve() raises on it)
        clean = [os.path.realpath(Path(p).expanduser()) for p in paths]
        if not clean:
            return
        for p in clean:
            if Path(p).is_dir():
                self.watcher.watch(p, collection)
        self.add_requested.emit(clean, collection)

    def choose_collection(self, suggestion: str) -> str | None:
        names = self.collections()
        default = self.selected_collection() or suggestion or (names[0] if names else "default")
        items = [default, *[n for n in names if n != default]]
        name, ok = QInputDialog.getItem(self, "Add to collection", "Collection (pick one or type a new name):",
                                        items, 0, True)
        name = name.strip()
        return name if ok and name else None

    def add_files_dialog(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(
            self, "Add files", str(Path.home()),
            "Documents (*.pdf *.docx *.pptx *.xlsx *.md *.txt);;All files (*)",
        )
        if files:
            collection = self.choose_collection(Path(files[0]).parent.name)
            if collection:
                self.add_paths(list(files), collection)

    def add_folder_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add folder", str(Path.home()))
        if folder:
            collection = self.choose_collection(Path(folder).name)
            if collection:
                self.add_paths([folder], collection)

    def _on_dropped(self, paths: list[str], collection: str) -> None:
        if not collection:
            first = Path(paths[0])
            suggestion = first.name if first.is_dir() else first.parent.name
            collection = self.choose_collection(suggestion) or ""
        if collection:
            self.add_paths(paths, collection)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self._on_dropped(paths, self.selected_collection())

    # -- documents ----------------------------------------------------------------------------------------------
    def _selected_documents(self) -> list[tuple[DocumentRow, str]]:
        out: list[tuple[DocumentRow, str]] = []
        for item in self.tree.selectedItems():
            parent = item.parent()
            if item.data(0, ROLE_KIND) == "document" and parent is not None:
                out.append((item.data(0, ROLE_OBJ), parent.data(0, ROLE_OBJ).name))
        return out

    def reingest(self, docs: list[tuple[DocumentRow, str]]) -> None:
        by_collection: dict[str, list[str]] = {}
        for doc, coll in docs:
            by_collection.setdefault(coll, []).append(doc.path)
        for coll, paths in by_collection.items():
            self.reingest_requested.emit(paths, coll)

    def remove(self, docs: list[tuple[DocumentRow, str]]) -> None:
        by_collection: dict[str, list[int]] = {}
        for doc, coll in docs:
            by_collection.setdefault(coll, []).append(doc.id)
        for coll, ids in by_collection.items():
            self.remove_requested.emit(ids, coll)

    def _on_activated(self, item: QTreeWidgetItem, _column: int) -> None:
        if item.data(0, ROLE_KIND) == "document":
            self.document_activated.emit(item.data(0, ROLE_OBJ))

    def _context_menu(self, pos: QPoint) -> None:
        item = self.tree.itemAt(pos)
        if item is None:
            return
        menu = QMenu(self)
        if item.data(0, ROLE_KIND) == "collection":
            coll = item.data(0, ROLE_OBJ).name
            children = (item.child(i) for i in range(item.childCount()))
            all_docs = [(ch.data(0, ROLE_OBJ), coll) for ch in children if ch is not None]
            menu.addAction("Add files…", self.add_files_dialog)
            menu.addAction("Re-ingest all", lambda: self.reingest(all_docs))
            watched = [r for r, c in self.watcher.watched() if c == coll]
            for root in watched:
                menu.addAction(f"Stop watching {Path(root).name}", partial(self.watcher.unwatch, root))
        else:
            if not item.isSelected():
                self.tree.setCurrentItem(item)
            docs = self._selected_documents()
            doc = item.data(0, ROLE_OBJ)
            parent = item.parent()
            coll = parent.data(0, ROLE_OBJ).name if parent is not None else ""
            menu.addAction("Show", lambda: self.document_activated.emit(doc))
            ask = menu.addAction("Ask about this document…", lambda: self.ask_about.emit(doc.path, coll))
            ask.setEnabled(doc.status == "ok")
            folder = str(Path(doc.path).parent)
            menu.addAction(f"Ask about its folder ({Path(folder).name})…", lambda: self.ask_about.emit(folder, coll))
            menu.addSeparator()
            menu.addAction("Re-ingest", lambda: self.reingest(docs))
            menu.addAction(f"Remove {len(docs)} from the library" if len(docs) > 1 else "Remove from the library",
                           lambda: self.remove(docs))
        menu.exec(self.tree.viewport().mapToGlobal(pos))
