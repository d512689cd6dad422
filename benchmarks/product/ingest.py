"""Ingest benchmark: the whole corpus into a fresh temporary database, against plain PyMuPDF text extraction.

    python benchmarks/product/ingest.py            # human-readable summary
    python benchmarks/product/ingest.py --json     # one JSON object
    python benchmarks/product/ingest.py --files    # plus a per-file table

The ratio compares like with like: our PDF pages per second (parse + tree + store, for the PDFs we ingest
successfully) over PyMuPDF's ``page.get_text()`` on the same PDFs in the same process. PyMuPDF is timed before and
after our run and the faster of the two is kept, so the ratio is not flattered by a cold file cache. Peak RSS is
this process (ours and PyMuPDF's runs); with the default worker process the parser's own memory is in the child,
so ``peak_rss_mb`` is the parent only and ``worker_peak_rss_mb`` is the largest child (RUSAGE_CHILDREN).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from shelfwise.core.ingestion.runner import ingest
from shelfwise.core.store.db import Store

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


def pymupdf_times(pdfs: list[Path]) -> dict[str, tuple[int, float]]:
    """path -> (pages, seconds) for plain ``page.get_text()`` over every page; files PyMuPDF cannot read are left
    out."""
    import pymupdf

    out: dict[str, tuple[int, float]] = {}
    for pdf in pdfs:
        t0 = time.perf_counter()
        try:
            with pymupdf.open(pdf) as doc:
                if doc.needs_pass:
                    continue
                n = 0
                for page in doc:
                    page.get_text()
                    n += 1
        except (RuntimeError, ValueError):  # pymupdf.FileDataError and friends: not a readable PDF
            continue
        out[str(pdf)] = (n, time.perf_counter() - t0)
    return out


def peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    rss = resource.getrusage(who).ru_maxrss
    return rss / 2**20 if sys.platform == "darwin" else rss / 1024  # bytes on macOS, KiB on Linux


def run(corpus: Path, isolate: bool = True) -> dict[str, Any]:
    pdfs = sorted(p for p in corpus.rglob("*") if p.suffix.lower() == ".pdf")
    before = pymupdf_times(pdfs)
    with tempfile.TemporaryDirectory(prefix="shelfwise-bench-") as tmp:
        store = Store(Path(tmp) / "bench.db")
        report = ingest(store, [corpus], isolate=isolate)
        db_bytes = store.stats().db_bytes
        store.close()
    after = pymupdf_times(pdfs)

    ok = [r for r in report.results if r.action in ("added", "updated")]
    ok_pdfs = [r for r in ok if r.path.lower().endswith(".pdf") and r.path in before and r.path in after]
    our_pdf_pages = sum(r.pages for r in ok_pdfs)
    our_pdf_seconds = sum(r.seconds for r in ok_pdfs)
    ref_pages = sum(before[r.path][0] for r in ok_pdfs)
    ref_seconds = min(sum(before[r.path][1] for r in ok_pdfs), sum(after[r.path][1] for r in ok_pdfs))
    pdf_rate = our_pdf_pages / our_pdf_seconds if our_pdf_seconds else 0.0
    ref_rate = ref_pages / ref_seconds if ref_seconds else 0.0
    parse_seconds = {r.path: r.parse_seconds for r in report.results}
    parse_total = sum(parse_seconds.values())
    file_total = sum(r.seconds for r in report.results)
    return {
        "corpus": str(corpus),
        "isolated_parser": isolate,
        "files": len(report.results),
        "ok": len(ok),
        "failed": len(report.failed),
        "seconds": round(report.seconds, 3),
        "pages": report.pages,
        "pages_per_s": round(report.pages / report.seconds, 1) if report.seconds else 0.0,
        "passages": report.passages,
        "passages_per_s": round(report.passages / report.seconds, 1) if report.seconds else 0.0,
        "pdf_files": len(ok_pdfs),
        "pdf_pages": our_pdf_pages,
        "pdf_pages_per_s": round(pdf_rate, 1),
        "pymupdf_pages": ref_pages,
        "pymupdf_pages_per_s": round(ref_rate, 1),
        "ratio": round(pdf_rate / ref_rate, 3) if ref_rate else 0.0,
        "parse_seconds": round(parse_total, 3),
        # Everything but the parser itself: hashing, the worker round trip (pickling), tree building, SQLite.
        "store_seconds": round(max(file_total - parse_total, 0.0), 3),
        "db_mb": round(db_bytes / 2**20, 1),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "worker_peak_rss_mb": round(peak_rss_mb(resource.RUSAGE_CHILDREN), 1),
        "per_file": [
            {"file": Path(r.path).name, "action": r.action, "status": r.status, "pages": r.pages,
             "passages": r.passages, "seconds": round(r.seconds, 3),
             "parse_seconds": round(parse_seconds.get(r.path, 0.0), 3),
             "pymupdf_seconds": round(min(before[r.path][1], after[r.path][1]), 3) if r.path in before else None}
            for r in report.results
        ],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS, help=f"folder to ingest (default {CORPUS})")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--files", action="store_true", help="also print a per-file table")
    ap.add_argument("--in-process", action="store_true", help="parse in this process instead of a worker process")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"No corpus folder at {args.corpus}", file=sys.stderr)
        return 2
    r = run(args.corpus, isolate=not args.in_process)
    if args.json:
        print(json.dumps(r if args.files else {k: v for k, v in r.items() if k != "per_file"}, indent=2))
        return 0
    print(f"files          {r['files']} ({r['ok']} ok, {r['failed']} failed) in {r['seconds']:.2f} s")
    print(f"pages          {r['pages']:>7}  {r['pages_per_s']:>8.1f} pages/s   (all formats: pages, slides, sheets)")
    print(f"passages       {r['passages']:>7}  {r['passages_per_s']:>8.1f} passages/s")
    print(f"PDF, ours      {r['pdf_pages']:>7}  {r['pdf_pages_per_s']:>8.1f} pages/s   ({r['pdf_files']} PDFs)")
    print(f"PDF, PyMuPDF   {r['pymupdf_pages']:>7}  {r['pymupdf_pages_per_s']:>8.1f} pages/s   (page.get_text())")
    print(f"ratio          {r['ratio']:.2f}   (target >= 0.30)")
    where = "worker process" if r["isolated_parser"] else "in-process"
    print(f"time split     parse {r['parse_seconds']:.2f} s ({where}), "
          f"hash+transfer+tree+store {r['store_seconds']:.2f} s")
    print(f"database       {r['db_mb']} MB;  peak RSS {r['peak_rss_mb']} MB "
          f"(parser worker {r['worker_peak_rss_mb']} MB)")
    if args.files:
        print(f"\n{'file':<40} {'action':<8} {'status':<9} {'pages':>5} {'pass':>6} "
              f"{'sec':>7} {'parse':>7} {'mupdf':>7}")
        for f in r["per_file"]:
            mu = f"{f['pymupdf_seconds']:7.3f}" if f["pymupdf_seconds"] is not None else f"{'-':>7}"
            print(f"{f['file'][:40]:<40} {f['action']:<8} {f['status']:<9} {f['pages']:>5} {f['passages']:>6} "
                  f"{f['seconds']:7.3f} {f['parse_seconds']:7.3f} {mu}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
