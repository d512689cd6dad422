"""What an ingest may open: regular files only, recognised from ``lstat``/``stat`` before anything opens them.

A FIFO blocks the reader forever, ``/dev/zero`` is an endless stream, a socket cannot be read as a file, a symlink
loop has no target, and a link that leaves the folder the user gave brings in files the user did not point at.
:func:`not_a_file` names each of these (the reason becomes the path's status line); :func:`walk` walks a folder
without recursion (a tree thousands of levels deep is walked as far as the system can name its paths) and reports
every entry it does not take; :func:`open_regular` opens without blocking and refuses anything that turned into a
non-regular file between the check and the open; :func:`sha256_file` reads at most the size ``stat`` gave, so no
stream can keep the main process reading.

Files are opened once, safely: the walk keeps each file's identity (device, inode) as it looked at it
(``Walked.ids``); every later open compares the opened file's ``fstat`` with it and refuses another file
(:data:`REPLACED`): a file swapped for a symlink to a secret outside the folder, or for a hard link to one, between
the listing and the reading is not read. The parse worker parses the file it opened and checked (:func:`pinned`:
on Linux through ``/proc/self/fd``, so a swap during parsing changes nothing; elsewhere the identity is checked again
after parsing).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

#: (st_dev, st_ino) of a file as the walk looked at it
FileId = tuple[int, int]
REPLACED = "the file was replaced between listing and reading (by a link or another file)"

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
    return _look(path, inside)[0]


def _look(path: Path, inside: Path | None) -> tuple[str, FileId | None]:
    """:func:`not_a_file`'s reason, and the identity of the regular file it may read (None when refused)."""
    try:
        lst = os.lstat(path)
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}", None
    link = stat.S_ISLNK(lst.st_mode)
    try:
        st = os.stat(path)
    except OSError as exc:
        if link and exc.errno == errno.ELOOP:
            return "a symbolic link loop (the link leads back to itself): not read", None
        if link and exc.errno == errno.ENOENT:
            return "a broken symbolic link (its target does not exist): not read", None
        return f"cannot read it: {exc.strerror or exc}", None
    kind = _kind(st.st_mode)
    if kind:
        what = f"a symbolic link to {kind}" if link else kind
        return f"{what}, not a regular file: not read", None
    if link and inside is not None:
        target = os.path.realpath(path)
        if not _inside(target, os.path.realpath(inside)):
            return f"a symbolic link that leaves the folder (to {target}): not followed", None
    return "", (st.st_dev, st.st_ino)


@dataclass
class Walked:
    files: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)  # entries that are not read, and why
    unreadable: list[tuple[Path, OSError]] = field(default_factory=list)  # folders that cannot be listed
    unreadable_files: list[tuple[Path, OSError]] = field(default_factory=list)  # entries that cannot be looked at
    ids: dict[Path, FileId] = field(default_factory=dict)  # each file's identity when the walk looked at it


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
            why, ident = _look(p, folder)
            if why or ident is None:
                out.refused.append((p, why))
            else:
                out.files.append(p)
                out.ids[p] = ident
        stack.extend(reversed(subdirs))
    return out


def open_regular(path: Path, expect: FileId | None = None) -> BinaryIO:
    """``path`` opened for reading in binary, refusing (:class:`NotAFile`) anything but a regular file, and, given
    ``expect``, any file but that one (:data:`REPLACED`: the identity ``fstat`` gives for what was opened is compared,
    so a symlink or another file swapped in after the walk is not read); the open itself cannot block
    (``O_NONBLOCK``: a FIFO swapped in after the check)."""
    if sys.platform == "win32":
        flags = os.O_RDONLY | os.O_BINARY
    else:
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        kind = _kind(st.st_mode)
        if kind:
            raise NotAFile(errno.EINVAL, f"{kind}, not a regular file")
        if expect is not None and (st.st_dev, st.st_ino) != tuple(expect):
            raise NotAFile(errno.ESTALE, REPLACED)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def identity(path: Path) -> FileId:
    """(st_dev, st_ino) of the file ``path`` names now (links followed)."""
    st = os.stat(path)
    return st.st_dev, st.st_ino


@contextlib.contextmanager
def pinned(path: Path, expect: FileId | None) -> Iterator[Path]:
    """A path that reads the file ``path`` named when opened here, refused (:class:`NotAFile`) unless it is the
    regular file ``expect`` names. On Linux it is a link, in a private temporary folder and under the same name, to
    ``/proc/self/fd/N`` of the open file: whatever a parser opens through it (by name, several times) is that file,
    even if ``path`` is swapped meanwhile. Elsewhere it is ``path`` itself, its identity checked again after use."""
    with open_regular(path, expect) as f:
        proc = f"/proc/self/fd/{f.fileno()}"
        if not os.path.exists(proc):
            yield path
            if expect is not None and identity(path) != tuple(expect):
                raise NotAFile(errno.ESTALE, REPLACED)
            return
        folder = tempfile.mkdtemp(prefix="shelfwise-open-")
        try:
            link = Path(folder) / path.name
            os.symlink(proc, link)
            yield link
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def sha256_file(path: Path, limit: int | None = None, chunk: int = 1 << 20, expect: FileId | None = None) -> str:
    """The sha256 of the first ``limit`` bytes of ``path`` (default: its size now), a regular file only (and that
    file, given ``expect``)."""
    h = hashlib.sha256()
    with open_regular(path, expect) as f:
        left = os.fstat(f.fileno()).st_size if limit is None else limit
        while left > 0 and (block := f.read(min(chunk, left))):
            h.update(block)
            left -= len(block)
    return h.hexdigest()
