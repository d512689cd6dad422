"""A parser for the worker-process tests (imported in the child by name): crashes or hangs on request."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from shelfwise.ingest.model import Limits, ParsedDocument
from shelfwise.ingest.registry import parse as registry_parse


def parse(path: Path, limits: Limits) -> ParsedDocument:
    if "segv" in path.name:
        os.kill(os.getpid(), signal.SIGSEGV)
    if "hang" in path.name:
        time.sleep(60)
    return registry_parse(path, limits)
