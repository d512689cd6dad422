"""Where Shelfwise keeps its data: the user data dir (override with ``SHELFWISE_HOME``)."""

from __future__ import annotations

from pathlib import Path

import platformdirs

from shelfwise.core.environment import variable


class DataDirError(OSError):
    """The data dir cannot be used (``SHELFWISE_HOME`` names a file, a device, or a folder that cannot be made);
    the message says what to do."""


def data_dir() -> Path:
    """The user data dir (models, default database, calibration). Created on first use; :class:`DataDirError`
    when it is not a folder and cannot become one."""
    env = variable("SHELFWISE_HOME")
    root = Path(env).expanduser() if env else Path(platformdirs.user_data_dir("shelfwise", appauthor=False))
    where = f"SHELFWISE_HOME ({root})" if env else f"Shelfwise's data folder {root}"
    fix = "point SHELFWISE_HOME at a folder (it is created if missing)" if env else "set SHELFWISE_HOME to a folder"
    if root.exists() and not root.is_dir():
        raise DataDirError(f"{where} is {path_kind(root)}, not a folder: {fix}")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataDirError(f"cannot create {where}: {exc.strerror or exc}; {fix}") from exc
    return root


def path_kind(path: Path) -> str:
    """What ``path`` is, in words: "a file", "a folder", "a device", "a named pipe (FIFO)", "a socket"."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return "missing"
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def models_dir() -> Path:
    d = data_dir() / "models"
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataDirError(f"cannot create the models folder {d}: {exc.strerror or exc}") from exc
    return d


def default_db() -> Path:
    return data_dir() / "library.db"
