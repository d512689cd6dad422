"""Opening a large library: the store alone (what every ``shelfwise`` command does first) and the window (built and
shown, offscreen), this checkout beside another checkout's code, alternated in one run.

    QT_QPA_PLATFORM=offscreen python benchmarks/product/open_scale.py --db growth-100000.db --baseline-src BASE \
        --repeat 5 --json

``BASE`` is a folder holding ``shelfwise/`` whose packages link to the other checkout (as ``growth.py
--baseline-src``). Every open is a fresh interpreter (as a user starting the program), run by this interpreter with
``PYTHONPATH`` set to the side's code; per open it reports wall seconds, the process's CPU seconds, and whether
SQLite's ``quick_check`` ran (``Store.quick_checked``; the code before it always ran). One warm-up open of each
side comes first and is reported apart (``first_open``): for this checkout it is the open that finds no record of
a clean close (a library copied or built by the other code) and scans. The library file must stay closed by
everything else while it runs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def open_store(db: Path) -> dict[str, object]:
    from shelfwise.core.store.db import Store

    c0, t0 = time.process_time(), time.perf_counter()
    store = Store(db)
    out: dict[str, object] = {"open_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
                              "quick_checked": getattr(store, "quick_checked", True)}
    store.close()
    return out


def open_window(db: Path) -> dict[str, object]:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from shelfwise.app.gui.window import MainWindow
    from shelfwise.core.settings import Settings

    app = QApplication.instance() or QApplication([])
    c0, t0 = time.process_time(), time.perf_counter()
    window = MainWindow(Settings(db_path=db, use_calibration=False, answer_generate=False),
                        QSettings(str(db.with_suffix(".open.ini")), QSettings.Format.IniFormat))
    window.show()
    app.processEvents()
    out: dict[str, object] = {"open_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
                              "quick_checked": getattr(window.reader.store, "quick_checked", True)}
    window.shutdown()
    window.close()
    return out


def one(kind: str, db: Path, src: str | None) -> dict[str, object]:
    """One open in a fresh interpreter on the code at ``src`` (None: this checkout)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if src:
        env["PYTHONPATH"] = src
    done = subprocess.run([sys.executable, __file__, "--one", kind, "--db", str(db)], capture_output=True, text=True,
                          env=env)
    if done.returncode != 0:
        raise SystemExit(f"the {kind} open on {src or 'this checkout'} failed: {done.stderr[-3000:]}")
    row: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path, required=True, help="the library (growth.py's growth-N.db)")
    ap.add_argument("--baseline-src", default=None, help="a folder holding shelfwise/ (the code before)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--kinds", default="store,window")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        row = open_store(args.db) if args.one == "store" else open_window(args.db)
        row["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        print(json.dumps(row))
        return
    sides = {"now": None} if args.baseline_src is None else {"before": args.baseline_src, "now": None}
    result: dict[str, object] = {"command": "benchmarks/product/open_scale.py " + " ".join(sys.argv[1:]),
                                 "library_mb": round(args.db.stat().st_size / 2**20, 1),
                                 "load_average_start": [round(x, 1) for x in os.getloadavg()]}
    for kind in args.kinds.split(","):
        runs: dict[str, list[dict[str, object]]] = {side: [] for side in sides}
        first = {side: one(kind, args.db, src) for side, src in sides.items()}
        for _ in range(args.repeat):
            for side, src in sides.items():
                runs[side].append(one(kind, args.db, src))
        row: dict[str, object] = {}
        for side in sides:
            row[side] = {
                "first_open": first[side],
                "open_s_median": round(statistics.median(float(r["open_s"]) for r in runs[side]), 3),  # type: ignore[arg-type]
                "cpu_s_median": round(statistics.median(float(r["cpu_s"]) for r in runs[side]), 3),  # type: ignore[arg-type]
                "quick_checked": sum(bool(r["quick_checked"]) for r in runs[side]),
                "opens": len(runs[side]),
                "peak_rss_mb_max": max(float(r["peak_rss_mb"]) for r in runs[side]),  # type: ignore[arg-type]
            }
        if "before" in row:
            b, n = row["before"], row["now"]
            row["before_over_now"] = {k: round(b[k] / n[k], 2) for k in ("open_s_median", "cpu_s_median")  # type: ignore[index]
                                      if n[k]}  # type: ignore[index]
        result[kind] = row
        print(json.dumps({kind: row}), file=sys.stderr, flush=True)
    result["load_average_end"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(result, indent=1) if args.json else json.dumps(result))


if __name__ == "__main__":
    main()
