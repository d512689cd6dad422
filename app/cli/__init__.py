"""The ``shelfwise`` command line (click): a thin layer over :class:`shelfwise.core.shelf.Shelf` and the store.
Renders the core's trace and answer objects as text or JSON. Never imports Qt (``shelfwise app`` imports the GUI
inside the command).

Ctrl-C while the ``shelfwise`` program is still importing its modules (a second or more on a loaded machine) ends it
with one line instead of the traceback of an import (:func:`stop_while_starting`); the group's ``main`` puts Python's
own handler back (:func:`started`) before any command runs, so a command sees ``KeyboardInterrupt`` as usual.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType


def stop_while_starting(signum: int, frame: FrameType | None) -> None:
    """SIGINT before any command runs: nothing was done yet."""
    sys.stderr.write("Interrupted while starting; nothing was done.\n")
    sys.stderr.flush()
    os._exit(130)


def started() -> None:
    """From here on Ctrl-C raises KeyboardInterrupt again (the handler Python starts with)."""
    if threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGINT) is stop_while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)


if Path(sys.argv[0] if sys.argv else "").name == "shelfwise" and \
        threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, stop_while_starting)

if Path(sys.argv[0] if sys.argv else "").name in ("shelfwise", "-c"):  # the program (or `python -c` running it)
    from shelfwise.app.cli.early import start_early

    start_early(sys.argv[1:])
