"""OCR speed and accuracy on this CPU: born-digital corpus pages rendered to images, the PDF's own text as reference.

    .venv/bin/python benchmarks/product/ocr.py                  # a table per render resolution
    .venv/bin/python benchmarks/product/ocr.py --json           # the same as JSON
    .venv/bin/python benchmarks/product/ocr.py --dpi 150 300    # other resolutions
    .venv/bin/python benchmarks/product/ocr.py --languages      # also: pages in other scripts (Japanese, Russian, ...)

Character accuracy = 1 - (edit distance / reference length) over the page's text with whitespace collapsed (spaces
count as characters), lines of both sides in the same order (top to bottom, left to right). ``accuracy_nospace``
ignores all whitespace (shows how much of the error is lost or extra spaces). Pages/s counts rendering + OCR.
Run on an idle machine for absolute speed; on a shared one compare resolutions within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf

from shelfwise.ingest import ocr

CORPUS = Path(os.environ.get("SHELFWISE_CORPUS", Path(__file__).resolve().parents[3] / "shared" / "corpus"))
# born-digital English pages with a text layer: prose, numbered procedure text, a report with a sidebar
ENGLISH_PAGES = [
    ("r-intro.pdf", 10), ("r-intro.pdf", 30), ("r-intro.pdf", 60),
    ("irs-irm-2-3-59.pdf", 5), ("irs-irm-2-3-59.pdf", 120),
    ("ibm-redp5110-sampled.pdf", 4), ("ibm-redp5110-sampled.pdf", 9),
    ("gao-23-106826-cyber.pdf", 1),
]
JAPANESE_PAGES = [("debian-reference-ja.pdf", 20), ("debian-reference-ja.pdf", 60)]
# other scripts: the corpus has them only in Office files, so their text is set on an A4 page (DejaVu Sans, 11 pt)
TYPESET = {"german": "de-ecodesign-elektronik.pptx", "russian": "ru-state-contract.docx"}
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one numpy row at a time (the insertion chain is a running minimum)."""
    if not a:
        return len(b)
    if not b:
        return len(a)
    bb = np.frombuffer(b.encode("utf-32-le"), dtype=np.uint32)
    ramp = np.arange(len(b) + 1, dtype=np.int64)
    prev = ramp.copy()
    for i, code in enumerate(np.frombuffer(a.encode("utf-32-le"), dtype=np.uint32), start=1):
        cost = (bb != code).astype(np.int64)
        tmp = np.empty_like(prev)
        tmp[0] = i
        tmp[1:] = np.minimum(prev[1:] + 1, prev[:-1] + cost)
        prev = np.minimum.accumulate(tmp - ramp) + ramp
    return int(prev[-1])


def accuracy(ocr_text: str, ref: str) -> float:
    return max(0.0, 1.0 - edit_distance(ocr_text, ref) / max(len(ref), 1))


def _ordered(lines: list[tuple[float, float, float, str]]) -> str:
    """Lines (y0, y1, x0, text) top to bottom (rows of 4 pt), left to right; whitespace collapsed."""
    lines = sorted(lines, key=lambda t: (round((t[0] + t[1]) / 8), t[2]))
    return " ".join(" ".join(t[3] for t in lines).split())


def reference_text(page: Any) -> str:
    lines = []
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", []):
            text = "".join(s["text"] for s in line["spans"])
            if text.strip():
                x0, y0, _x1, y1 = line["bbox"]
                lines.append((y0, y1, x0, text))
    return _ordered(lines)


def ocr_text(page: Any, dpi: int) -> str:
    return _ordered([(ln.y0, ln.y1, ln.x0, ln.text) for ln in ocr.ocr_lines(page, dpi, seconds=1e9)])


def typeset(name: str, chars: int = 1800) -> Path:
    """A one-page PDF with the first ``chars`` characters of a corpus Office file's text (the reference is the
    page's own text layer, as for the born-digital pages)."""
    from shelfwise.ingest.registry import parse

    text = " ".join(n.text for n in parse(CORPUS / name).nodes() if n.kind == "passage")
    text = " ".join(text.split())[:chars]
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"ocr-bench-{Path(name).stem}.pdf"
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_font(fontname="dejavu", fontfile=str(FONT))
    page.insert_textbox(pymupdf.Rect(60, 60, 535, 780), text, fontname="dejavu", fontsize=11)
    doc.save(str(out))
    return out


def run_pages(pages: list[tuple[str, int]], dpis: list[int]) -> list[dict[str, Any]]:
    out = []
    for dpi in dpis:
        rows = []
        for name, number in pages:
            with pymupdf.open(Path(name) if Path(name).is_absolute() else CORPUS / name) as doc:
                page = doc[number - 1]
                ref = reference_text(page)
                t0 = time.perf_counter()
                got = ocr_text(page, dpi)
                seconds = time.perf_counter() - t0
            rows.append({
                "file": name, "page": number, "seconds": round(seconds, 2), "ref_chars": len(ref),
                "accuracy": round(accuracy(got, ref), 4),
                "accuracy_nospace": round(accuracy("".join(got.split()), "".join(ref.split())), 4),
            })
            print(f"  {dpi} dpi {name} p.{number}: {rows[-1]}", file=sys.stderr)
        ref_total = sum(r["ref_chars"] for r in rows)
        out.append({
            "dpi": dpi,
            "pages": len(rows),
            "pages_per_second": round(len(rows) / sum(r["seconds"] for r in rows), 3),
            # pooled over pages, weighted by their reference length
            "accuracy": round(sum(r["accuracy"] * r["ref_chars"] for r in rows) / ref_total, 4),
            "accuracy_nospace": round(sum(r["accuracy_nospace"] * r["ref_chars"] for r in rows) / ref_total, 4),
            "per_page": rows,
        })
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dpi", type=int, nargs="+", default=[100, 150, 200, 300])
    ap.add_argument("--languages", action="store_true",
                    help="also Japanese corpus pages, German and Russian corpus text set on a page (default DPI)")
    ap.add_argument("--only-languages", action="store_true", help="skip the English resolution sweep")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args()
    reason = ocr.unavailable()
    if reason:
        sys.exit(reason)
    result: dict[str, Any] = {
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
                    "load_1min": round(os.getloadavg()[0], 2)},
    }
    if not args.only_languages:
        result["english"] = run_pages(ENGLISH_PAGES, sorted(set(args.dpi)))
    args.languages = args.languages or args.only_languages
    if args.languages:
        result["japanese"] = run_pages(JAPANESE_PAGES, [ocr.DEFAULT_DPI])
        if FONT.exists():
            for lang, name in TYPESET.items():
                result[lang] = run_pages([(str(typeset(name)), 1)], [ocr.DEFAULT_DPI])
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"machine: {result['machine']}")
    for key in ("english", "japanese", *TYPESET):
        for r in result.get(key, []):
            print(f"{key:<9} {r['dpi']:>4} dpi  {r['pages']} pages  {r['pages_per_second']:.3f} pages/s  "
                  f"accuracy {r['accuracy']:.4f}  (ignoring whitespace {r['accuracy_nospace']:.4f})")


if __name__ == "__main__":
    main()
