"""Imported by name in a parse worker (or a helper process) to make it behave as on Windows: ``import resource``
and ``import fcntl`` fail there, so no ``RLIMIT_AS`` is set and no ``flock`` exists. Then allocates like
``tests/misbehaving_parser.py:hog`` until something stops it."""

from __future__ import annotations

import sys

sys.modules["resource"] = None  # type: ignore[assignment]  # `import resource` now raises ImportError
sys.modules["fcntl"] = None  # type: ignore[assignment]

from tests.misbehaving_parser import hog  # noqa: E402

__all__ = ["hog"]
