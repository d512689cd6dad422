"""Take docs/screenshots/main.png: the real window, offscreen, on the bundled sample, after a real question.

    .venv/bin/python packaging/screenshot.py                       # temp library, ingests the sample first
    .venv/bin/python packaging/screenshot.py --db /tmp/sample.db   # reuse a library (ingested if empty)

Uses the real core and the bundled models (SHELFWISE_HOME is honoured, so cached models are reused).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
QUESTION = "What is the maximum salary for band L5?"


def wait_for(app, signal, timeout: float) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(int(timeout * 1000), loop.quit)
    loop.exec()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", type=Path, default=None, help="library to use (default: a temporary one)")
    parser.add_argument("--question", default=QUESTION)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots" / "main.png")
    parser.add_argument("--size", default="1440x900", help="window size, WIDTHxHEIGHT")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds to wait for ingest and for the answer")
    args = parser.parse_args(argv)

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from shelfwise.app.gui.main import SAMPLE_COLLECTION, sample_path
    from shelfwise.app.gui.window import MainWindow
    from shelfwise.core.settings import Settings

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setStyle("Fusion")
    tmp = Path(tempfile.mkdtemp(prefix="shelfwise-shot-"))
    db = args.db or tmp / "library.db"
    window = MainWindow(Settings(db_path=db), QSettings(str(tmp / "ui.ini"), QSettings.Format.IniFormat))
    width, height = (int(x) for x in args.size.lower().split("x"))
    window.resize(width, height)
    window.show()
    app.processEvents()

    if window.library_is_empty():
        t0 = time.perf_counter()
        window.ingest([sample_path()], SAMPLE_COLLECTION)
        wait_for(app, window.ingest_finished, args.timeout)
        print(f"ingested the sample in {time.perf_counter() - t0:.0f} s", flush=True)

    t0 = time.perf_counter()
    window.ask(args.question)
    wait_for(app, window.query_finished, args.timeout)
    answer = window.session.last_answer
    shown = answer.text if answer else window.answer_view.status.text()
    print(f"answered in {time.perf_counter() - t0:.0f} s: {shown}", flush=True)
    for _ in range(20):  # let the preview render and the layout settle
        app.processEvents()
        time.sleep(0.02)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(args.out))
    print(f"saved {args.out}", flush=True)
    window.close()
    return 0 if answer is not None else 1


if __name__ == "__main__":
    sys.exit(main())
