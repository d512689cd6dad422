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


def hog(path: Path, limits: Limits) -> ParsedDocument:
    """Allocates (and touches) 16 MB every 10 ms until something stops it: the memory caps' test."""
    held = []
    while True:
        held.append(bytearray(16 * 1024 * 1024))
        for i in range(0, len(held[-1]), 4096):
            held[-1][i] = 1
        time.sleep(0.01)


def killed(path: Path, limits: Limits) -> ParsedDocument:
    """Killed from outside while it reads (as the out-of-memory killer or a user would)."""
    os.kill(os.getpid(), signal.SIGKILL)
    return registry_parse(path, limits)


def truncating(path: Path, limits: Limits) -> ParsedDocument:
    """Reads the file while something cuts it to a tenth (a file being rewritten during the ingest)."""
    data = path.read_bytes()
    path.write_bytes(data[: max(1, len(data) // 10)])
    return registry_parse(path, limits)


def swapping(path: Path, limits: Limits) -> ParsedDocument:
    """Swaps the file it was asked to read for a symlink to another (``SHELFWISE_TEST_SWAP``: "original|secret")
    before it reads: what a race between the worker's open and the parser's reads would do."""
    original, secret = os.environ["SHELFWISE_TEST_SWAP"].split("|")
    os.remove(original)
    os.symlink(secret, original)
    return registry_parse(path, limits)
