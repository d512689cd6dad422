"""Which PDF pages need OCR, and reading them with :mod:`shelfwise.ingest.ocr` within the per-file limits.

A page needs OCR when its text layer is missing, empty, or garbage (mostly unmapped glyphs), and it is not
blank (a blank page renders to one colour). Pages are read in order up to ``Limits.max_ocr_pages``; a page that
takes longer than ``Limits.ocr_page_seconds`` is skipped; each is announced through
:func:`shelfwise.ingest.progress.report` ("OCR page 3/12"). Everything that was not read is said in a warning.
"""

from __future__ import annotations

import time
import unicodedata
from collections import Counter
from typing import Any

from shelfwise.ingest import ocr
from shelfwise.ingest.model import Limits
from shelfwise.ingest.pdf_layout import Block, PageText
from shelfwise.ingest.progress import report

GARBAGE_SHARE = 0.5  # a text layer with more unmapped/private-use/control characters than this is not text
BLANK_DPI = 18  # blank-page check: a tiny render that is one colour


def line_boxes(block: Block, page: int) -> tuple[tuple[int, float, float, float, float], ...]:
    """The boxes of a block's lines as ``(page, x0, y0, x1, y1)`` in PDF points, rounded to 0.1 pt."""
    return tuple(
        (page, round(ln.x0, 1), round(ln.y0, 1), round(ln.x1, 1), round(ln.y1, 1)) for ln in block.lines
    )


def _garbage(ch: str) -> bool:
    return ch == "\ufffd" or unicodedata.category(ch) in ("Co", "Cc", "Cn")


def text_is_unusable(pt: PageText) -> bool:
    """No text, only whitespace, or mostly characters that carry no text (unmapped glyphs)."""
    chars = [ch for b in pt.blocks for ln in b.lines for ch in ln.text if not ch.isspace()]
    if not chars:
        return True
    return sum(1 for ch in chars if _garbage(ch)) > GARBAGE_SHARE * len(chars)


def is_blank(page: Any) -> bool:
    try:
        return bool(page.get_pixmap(dpi=BLANK_DPI, alpha=False).is_unicolor)
    except Exception:
        return False


def _body_size(pages: list[PageText]) -> float:
    """The body font size of the text pages (the most common size by characters); 10 pt without any."""
    sizes: Counter[float] = Counter()
    for pt in pages:
        for b in pt.blocks:
            for ln in b.lines:
                if ln.size > 0:
                    sizes[ln.style] += len(ln.text)
    return sizes.most_common(1)[0][0] if sizes else ocr.BODY_SIZE


def page_ranges(pages: list[int], limit: int = 20) -> str:
    """``[1, 2, 3, 7]`` -> ``"1-3, 7"`` (at most ``limit`` ranges)."""
    ranges: list[str] = []
    start = prev = pages[0]
    for p in [*pages[1:], 0]:
        if p == prev + 1:
            prev = p
            continue
        ranges.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = p
    more = f" (+{len(ranges) - limit} more)" if len(ranges) > limit else ""
    return ", ".join(ranges[:limit]) + more


def read_scans(doc: Any, pages: list[PageText], limits: Limits, warnings: list[str]) -> set[int]:
    """Replace the pages that need OCR by their OCR'd text, in place. Returns the numbers of the pages read."""
    todo = [i for i, pt in enumerate(pages) if text_is_unusable(pt) and not is_blank(doc[i])]
    if not todo:
        return set()
    no_text = all(not pt.has_text for pt in pages)
    reason = ocr.unavailable()
    if reason is not None:
        what = "no text layer" if no_text else f"pages without text not read ({page_ranges([i + 1 for i in todo])})"
        warnings.append(f"{what}; {reason}")
        return set()
    if len(todo) > limits.max_ocr_pages:
        skipped = [i + 1 for i in todo[limits.max_ocr_pages:]]
        warnings.append(
            f"OCR page limit reached: {limits.max_ocr_pages} of {len(todo)} pages without text were read; "
            f"pages {page_ranges(skipped)} were not (limit: {limits.max_ocr_pages} per file)"
        )
        todo = todo[: limits.max_ocr_pages]
    body = _body_size([pt for pt in pages if pt.has_text])
    done: list[int] = []
    slow: list[int] = []
    failed: list[str] = []
    started = time.perf_counter()
    for k, i in enumerate(todo):
        report(f"OCR page {k + 1}/{len(todo)}")
        page = doc[i]
        try:
            lines = ocr.ocr_lines(page, limits.ocr_dpi, limits.ocr_page_seconds)
        except ocr.PageTimeout:
            slow.append(i + 1)
            continue
        except Exception as exc:
            failed.append(f"page {i + 1}: {exc.__class__.__name__}: {exc}")
            continue
        pages[i] = ocr.page_text(i + 1, pages[i].width, pages[i].height, lines)
        done.append(i)
    ocr.set_sizes([pages[i] for i in done], body)
    read = [i + 1 for i in done if pages[i].has_text]
    if slow:
        warnings.append(
            f"OCR took longer than {limits.ocr_page_seconds:.0f} s on pages {page_ranges(slow)}; "
            "those pages were skipped"
        )
    warnings.extend(f"OCR failed on {f}" for f in failed[:5])
    if no_text and not read:
        why = (f"OCR failed on {failed[0]}" if failed else
               f"OCR took longer than {limits.ocr_page_seconds:.0f} s a page" if slow else "OCR found no text")
        warnings.append(f"no text layer; {why}")
    if read:
        share = len(read) / len(pages)
        warnings.append(
            f"OCR: text of {len(read)} of {len(pages)} pages ({share:.0%}) read by OCR in "
            f"{time.perf_counter() - started:.0f} s; expect recognition errors"
        )
    return set(read)
