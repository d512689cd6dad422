"""Packaged data files: the sample collection, prompt templates, icons."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent


def path(*parts: str) -> Path:
    """Absolute path of a bundled resource, e.g. ``path("sample")``."""
    return ROOT.joinpath(*parts)
