"""Peak resident memory of a process and all its descendants (sampled from /proc), for the reliability runs."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from shelfwise.core.ingestion.watchdog import rss_bytes


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            text = (task / "children").read_text()
            out.extend(int(x) for x in text.split())
    except (OSError, ValueError):
        pass
    return out


def _rss(pid: int) -> int:
    return rss_bytes(pid) or 0  # the parse worker's watchdog reads memory the same way


def tree(pid: int) -> list[int]:
    seen = [pid]
    i = 0
    while i < len(seen):
        seen.extend(c for c in _children(seen[i]) if c not in seen)
        i += 1
    return seen


class PeakRss:
    """``with PeakRss(pid) as peak: ...``; then ``peak.tree_bytes`` (largest sum over the process tree) and
    ``peak.single_bytes`` (largest single process)."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid = pid
        self.interval = interval
        self.tree_bytes = 0
        self.single_bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            sizes = [_rss(p) for p in tree(self.pid)]
            if sizes:
                self.tree_bytes = max(self.tree_bytes, sum(sizes))
                self.single_bytes = max(self.single_bytes, max(sizes))
            time.sleep(self.interval)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
