"""A 1,000,000-cell sheet (issue 49, item 6): its ingest with the table stored, beside the ingest before tables were
stored (the same CLI at a682462, text passages only), in one run; then table questions over it through the table
path ``shelfwise ask`` runs (``candidate_tables`` -> ``load_tables`` -> ``answer_from_tables``), each timed and
given as a ratio to the ingest of the same sheet before.

    nice -n 19 .venv/bin/python benchmarks/product/table_scale.py --before /path/to/pythonpath-of-a682462 \\
        --out docs/eval/table-scale.json

``--before`` is a folder holding ``shelfwise/{core,ingest,app,resources}`` of the older checkout (links to a
``git worktree add --detach <dir> a682462``): with it on PYTHONPATH the installed console script runs that code.
Each ingest is ``shelfwise --db <new library> ingest <sheet> --no-index`` (parse in the worker, store; no
embedding), timed from outside; memory is the peak resident size of the biggest process it ran (the CLI or its
parse worker: ``RUSAGE_CHILDREN`` of a wrapper process around it).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROWS, COLS = 50_000, 20  # 1,000,000 cells
REGIONS = ["North", "South", "East", "West", "Central"]
QUESTIONS = [
    "What is the revenue for order R049123?",
    "How many orders are in the region West?",
    "What is the average revenue?",
    "Which order has the highest margin?",
    "What is the total units for the region North?",
    "How many orders are not in the region West?",  # a negated key (session 20)
]
ENCODER_QUESTIONS = [  # no column named by its words: the encoder's column names (session 21)
    "What is the income for order R049123?",
    "What is the income for order R049124?",
    "What is the income for order R000007?",
]


def make_sheet(path: Path) -> None:
    import openpyxl

    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("Orders")
    names = ["Order", "Region", "Product", "Date", "Units", "Revenue", "Margin", "Cost"] + [
        f"Metric {i}" for i in range(1, COLS - 7)]
    ws.append(names)
    start = dt.date(2024, 1, 1)
    for r in range(ROWS):
        ws.append([f"R{r:06d}", REGIONS[r % 5], f"Product {r % 50}", start + dt.timedelta(days=r % 700),
                   r % 97 + 1, (r * 37) % 10_000 + 100, ((r * 13) % 500) / 10, (r * 7) % 5_000]
                  + [(r * (i + 3)) % 1000 for i in range(COLS - 8)])
    wb.save(str(path))


def child(cmd: list[str], env: dict[str, str]) -> None:
    """Run ``cmd`` and print its wall time and the peak RSS of the biggest process it ran (JSON)."""
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(json.dumps({"rc": r.returncode, "seconds": seconds, "peak_rss_bytes": rss, "out": r.stdout[-400:],
                      "err": r.stderr[-400:]}))


def ingest(label: str, sheet: Path, db: Path, pythonpath: str | None) -> dict[str, object]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    exe = str(Path(sys.executable).parent / "shelfwise")
    cmd = [sys.executable, __file__, "--child", json.dumps([exe, "--db", str(db), "ingest", str(sheet), "--no-index"])]
    out = json.loads(subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout)
    out["label"] = label
    return out


def questions(db: Path, embedder: str = "none") -> list[dict[str, object]]:
    """Each question timed through the table path. With an ``embedder`` (the encoder steps on), the questions
    whose words name no column (:data:`ENCODER_QUESTIONS`) too, each with the encoder's in-process vectors
    dropped first, as a new process would start: the first one embeds the table's column names and keeps them in
    the library's vector cache, the later ones read them from it."""
    from shelfwise.core.answers.tables import answer_from_tables, header_encoder, load_tables
    from shelfwise.core.store.db import Store
    from shelfwise.core.store.tables import tables_of_documents

    out = []
    with Store(db) as store:
        docs = [d.id for d in store.documents()]
        encoder = None
        if embedder != "none":
            from shelfwise.core.models.encoders.embedder import Embedder

            encoder = header_encoder(Embedder(None if embedder == "default" else embedder))
            encoder.store = store
            encoder.embedder.embed(["a word"])  # the model loaded before the clock starts
        for q in QUESTIONS + (ENCODER_QUESTIONS if encoder is not None else []):
            if encoder is not None:
                encoder.forget()
            t0 = time.perf_counter()
            short = answer_from_tables(load_tables(store.conn, tables_of_documents(store.conn, docs)), q, encoder)
            seconds = time.perf_counter() - t0
            out.append({"question": q, "seconds": seconds, "value": short.text if short else None,
                        "operation": short.operation if short else None,
                        "explanation": short.explanation[:160] if short else None})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="PYTHONPATH folder of the checkout before tables were stored")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--sheet", type=Path, help="reuse this sheet (made when missing)")
    ap.add_argument("--child")
    ap.add_argument("--embedder", default="none",
                    help="with --library: the encoder steps on with this encoder (default: the product's, minilm)")
    ap.add_argument("--library", type=Path,
                    help="a library that holds the sheet already: time the questions only (no ingest, no ratio)")
    args = ap.parse_args()
    if args.child:
        child(json.loads(args.child), dict(os.environ))
        return
    if args.library:
        asked = questions(args.library, args.embedder)
        for a in asked:
            print(a, flush=True)
        if args.out:
            args.out.write_text(json.dumps({"library": str(args.library), "questions": asked,
                                            "machine": f"{os.cpu_count()} cores"}, indent=1) + "\n")
        return
    work = Path(tempfile.mkdtemp(prefix="table-scale-"))
    sheet = args.sheet or work / "orders.xlsx"
    if not sheet.exists():
        t0 = time.perf_counter()
        make_sheet(sheet)
        print(f"made {sheet} ({sheet.stat().st_size:,} bytes) in {time.perf_counter() - t0:.1f} s", flush=True)
    runs = []
    if args.before:
        runs.append(ingest("before (a682462, text passages only)", sheet, work / "before.db", args.before))
        print(runs[-1], flush=True)
    runs.append(ingest("now (table stored)", sheet, work / "now.db", None))
    print(runs[-1], flush=True)
    asked = questions(work / "now.db")
    base = next((r for r in runs if r["label"].startswith("before")), runs[0])
    for a in asked:
        a["ratio_to_ingest_before"] = float(a["seconds"]) / float(base["seconds"])  # type: ignore[arg-type]
        print(a, flush=True)
    result = {"cells": ROWS * COLS, "rows": ROWS, "columns": COLS, "sheet_bytes": sheet.stat().st_size,
              "ingests": runs, "questions": asked, "machine": f"{os.cpu_count()} cores"}
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
