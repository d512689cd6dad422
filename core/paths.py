"""Where Shelfwise keeps its data: the user data dir (override with ``SHELFWISE_HOME``)."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs


def data_dir() -> Path:
    """The user data dir (models, default database, calibration). Created on first use."""
    env = os.environ.get("SHELFWISE_HOME")
    root = Path(env).expanduser() if env else Path(platformdirs.user_data_dir("shelfwise", appauthor=False))
    root.mkdir(parents=True, exist_ok=True)
    return root


def models_dir() -> Path:
    d = data_dir() / "models"
    d.mkdir(parents=True, exist_ok=True)
    return d


def default_db() -> Path:
    return data_dir() / "library.db"
