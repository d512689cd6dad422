"""``python -m shelfwise.ingest FILE...``: print each file's outline, or time a whole folder with ``--bench``.

$ python -m shelfwise.ingest --depth 2 report.pdf
$ python -m shelfwise.ingest --bench ../shared/corpus
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from shelfwise.ingest.model import IngestError, ParsedNode
from shelfwise.ingest.registry import is_candidate, parse


def _outline(nodes: list[ParsedNode], depth: int, level: int = 1) -> list[str]:
    out: list[str] = []
    for node in nodes:
        if node.kind != "section" or level > depth:
            continue
        n_passages = sum(1 for c in node.children if c.kind == "passage")
        out.append(f"{'  ' * level}{node.title[:80]}  [{node.location.label()}] ({n_passages} passages)")
        out.extend(_outline(node.children, depth, level + 1))
    return out


def _files(args: list[str]) -> list[Path]:
    out: list[Path] = []
    for arg in args:
        p = Path(arg)
        out.extend(sorted(f for f in p.rglob("*") if f.is_file() and is_candidate(f)) if p.is_dir() else [p])
    return out


def _raw_pdf_seconds(path: Path) -> tuple[float, int]:
    """Time of PyMuPDF's plain ``page.get_text()`` over a PDF (the throughput reference), and its pages."""
    import pymupdf

    started = time.perf_counter()
    try:
        with pymupdf.open(str(path)) as doc:
            if doc.needs_pass:
                return 0.0, 0
            for page in doc:
                page.get_text()
            return time.perf_counter() - started, doc.page_count
    except Exception:
        return 0.0, 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shelfwise.ingest", description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="files or folders")
    ap.add_argument("--depth", type=int, default=2, help="outline depth to print (default 2)")
    ap.add_argument(
        "--bench", action="store_true", help="time every file; compare PDFs with plain get_text()"
    )
    args = ap.parse_args(argv)
    files = _files(args.paths)
    total = ours_pdf = raw_pdf = 0.0
    pdf_pages = 0
    failed = 0
    for path in files:
        started = time.perf_counter()
        try:
            doc = parse(path)
        except IngestError as exc:
            failed += 1
            print(f"{path.name}: {type(exc).__name__}: {exc}")
            total += time.perf_counter() - started
            continue
        elapsed = time.perf_counter() - started
        total += elapsed
        print(
            f"{path.name}: {doc.title!r} [{doc.format}, {doc.pages} pages] {doc.count('section')} sections, "
            f"{doc.count('passage')} passages, {elapsed:.2f} s"
        )
        for warning in doc.warnings:
            print(f"  ! {warning}")
        if args.bench:
            if doc.format == "pdf":
                raw, pages = _raw_pdf_seconds(path)
                ours_pdf, raw_pdf, pdf_pages = ours_pdf + elapsed, raw_pdf + raw, pdf_pages + pages
        else:
            print("\n".join(_outline(doc.children, args.depth)))
    if args.bench and files:
        print(f"\n{len(files)} files ({failed} refused) in {total:.1f} s: {len(files) / total:.2f} files/s")
        if pdf_pages and ours_pdf:
            print(
                f"PDF: {pdf_pages} pages, parse {pdf_pages / ours_pdf:.0f} pages/s, plain get_text() "
                f"{pdf_pages / raw_pdf:.0f} pages/s: {raw_pdf / ours_pdf:.0%} of the raw rate"
            )
    return 1 if failed and not args.bench else 0


if __name__ == "__main__":
    sys.exit(main())
