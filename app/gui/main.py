"""``shelfwise-app``: start the window.

    shelfwise-app                      # the library in the user data dir
    shelfwise-app --db ~/work.db       # another library
    shelfwise-app --sample             # ingest the bundled sample collection if the library is empty
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Qt and the facade load when the window starts, after the arguments are read
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from shelfwise.app.gui.window import MainWindow
    from shelfwise.core.api.indexing import IngestReport
    from shelfwise.core.settings import Settings
    from shelfwise.core.shelf import Shelf

SAMPLE_COLLECTION = "Sample"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="shelfwise-app", description="Shelfwise: answers from your own documents.")
    parser.add_argument("--db", type=Path, default=None, help="library database file (default: user data dir)")
    parser.add_argument("--sample", action="store_true", help="ingest the bundled sample if the library is empty")
    parser.add_argument("--ask", metavar="QUESTION", default=None, help="ask this question once the window is up")
    parser.add_argument("--quit-after", type=float, default=None, metavar="SECONDS",
                        help="close the window after this many seconds (smoke tests)")
    # Hidden: exit when the --ask question is answered (0 = an answer with text, 1 = failed/cancelled): smoke tests.
    parser.add_argument("--exit-when-answered", action="store_true", help=argparse.SUPPRESS)
    # Hidden: the deterministic fake decision model, for demos and tests without the model (never the default).
    parser.add_argument("--fake", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    return parser.parse_args(argv)


def fake_shelf_factory(settings: Settings) -> Shelf:
    from shelfwise.core.api.models import FakeBackend
    from shelfwise.core.shelf import Shelf

    return Shelf(settings, backend=FakeBackend())


def sample_path() -> Path:
    from shelfwise import resources

    return resources.path("sample")


def ask_when_idle(window: MainWindow, question: str) -> None:
    """Ask once no ingest is running (after the sample has been read, for instance)."""
    from PySide6.QtCore import QTimer

    def go(_report: IngestReport | None = None) -> None:
        if window.ingest_host.busy:
            return
        window.ingest_finished.disconnect(go)
        window.ask(question)

    window.ingest_finished.connect(go)
    QTimer.singleShot(0, go)


def open_window(settings: Settings, qsettings: QSettings, fake: bool = False) -> MainWindow | QMessageBox:
    """The main window on ``settings``' library, or, when that library cannot be opened (another program's
    database, a device, a data folder that is a file), a shown message box saying why and how to start with
    another library (``main`` then exits with code 1 once it is closed)."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QMessageBox

    from shelfwise.app.gui.window import MainWindow
    from shelfwise.core.api.reads import StoreError
    from shelfwise.core.paths import DataDirError

    try:
        return MainWindow(settings, qsettings, shelf_factory=fake_shelf_factory if fake else None)
    except (StoreError, DataDirError) as exc:
        message = str(exc)
    box = QMessageBox(QMessageBox.Icon.Critical, "Shelfwise: cannot open the library",
                      f"{message}\n\nStart Shelfwise with another library file (a new name makes a new library):\n"
                      "    shelfwise-app --db FILE", QMessageBox.StandardButton.Close)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setObjectName("cannotOpen")
    box.show()
    return box


def main(argv: Sequence[str] | None = None) -> int:
    import multiprocessing

    multiprocessing.freeze_support()  # a frozen build re-enters here for the ingest parser's child process
    from shelfwise.core.api.models import tune_openmp

    tune_openmp()  # before the window's workers load llama.cpp
    args = parse_args(argv)
    from shelfwise.core.api.models import setup_logging

    setup_logging(args.verbose, stderr_level=logging.INFO)  # llama.cpp's log: the log file (stderr with -v)

    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from shelfwise.app.gui.settings_dialog import window_settings
    from shelfwise.app.gui.window import MainWindow
    from shelfwise.core.settings import Settings

    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("Shelfwise")
    app.setOrganizationName("shelfwise")
    app.setStyle("Fusion")
    qsettings = QSettings("shelfwise", "shelfwise")
    db = Path(os.path.realpath(args.db.expanduser())) if args.db else None  # a symlink loop as it is
    loaded = window_settings(qsettings, Settings(db_path=db))
    window = open_window(loaded.settings, qsettings, fake=args.fake)
    if not isinstance(window, MainWindow):  # a library that cannot be opened: said in a window, not a traceback
        window.finished.connect(lambda _result: app.exit(1))
        app.exec()
        return 1
    window.show()
    if loaded.problem:  # a damaged settings file: the defaults, and a message that says so
        window.statusBar().showMessage(loaded.problem.capitalize(), 15000)
        logging.getLogger(__name__).warning("%s", loaded.problem)

    if args.sample and window.library_is_empty():
        window.ingest([sample_path()], SAMPLE_COLLECTION)
    if args.ask:
        ask_when_idle(window, args.ask)
        if args.exit_when_answered:
            def done() -> None:
                answer = window.session.last_answer
                ok = answer is not None and bool(answer.text.strip())
                print(f"answer: {answer.text.strip() if answer else window.answer_view.status.text()}", flush=True)
                window.close()
                app.exit(0 if ok else 1)

            window.query_finished.connect(done)
    if args.quit_after is not None:
        def timeout() -> None:
            window.close()
            app.exit(2 if args.exit_when_answered else 0)

        QTimer.singleShot(int(args.quit_after * 1000), timeout)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
