"""Where "Open file" opens a cited place, without Qt: the command or URL that opens the file at its page (PDF),
slide (PPTX) or sheet and cell (XLSX) in a viewer that can be told so, else the file at its start, with the preview
holding the place.

Which viewers take a place on their command line (their own manuals): Evince, Atril and Xreader ``--page-index``,
Okular ``--page``, Zathura ``--page``, qpdfview ``file#page``, MuPDF ``file page``, SumatraPDF ``-page``; on macOS
Skim through ``open -a Skim`` takes no page, so PDFs there open at their start. Office suites take no slide or
cell on the command line, so presentations and spreadsheets open at their start and the preview shows the place.
:func:`open_target` only builds the target (tested without launching anything); the window runs it.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shelfwise.core.navigation.trace import Location

Which = Callable[[str], str | None]

# (program, arguments before the file given the 1-based page, arguments after the file)
Viewer = tuple[str, Callable[[int], list[str]], Callable[[int], list[str]]]
PDF_VIEWERS: list[Viewer] = [
    ("okular", lambda p: ["--page", str(p)], lambda p: []),
    ("evince", lambda p: [f"--page-index={p}"], lambda p: []),
    ("atril", lambda p: [f"--page-index={p}"], lambda p: []),
    ("xreader", lambda p: [f"--page-index={p}"], lambda p: []),
    ("zathura", lambda p: ["--page", str(p)], lambda p: []),
    ("mupdf", lambda p: [], lambda p: [str(p)]),
]
WINDOWS_PDF_VIEWERS: list[Viewer] = [("SumatraPDF", lambda p: ["-page", str(p)], lambda p: [])]


@dataclass(frozen=True)
class OpenTarget:
    """``argv`` to run (a viewer told the place), else ``url`` for the desktop's default application. ``exact``:
    the viewer opens at the place; otherwise ``note`` says where the place is, which the preview shows."""

    path: str
    place: str  # "page 5", "slide 3", "Benefits!A1:E5", "" for the file as a whole
    argv: tuple[str, ...] = ()
    url: str = ""
    exact: bool = False
    note: str = ""


def _file_url(path: str) -> str:
    return Path(os.path.realpath(path)).as_uri()  # a symlink loop as it is (Path.resolve() raises)


def open_target(path: str, location: Location | None = None, *, which: Which = shutil.which,
                platform: str = sys.platform) -> OpenTarget:
    """How to open ``path`` at ``location`` (a passage's place, or None: the file)."""
    at = location or Location()
    page, slide, sheet, cells, line = at.page, at.slide, at.sheet, at.cells, at.line
    suffix = Path(path).suffix.lower()
    url = _file_url(path)
    if suffix == ".pdf" and page:
        place = f"page {page}"
        viewers = WINDOWS_PDF_VIEWERS if platform.startswith("win") else [] if platform == "darwin" else PDF_VIEWERS
        for name, before, after in viewers:
            exe = which(name)
            if exe:
                return OpenTarget(path, place, (exe, *before(page), path, *after(page)), exact=True)
        if platform.startswith("linux") and (exe := which("qpdfview")):
            return OpenTarget(path, place, (exe, f"{path}#{page}"), exact=True)
        return OpenTarget(path, place, url=url, note=f"Your PDF viewer cannot be told the page: go to {place}.")
    if slide:
        place = f"slide {slide}"
        return OpenTarget(path, place, url=url, note=f"Presentation programs cannot be told the slide: go to {place} "
                                                     f"(shown in the preview).")
    if sheet:
        place = f"{sheet}!{cells}" if cells else sheet
        return OpenTarget(path, place, url=url, note=f"Spreadsheet programs cannot be told the sheet: go to {place} "
                                                     f"(shown in the preview).")
    if line:
        place = f"line {line}"
        return OpenTarget(path, place, url=url, note=f"Opened at its start: the passage is at {place}.")
    if page:
        return OpenTarget(path, f"page {page}", url=url, note=f"Opened at its start: go to page {page}.")
    return OpenTarget(path, "", url=url, exact=True)
