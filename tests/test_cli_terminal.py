"""`shelfwise ask` on a real terminal (a pseudo-terminal), with the bundled Gemma 3 270M and the sample built with
the default encoder: the model's text is written as it comes, and a text the checks do not keep is gone from the
screen when the command ends, its reason printed where it stood (the window does the same). The bundled model
answers "Do I need the VPN on the office Wi-Fi?" with a reversed yes ("Yes, you do."), withdrawn against the
deciding sentence "In the office, the NW-Staff Wi-Fi network does not need the VPN"."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from collections.abc import Callable

import pytest

from tests.cli_sample import SHELFWISE, SampleLibrary
from tests.terminal_screen import screen

pytestmark = pytest.mark.model

COLUMNS = 100


def run_on_terminal(db: str, args: list[str], timeout: float = 600) -> str:
    """``shelfwise --db DB ARGS...`` with a pseudo-terminal COLUMNS wide as its stdout and stderr: the bytes it
    wrote, decoded."""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": str(COLUMNS), "LINES": "50", "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.Popen([str(SHELFWISE), "--db", db, *args], stdin=subprocess.DEVNULL, stdout=follower,
                            stderr=follower, env=env, close_fds=True)
    os.close(follower)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 1.0)
            if ready:
                try:
                    data = os.read(leader, 65536)
                except OSError:  # the terminal's other end is closed: the command has ended
                    break
                if not data:
                    break
                chunks.append(data)
            elif proc.poll() is not None:
                break
    finally:
        proc.wait(timeout=60)
        os.close(leader)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")[-3000:]
    return b"".join(chunks).decode("utf-8", errors="replace").replace("\r\n", "\n")  # the terminal's own newline


def test_a_reversed_yes_is_erased_from_the_terminal(gemma_sample_copy: Callable[[str], object]) -> None:
    lib = gemma_sample_copy("terminal")
    assert isinstance(lib, SampleLibrary)
    out = run_on_terminal(str(lib.db), ["ask", "Do I need the VPN on the office Wi-Fi?"])
    shown = screen(out, columns=COLUMNS)
    assert "Model's answer: " in out  # it was written on the terminal as it came
    # the deciding sentence first, its "No" above it where the confidence reaches its threshold
    # (core/answers/short_confidence.py; it lies near it on the sample), and the model's reversed yes withdrawn
    # either way
    assert any(f"Answer: {no}In the office, the NW-Staff Wi-Fi network does not need the VPN" in shown
               for no in ("No: ", "")), shown
    assert "Model's answer: " not in shown  # withdrawn, so off the screen
    assert "(The model's answer is not shown: it says yes where the deciding sentence" in shown
    assert "\x1b[" not in shown and "Sources:\n[1] IT Security Onboarding" in shown
