"""The window on a large library: opening it, its library tree, a question, side by side for several sizes in one run.

    QT_QPA_PLATFORM=offscreen python benchmarks/product/window_scale.py --dir DIR --sizes 1000,100000 --json

The libraries are the ones ``benchmarks/product/growth.py`` builds in ``--dir`` (``growth-N.db``: the synthetic
trees with a vector on every node, indexed as ``shelfwise index`` leaves a library, calibration off); build them
with ``growth.py --sizes N --dir DIR`` first. The smallest size is the baseline each row's ratios are taken
against (the same run, the same load).

Per size, in one process per size (a fresh interpreter, as a user opening the window; the real ``MainWindow``
offscreen, generation off): ``open_s``, the window built and shown (the library pane filled, the unfinished-index
check done, on the UI thread) until the event loop is idle; ``tree_s``, every collection of the library pane
collapsed and expanded again with its document rows drawn; ``first_question_s``, a question typed and asked (the
models loaded in the query worker's thread, the walk, the extracted answer) until ``query_finished``, at once or
``--pause`` seconds after the window is shown (a user reading it and typing: the encoder the window starts loading
when it opens is loaded by then); then
``question_s``, the median of ``--repeat`` more, each the words of another passage next to the middle one (the
window's warm case: each question encoded, then walked), with the CPU seconds the process spent on each
(``first_question_cpu_s``, ``question_cpu_s``: steadier than wall time on a shared machine); the longest the UI
thread was blocked while a question ran (``ui_blocked_max_s``: the longest gap between ticks of a 10 ms timer);
peak RSS. The
question: the words of the passage in the middle of the tree (as ``growth.py`` asks).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def measure(db: Path, repeat: int, pause: float = 0.0) -> dict[str, float]:
    """One size, in this process."""
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from growth import question_for

    from shelfwise.app.gui.window import MainWindow
    from shelfwise.core.settings import Settings

    app = QApplication.instance() or QApplication([])
    question = question_for(db)
    # the next questions, read before the window opens the library (a second connection on an open library checks
    # the whole file first: seconds at 10^6, which would be counted as the UI thread blocked)
    others = [question_for(db, k) for k in range(1, repeat + 1)]
    t0 = time.perf_counter()
    window = MainWindow(Settings(db_path=db, use_calibration=False, answer_generate=False),
                        QSettings(str(db.with_suffix(".ui.ini")), QSettings.Format.IniFormat))
    window.show()
    app.processEvents()
    out: dict[str, float] = {"open_s": round(time.perf_counter() - t0, 3)}
    tops = [window.library.tree.topLevelItem(i) for i in range(window.library.tree.topLevelItemCount())]
    t0 = time.perf_counter()
    for top in tops:
        if top is not None:
            top.setExpanded(False)
            app.processEvents()
            top.setExpanded(True)
    app.processEvents()
    out["tree_s"] = round(time.perf_counter() - t0, 3)
    out["documents_shown"] = len(window.library.document_items())
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    timer.start(10)

    cpu: list[float] = []

    def ask(question: str) -> float:
        done: list[bool] = []
        window.query_finished.connect(lambda: done.append(True))
        start, c0 = time.perf_counter(), time.process_time()
        window.answer_view.question.setText(question)
        window.answer_view.ask_button.click()
        while not done:
            QTest.qWait(5)
        took = time.perf_counter() - start
        cpu.append(time.process_time() - c0)  # the whole process: the UI thread and the query worker
        window.query_finished.disconnect()
        answer = window.session.last_answer
        if answer is None or not answer.search or not answer.search.hits:
            raise RuntimeError(f"no answer in the window for {question!r}")
        return took

    if pause:  # the user reading the window and typing: what the window starts meanwhile is done by then
        QTest.qWait(int(pause * 1000))
    out["first_question_s"] = round(ask(question), 3)
    ticks.clear()
    # the next questions each another passage's words (the same question again would read its kept ranking and
    # cosines: docs/scale.md, "Session 21: 10^6 passages")
    runs = [ask(other) for other in others]
    timer.stop()
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    out["question_s"] = round(statistics.median(runs), 3)
    out["first_question_cpu_s"] = round(cpu[0], 3)
    out["question_cpu_s"] = round(statistics.median(cpu[1:]), 3)
    out["ui_blocked_max_s"] = round(max(gaps), 3) if gaps else 0.0
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    window.shutdown()
    window.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=None, help="where growth.py built its libraries (required)")
    ap.add_argument("--sizes", default="1000,100000", help="the first is the baseline of the ratios")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--pause", type=float, default=0.0, help="seconds between the window shown and the first "
                    "question (a user typing it); 0: asked at once")
    ap.add_argument("--one", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(measure(args.one, args.repeat, args.pause)))
        return
    if args.dir is None:
        ap.error("--dir is required")
    sizes: dict[str, dict[str, object]] = {}
    for n in [int(s) for s in args.sizes.split(",")]:
        db = args.dir / f"growth-{n}.db"
        if not (args.dir / f"growth-{n}.done").exists():
            raise SystemExit(f"{db} is not built: run benchmarks/product/growth.py --sizes {n} --dir {args.dir}")
        done = subprocess.run([sys.executable, __file__, "--one", str(db), "--repeat", str(args.repeat),
                               "--pause", str(args.pause)], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"the window on {db} failed: {done.stderr[-3000:]}")
        row: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
        row["load_average"] = [round(x, 1) for x in os.getloadavg()]
        sizes[str(n)] = row
        print(json.dumps({str(n): row}), file=sys.stderr, flush=True)
    base = next(iter(sizes.values()))
    for row in list(sizes.values())[1:]:
        row["ratio_over_smallest"] = {k: round(float(row[k]) / float(base[k]), 2)  # type: ignore[arg-type]
                                      for k in ("open_s", "tree_s", "first_question_s", "question_s", "question_cpu_s",
                                                "peak_rss_mb")
                                      if float(base.get(k, 0) or 0) > 0}  # type: ignore[arg-type]
    result = {"sizes": sizes, "command": "benchmarks/product/window_scale.py " + " ".join(sys.argv[1:])}
    print(json.dumps(result, indent=1) if args.json else json.dumps(sizes))


if __name__ == "__main__":
    main()
