"""What an ingest may open: regular files only, recognised from ``lstat``/``stat`` before anything opens them.

A FIFO blocks the reader forever, ``/dev/zero`` is an endless stream, a socket cannot be read as a file, a symlink
loop has no target, and a link that leaves the folder the user gave brings in files the user did not point at.
:func:`not_a_file` names each of these (the reason becomes the path's status line); :func:`walk` walks a folder
without recursion (a tree thousands of levels deep is walked as far as the system can name its paths) and reports
every entry it does not take; :func:`open_regular` opens without blocking and refuses anything that turned into a
non-regular file between the check and the open; :func:`sha256_file` reads at most the size ``stat`` gave, so no
stream can keep the main process reading.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


class NotAFile(OSError):
    """The path is not (or no longer) a regular file."""


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "" if stat.S_ISREG(mode) else "not a regular file"


def _inside(target: str, root: str) -> bool:
    return target == root or target.startswith(root.rstrip(os.sep) + os.sep)


def not_a_file(path: Path, inside: Path | None = None) -> str:
    """Why ``path`` is not read as a document ("" for a regular file it may read). ``inside``: the folder the user
    gave, which a symlink may not leave. Never opens the path."""
    try:
        lst = os.lstat(path)
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    link = stat.S_ISLNK(lst.st_mode)
    try:
        st = os.stat(path)
    except OSError as exc:
        if link and exc.errno == errno.ELOOP:
            return "a symbolic link loop (the link leads back to itself): not read"
        if link and exc.errno == errno.ENOENT:
            return "a broken symbolic link (its target does not exist): not read"
        return f"cannot read it: {exc.strerror or exc}"
    kind = _kind(st.st_mode)
    if kind:
        what = f"a symbolic link to {kind}" if link else kind
        return f"{what}, not a regular file: not read"
    if link and inside is not None:
        target = os.path.realpath(path)
        if not _inside(target, os.path.realpath(inside)):
            return f"a symbolic link that leaves the folder (to {target}): not followed"
    return ""


@dataclass
class Walked:
    files: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)  # entries that are not read, and why
    unreadable: list[tuple[Path, OSError]] = field(default_factory=list)  # folders that cannot be listed
    unreadable_files: list[tuple[Path, OSError]] = field(default_factory=list)  # entries that cannot be looked at


def walk(folder: Path, is_candidate: Callable[[Path], bool]) -> Walked:
    """The candidate files under ``folder`` in sorted, depth-first order, without recursion; hidden entries are
    left out silently, links to folders are not followed (said), and special files are refused (said). Folders
    that cannot be listed and entries that cannot be looked at (permissions, a path too long to name, an I/O error)
    are returned with their error: the walk goes on with the rest."""
    out = Walked()
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            out.unreadable.append((current, exc))
            continue
        subdirs: list[Path] = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            p = Path(current) / entry.name
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError as exc:
                out.unreadable_files.append((p, exc))
                continue
            if is_dir:
                subdirs.append(p)
                continue
            if is_link and os.path.isdir(p):
                out.refused.append((p, "a symbolic link to a folder: not followed"))
                continue
            if not is_candidate(p):
                continue
            try:
                os.lstat(p)
            except OSError as exc:  # listed but not looked at: a folder that may be read but not entered (r--)
                out.unreadable_files.append((p, exc))
                continue
            why = not_a_file(p, folder)
            if why:
                out.refused.append((p, why))
            else:
                out.files.append(p)
        stack.extend(reversed(subdirs))
    return out


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading in binary, refusing (:class:`NotAFile`) anything but a regular file; the open
    itself cannot block (``O_NONBLOCK``: a FIFO swapped in after the check)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        kind = _kind(os.fstat(fd).st_mode)
        if kind:
            raise NotAFile(errno.EINVAL, f"{kind}, not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def sha256_file(path: Path, limit: int | None = None, chunk: int = 1 << 20) -> str:
    """The sha256 of the first ``limit`` bytes of ``path`` (default: its size now), a regular file only."""
    h = hashlib.sha256()
    with open_regular(path) as f:
        left = os.fstat(f.fileno()).st_size if limit is None else limit
        while left > 0 and (block := f.read(min(chunk, left))):
            h.update(block)
            left -= len(block)
    return h.hexdigest()
