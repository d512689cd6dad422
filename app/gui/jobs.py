"""The jobs the window hands to its background workers, and the flag that cancels one. Plain dataclasses (no Qt), so
the window's logic and its tests can make and inspect jobs without a thread or an event loop.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


class CancelFlag:
    """A thread-safe flag; calling it answers the core's ``cancel()`` question."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    def __call__(self) -> bool:
        return self._event.is_set()



@dataclass
class IngestJob:
    paths: list[Path]
    collection: str = "default"
    force: bool = False  # re-read files even when unchanged ("Re-ingest")
    cancel: CancelFlag = field(default_factory=CancelFlag)


@dataclass
class EncoderJob:
    """Switch the library to another sentence encoder (``estimate``: only measure what the switch would take)."""

    encoder: str
    estimate: bool = False
    cancel: CancelFlag = field(default_factory=CancelFlag)


@dataclass
class RemoveJob:
    document_ids: list[int]
    collection: str = "default"
    cancel: CancelFlag = field(default_factory=CancelFlag)


@dataclass
class QueryJob:
    question: str
    collection: str | None = None
    keep: Sequence[int] = ()
    answer: bool = True  # False: search only (the walk, no written answer)
    cancel: CancelFlag = field(default_factory=CancelFlag)
    conversation: int | None = None  # the conversation this question continues (None: the worker starts one)
    alone: bool = False  # read the question alone even inside a conversation
    replaces_turn: int | None = None  # a stored turn this job asks again (deleted when this one is stored)
