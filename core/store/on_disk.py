"""Whether the file a document was read from is still as it was read: answers and ``status`` say when it is not
(a deleted file, a file truncated to 0 bytes whose previous version the library kept)."""

from __future__ import annotations

import os


def on_disk(path: str, size: int, mtime: float) -> str:
    """How the file a document was read from stands now: "" (as it was read), "missing" (deleted or moved),
    "unreadable" (there, maybe, but it or a folder above it may not be read: permissions), "empty" (truncated to
    0 bytes) or "changed" (another size or time)."""
    try:
        st = os.stat(path)
    except PermissionError:
        return "unreadable"
    except OSError:
        return "missing"
    if st.st_size == size and st.st_mtime == mtime:
        return ""
    return "empty" if st.st_size == 0 else "changed"


def source_note(number: int, path: str, state: str) -> str:
    """What an answer says about a source whose file is not as it was read (:func:`on_disk`)."""
    name = os.path.basename(path) or path
    if state == "missing":
        return (f"source [{number}] {name} is no longer on disk (deleted or moved since it was read): the answer "
                "quotes the library's copy; ingest its folder again to update the library")
    if state == "unreadable":
        return (f"source [{number}] {name} cannot be read now (permissions): the answer quotes the version the "
                "library read; fix its permissions to check it")
    what = "is now empty" if state == "empty" else "has changed since it was read"
    return (f"source [{number}] {name} {what}: the answer quotes the version the library read; ingest it again to "
            "update the library")
