"""Progress from inside a parser (OCR reads a scan page by page) to whoever runs it.

A parser calls :func:`report` with a short message ("OCR page 3/12"); the runner installs a receiver with
:func:`reporting` around the parse call. In the parse worker process the receiver sends the message to the parent,
where :class:`~shelfwise.core.ingestion.worker.ParseWorker` calls :func:`report` again on the parent's receiver, so
``parse(path, limits)`` keeps its signature for every format. No receiver: nothing happens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

Receiver = Callable[[str], None]
_receiver: Receiver | None = None


def report(message: str) -> None:
    """Tell the current receiver (if any) how the parse is going."""
    if _receiver is not None:
        _receiver(message)


@contextmanager
def reporting(receiver: Receiver | None) -> Iterator[None]:
    """Send :func:`report` messages to ``receiver`` inside the ``with`` block."""
    global _receiver
    previous, _receiver = _receiver, receiver
    try:
        yield
    finally:
        _receiver = previous
