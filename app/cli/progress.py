"""Progress on stderr for every long CLI phase (parsing files, embedding, calibration): one printer.

On a terminal the line is redrawn in place; otherwise (a pipe, a log file) a new line is written only when the
step changes (each file's result while parsing, every 10% while indexing), so logs stay short.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path
from typing import TextIO

from shelfwise.app.cli.shown import raw_stream, shown
from shelfwise.core.api.indexing import IndexProgress, IngestProgress


def duration(seconds: float | None) -> str:
    """``42s``, ``3m05s``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    if seconds < 60:
        return f"{seconds:.0f}s"
    return f"{seconds // 60:.0f}m{seconds % 60:02.0f}s"


def _eta(eta: float | None, done: int, total: int) -> str:
    return f"ETA {duration(eta)}" if eta is not None and done < total else ""


def describe_progress(p: IndexProgress) -> str:
    """``embedding 1200/5400 (22%), ETA 3m10s`` and the like."""
    eta = _eta(p.eta_seconds, p.done, p.total)
    eta = f", {eta}" if eta else ""
    if p.stage == "embedding":
        return f"embedding {p.done}/{p.total} ({100 * p.fraction:.0f}%){eta}"
    if p.stage == "sentences":
        return f"embedding sentences {p.done}/{p.total}{eta}"
    if p.stage == "calibrating":
        return f"calibrating on probe queries {p.done}/{p.total}{eta}" if p.total > 1 else "topics and calibration"
    if p.stage == "starting":
        return f"starting ({p.total} nodes to embed)"
    return "done"


class ProgressLine:
    """One progress line on ``stream`` (default stderr): redrawn on a terminal; elsewhere printed when ``step``
    changes (``step=None``: always), and at least every ``heartbeat`` seconds while it does not (a long step, such
    as a tenth of a large collection's embedding, then still shows it is moving)."""

    heartbeat: float | None = None

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.width = shutil.get_terminal_size((100, 20)).columns
        self.drawn = False
        self.step: object = object()
        self.shown_at = 0.0

    def show(self, text: str, step: object = None) -> None:
        if self.tty:
            raw_stream(self.stream).write("\r")  # the redraw's own control; the text passes the terminal's door
            self.stream.write(text[: self.width - 1].ljust(self.width - 1))
            self.drawn = True
        elif step is None or step != self.step or (
                self.heartbeat is not None and time.monotonic() - self.shown_at >= self.heartbeat):
            self.stream.write(text + "\n")
            self.step = step
            self.shown_at = time.monotonic()
        self.stream.flush()

    def finish(self) -> None:
        """Clear a drawn line (a terminal); nothing otherwise."""
        if self.tty and self.drawn:
            raw = raw_stream(self.stream)
            raw.write("\r" + " " * (self.width - 1) + "\r")
            self.stream.flush()
            self.drawn = False


class IngestLine(ProgressLine):
    """``[#####      ] 12/40 ETA 20s report.pdf · OCR page 3/9`` on a terminal; one line per file otherwise."""

    def __call__(self, p: IngestProgress) -> None:
        name = shown(Path(p.path).name)
        if not self.tty:
            if p.status != "working" or p.message:  # a file's result, or its parser's progress ("OCR page 2/9")
                note = f": {shown(p.message)}" if p.message and p.status != "ok" else ""
                status = "ok (OCR)" if p.status == "ok" and p.ocr_pages else p.status
                self.show(f"[{p.done}/{p.total}] {status:<9} {name}{note}")
            return
        frac = p.done / p.total if p.total else 1.0
        eta = _eta(p.eta_seconds, p.done, p.total)
        step = f" · {shown(p.message)}" if p.status == "working" and p.message else ""
        self.show(f"[{'#' * int(frac * 24):<24}] {p.done}/{p.total}{' ' + eta if eta else ''} {name}{step}")


class IndexLine(ProgressLine):
    """``Indexing: embedding 120/3400 (4%), ETA 3m10s``, then the calibration's probes: redrawn on a terminal,
    every 10% otherwise, and every ``heartbeat`` seconds between (a tenth of 20,000 passages takes minutes)."""

    heartbeat = 10.0

    def __call__(self, p: IndexProgress) -> None:
        if p.stage in ("embedding", "sentences", "calibrating"):
            step = int(10 * p.done / max(1, p.total)) + {"sentences": 11, "calibrating": 22}.get(p.stage, 0)
            self.show(f"Indexing: {describe_progress(p)}", step)
        elif p.stage == "done":
            self.finish()


__all__ = ["IndexLine", "IngestLine", "ProgressLine", "describe_progress", "duration"]
