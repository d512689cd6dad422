"""Offline OCR of PDF pages with RapidOCR (PP-OCRv4 detection/recognition ONNX models inside its wheel).

Used by :mod:`shelfwise.ingest.pdf` for pages without a usable text layer. A page is rendered with PyMuPDF at
:data:`DEFAULT_DPI` (measured best, see ``benchmarks/product/ocr.py``), text lines are detected and recognised, and each
line becomes a :class:`~shelfwise.ingest.pdf_layout.Line` in PDF points, its size taken from the line's height,
so the PDF parser's heading detection, paragraphs and passages work on OCR'd pages as on text pages, and every
passage keeps the boxes of its lines (the preview highlights them on the page image).

The engine is optional (the ``ocr`` extra; ``packaging/setup.sh`` installs it): without it :func:`unavailable`
says what to install. The steps run one at a time with a deadline check in between, so a page that takes longer
than its time limit is abandoned (:class:`PageTimeout`) after at most one model call. No Qt, no network: the
models ship inside the ``rapidocr-onnxruntime`` wheel.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
import time
from dataclasses import dataclass
from typing import Any

from shelfwise.ingest.pdf_layout import Block, Line, PageText

# The engine is installed without its own dependency list (which names the GUI build of OpenCV); the `ocr`
# extra brings the headless one and the rest.
INSTALL_HINT = (
    "install the optional OCR engine: pip install 'shelfwise[ocr]' && "
    "pip install --no-deps rapidocr-onnxruntime==1.4.4 (packaging/setup.sh does both)"
)
# Render resolution: the most accurate of those benchmarks/product/ocr.py tried at about the same pages/s (docs/ocr.md;
# detection is capped at DET_MAX_SIDE, so higher resolution mostly sharpens the lines the recogniser reads).
DEFAULT_DPI = 300
# Text detection runs on the page scaled to at most this many pixels on its long side: less memory than
# uncapped, with the same lines found and fewer words run together (docs/ocr.md, "Detection size").
DET_MAX_SIDE = 1280
REC_CHUNK = 24  # text lines recognised per model call between deadline checks
HEADING_SPREAD = 1.3  # OCR'd line heights this close (ratio) are taken as one type size
BODY_SIZE = 10.0  # OCR'd line heights are expressed relative to the body text, in points of a 10 pt body
MIN_SCORE = 0.5  # recogniser confidence below which a line is dropped (RapidOCR's own default)

_engine: Any = None
_import_error: str | None = None


class PageTimeout(Exception):
    """OCR of one page took longer than its time limit."""


@dataclass(frozen=True)
class OcrLine:
    """One recognised text line: its text, the recogniser's confidence and its box in PDF points."""

    text: str
    score: float
    x0: float
    y0: float
    x1: float
    y1: float
    height: float = 0.0  # the text's own height (a slightly skewed long line has a taller bounding box)

    @property
    def size(self) -> float:
        return self.height or self.y1 - self.y0


def unavailable() -> str | None:
    """None when the OCR engine can be loaded, else why not and what to install."""
    try:
        engine()
    except ImportError as exc:
        return f"OCR engine not installed ({exc.name or exc}); {INSTALL_HINT}"
    except Exception as exc:
        return f"OCR engine could not start: {exc.__class__.__name__}: {exc}"
    return None


def engine() -> Any:
    """The RapidOCR engine, loaded once per process (the models ship inside the wheel)."""
    global _engine
    if _engine is None:
        from rapidocr_onnxruntime import RapidOCR
        from rapidocr_onnxruntime.ch_ppocr_det.utils import DetPreProcess

        eng = RapidOCR()
        eng.max_side_len = 10_000  # the page's resolution is chosen by the render DPI, not capped at 2000 px
        det = eng.text_det  # detection on the page scaled down to DET_MAX_SIDE; lines are cut from the full page
        det.get_preprocess = lambda _max_wh: DetPreProcess(DET_MAX_SIDE, "max", det.mean, det.std)
        _engine = eng
    return _engine


def render(page: Any, dpi: int) -> Any:
    """The page as an RGB numpy array (height, width, 3) at ``dpi``."""
    import numpy as np
    import pymupdf

    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csRGB, alpha=False)
    img = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.stride)[:, : pix.width * 3]
    return img.reshape(pix.height, pix.width, 3).copy()


def _check(deadline: float) -> None:
    if time.monotonic() > deadline:
        raise PageTimeout


def recognise(img: Any, deadline: float = float("inf")) -> list[tuple[list[list[float]], str, float]]:
    """(box corners in pixels, text, confidence) of every text line found in ``img``, top to bottom.

    RapidOCR's own ``__call__`` split into its steps (detection, recognition in chunks) with a deadline check
    between them."""
    eng = engine()
    h, w = img.shape[:2]
    work, ratio_h, ratio_w = eng.preprocess(img)
    record: dict[str, Any] = {"preprocess": {"ratio_h": ratio_h, "ratio_w": ratio_w}}
    work, record = eng.maybe_add_letterbox(work, record)
    boxes, _ = eng.auto_text_det(work)
    if boxes is None or len(boxes) == 0:
        return []
    _check(deadline)
    # No text-direction classifier: rendered pages are upright (PDF rotation is applied when rendering), and on
    # corpus pages it turned several long upright lines upside down ("Pds aaois m asn e ...").
    crops = eng.get_crop_img_list(work, boxes)
    order = sorted(range(len(crops)), key=lambda i: crops[i].shape[1] / max(crops[i].shape[0], 1))
    texts: list[tuple[str, float]] = [("", 0.0)] * len(crops)
    for start in range(0, len(order), REC_CHUNK):
        part = order[start : start + REC_CHUNK]
        rec, _ = eng.text_rec([crops[i] for i in part])
        for i, res in zip(part, rec, strict=True):
            texts[i] = (str(res[0]), float(res[1]))
        _check(deadline)
    points = eng._get_origin_points(boxes, record, h, w)
    return [(p.tolist(), t, s) for p, (t, s) in zip(points, texts, strict=True)]


def ocr_lines(page: Any, dpi: int = DEFAULT_DPI, seconds: float = 60.0) -> list[OcrLine]:
    """The text lines of one PDF page, read by OCR, in PDF points. Raises :class:`PageTimeout`."""
    deadline = time.monotonic() + seconds
    img = render(page, dpi)
    scale = 72.0 / dpi
    out: list[OcrLine] = []
    for box, text, score in recognise(img, deadline):
        text = tidy(text)
        if score < MIN_SCORE or not text:
            continue
        xs, ys = [p[0] for p in box], [p[1] for p in box]
        (ax, ay), (bx, by), (cx, cy), (dx, dy) = box[:4]  # corners clockwise from the top left
        height = (math.hypot(dx - ax, dy - ay) + math.hypot(cx - bx, cy - by)) / 2
        out.append(OcrLine(text, score, min(xs) * scale, min(ys) * scale, max(xs) * scale, max(ys) * scale,
                           height * scale))
    return out


# The recogniser often drops the space after a comma, semicolon or sentence end ("garden,stooping"): put it back
# where a lower-case word ends and a word starts (not inside numbers, "e.g.", URLs or file names).
_NO_SPACE = re.compile(r"(?<=[a-z]{2}[,;:])(?=[A-Za-z]{2})|(?<=[a-z]{3}[.!?])(?=[A-Z][a-z])")


def tidy(text: str) -> str:
    """One recognised line: whitespace collapsed, the lost space after punctuation restored."""
    text = " ".join(text.split())
    return _NO_SPACE.sub(" ", text)


def _same_block(prev: OcrLine, line: OcrLine, height: float) -> bool:
    """Does ``line`` continue the paragraph of ``prev`` (the line above it)?"""
    gap = line.y0 - prev.y1
    overlap = min(prev.x1, line.x1) - max(prev.x0, line.x0)
    similar = abs(line.size - prev.size) <= 0.35 * height
    return -0.5 * height <= gap <= 0.9 * height and overlap > 0 and similar


def page_text(number: int, width: float, height: float, lines: list[OcrLine]) -> PageText:
    """OCR'd lines as a :class:`PageText`: lines side by side on one row become one line, rows close under each
    other with overlapping extent become a block (paragraph). Sizes are set later by :func:`set_sizes`."""
    pt = PageText(number=number, width=width, height=height)
    rows: list[list[OcrLine]] = []
    for ln in sorted(lines, key=lambda ln: (ln.y0 + ln.y1) / 2):
        mid = (ln.y0 + ln.y1) / 2
        if rows:
            last = rows[-1]
            top, bottom = min(x.y0 for x in last), max(x.y1 for x in last)
            if top < mid < bottom and all(ln.x0 >= x.x1 or ln.x1 <= x.x0 for x in last):
                last.append(ln)
                continue
        rows.append([ln])
    merged: list[OcrLine] = []  # in row order; pieces of a row left to right
    for row in rows:
        row.sort(key=lambda ln: ln.x0)
        if len(row) > 1 and _columns(row):  # separate columns stay separate lines
            merged.extend(row)
            continue
        merged.append(OcrLine(" ".join(x.text for x in row), min(x.score for x in row), row[0].x0,
                              min(x.y0 for x in row), max(x.x1 for x in row), max(x.y1 for x in row),
                              statistics.median(x.size for x in row)))
    typical = statistics.median(ln.size for ln in merged) if merged else 10.0
    blocks: list[list[OcrLine]] = []
    for ln in merged:
        for block in reversed(blocks[-3:]):
            if _same_block(block[-1], ln, typical):
                block.append(ln)
                break
        else:
            blocks.append([ln])
    for block in blocks:
        pt.blocks.append(Block([Line(ln.text, ln.size, False, ln.x0, ln.y0, ln.x1, ln.y1) for ln in block]))
    return pt


def _columns(row: list[OcrLine]) -> bool:
    """Lines on one row separated by a wide gap (several line heights) belong to different columns."""
    height = max(ln.size for ln in row)
    return any(b.x0 - a.x1 > 4 * height for a, b in itertools.pairwise(row))


def set_sizes(pages: list[PageText], body: float = BODY_SIZE) -> None:
    """Turn OCR'd line heights into font sizes on the scale of the document's text: the median line height
    is ``body``; lines within 20% of it get exactly ``body`` (box heights vary with ascenders and descenders), the
    others keep their ratio, rounded to steps of 10%, so heading detection sees a few clear sizes. A taller line
    as wide as the body text is body text (a drop capital, a slightly skewed scan), not a heading."""
    lines = [ln for pt in pages for b in pt.blocks for ln in b.lines]
    if not lines:
        return
    median = statistics.median(ln.size for ln in lines)
    ratios = [ln.size / median if median > 0 else 1.0 for ln in lines]
    widths = [ln.x1 - ln.x0 for ln, r in zip(lines, ratios, strict=True) if abs(r - 1.0) <= 0.2]
    full = 0.8 * statistics.median(widths) if widths else float("inf")
    plain = [abs(r - 1.0) <= 0.2 or (r > 1.0 and ln.x1 - ln.x0 >= full) for ln, r in zip(lines, ratios, strict=True)]
    # Taller lines within HEADING_SPREAD of each other are one heading size: a line without descenders ("Meals
    # Allowance") is ~25% shorter than one with them ("Travel Expenses") in the same type.
    level: dict[float, float] = {}
    top = 0.0
    for r in sorted({r for r, p in zip(ratios, plain, strict=True) if not p and r > 1.0}, reverse=True):
        if not top or r * HEADING_SPREAD < top:
            top = r
        level[r] = top
    for ln, ratio, is_plain in zip(lines, ratios, plain, strict=True):
        ln.size = body if is_plain else round(level.get(ratio, ratio), 1) * body

