"""What a structural answer costs on a 500-page PDF, beside an ordinary question on the same library.

    .venv/bin/python benchmarks/product/structure_cost.py [--pages 500] [--runs 7] [--out docs/eval/structure-cost.json]

Makes a synthetic PDF (PyMuPDF: 20 chapters of 5 sections, each section a few pages of sentences, with a bookmark
outline as real manuals have), ingests it with the real pipeline and the bundled models into a fresh library, then
times ``Shelf.ask`` in one process (after one warm-up each, as the window asks): an outline, a summary, a count,
a section and a "which documents mention" question, and two ordinary questions (the walk and the extractive
answer). The model's own wording is off for all of them (``answer_generate=False``), so the figures compare the
same stage: question -> the answer shown first.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pymupdf

from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf

TOPICS = ["budget", "safety", "training", "travel", "security", "payroll", "equipment", "privacy", "leave",
          "contracts", "audits", "suppliers", "facilities", "records", "reporting", "quality", "incidents",
          "vehicles", "insurance", "planning"]
WORDS = ("staff must record each request in the register before the deadline and the manager checks the amount "
         "against the limit for the team while the office keeps a copy for the annual review of the policy").split()

STRUCTURAL = [
    ("outline", "What are the chapters of the operations manual?"),
    ("summary", "Summarize the operations manual"),
    ("count", "How many pages does the operations manual have?"),
    ("section", "What does section 12.3 of the operations manual cover?"),
    ("mentions", "Which documents mention insurance?"),
]
ORDINARY = [
    ("ordinary", "What is the limit for travel requests in the operations manual?"),
    ("ordinary", "Who checks the amount of a safety request?"),
]


def make_pdf(path: Path, pages: int = 500, seed: int = 0) -> int:
    """A PDF of ``pages`` pages: 20 chapters x 5 sections with a bookmark outline; returns its page count."""
    rng = random.Random(seed)
    doc = pymupdf.open()
    toc: list[list[object]] = []
    per_section = max(1, pages // 100)
    for ch, topic in enumerate(TOPICS, 1):
        for sec in range(1, 6):
            title = f"{ch}.{sec} {topic.title()} rule {sec}"
            if sec == 1:
                toc.append([1, f"{ch} {topic.title()}", doc.page_count + 1])
            toc.append([2, title, doc.page_count + 1])
            for k in range(per_section):
                page = doc.new_page()
                lines = [title] if k == 0 else []
                for _ in range(18):
                    words = rng.sample(WORDS, 14)
                    lines.append(f"The {topic} {' '.join(words)}.")
                page.insert_textbox(pymupdf.Rect(60, 60, 540, 780), "\n".join(lines), fontsize=10)
    doc.set_toc(toc)
    doc.set_metadata({"title": "Operations Manual"})
    doc.save(str(path))
    n = doc.page_count
    doc.close()
    return n


def timed(shelf: Shelf, question: str, runs: int) -> tuple[float, list[float], str]:
    shelf.ask(question)  # warm-up: models loaded, the collection's snapshot built
    times = []
    kind = ""
    for _ in range(runs):
        t0 = time.perf_counter()
        answer = shelf.ask(question)
        times.append(time.perf_counter() - t0)
        kind = answer.kind or "ordinary"
    return statistics.median(times), times, kind


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=500)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--work", type=Path, default=None, help="Folder for the PDF and the library (default: a temp).")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="structure-cost-"))
    work.mkdir(parents=True, exist_ok=True)
    pdf = work / "operations-manual.pdf"
    pages = make_pdf(pdf, args.pages)
    db = work / "library.db"
    t0 = time.perf_counter()
    with Shelf(Settings(db_path=db, answer_generate=False)) as shelf:
        if not shelf.store.documents():
            shelf.ingest([pdf])
        ingest_s = time.perf_counter() - t0
        doc = shelf.store.documents()[0]
        rows = []
        for expected, q in STRUCTURAL + ORDINARY:
            median, times, kind = timed(shelf, q, args.runs)
            rows.append({"question": q, "expected": expected, "kind": kind, "median_s": round(median, 4),
                         "runs_s": [round(t, 4) for t in times]})
            print(f"{median:7.3f} s  {kind:<9} {q}", flush=True)
    report = {"pages": pages, "stored_pages": doc.pages, "sections": doc.sections, "passages": doc.passages,
              "ingest_s": round(ingest_s, 1), "runs": args.runs, "rows": rows}
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "rows"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
