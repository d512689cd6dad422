"""Text from files (names, messages, warnings) made safe to print: one output line can never become two, and a
name cannot reorder or hide the text after it.

A file name may hold a newline or a tab (a forged status line), terminal escapes, bidi controls such as U+202E
(``txt.exe`` shown as ``exe.txt``), zero-width characters, or bytes that are not UTF-8 (surrogate escapes). Each is
shown escaped, as Python writes it (``\\n``, ``\\t``, ``\\u202e``, ``\\x1b``; a byte that is not UTF-8 as ``\\xff``).

Names go through :func:`shown` where they are put in a line. Everything else the command line prints (passage
text, headings, a model's answer, error messages) goes through one door, :class:`TerminalStream`, which the
``shelfwise`` group puts in front of stdout and stderr for the whole command: there every control character and
bidi control is escaped (newlines and tabs kept), so a document cannot set the terminal's title, ring its bell or
reorder a line.
"""

from __future__ import annotations

import io
import json
import unicodedata
from typing import TextIO

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as os.fsdecode keeps it
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


_UNSAFE = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")  # controls, format (bidi, zero-width), surrogates, unassigned


def _unsafe(ch: str) -> bool:
    return unicodedata.category(ch) in _UNSAFE


def shown(text: object) -> str:
    """``text`` with every control, format (bidi, zero-width), line/paragraph separator, surrogate and unassigned
    character escaped; backslashes are doubled only where something was escaped, so ordinary Windows paths print as
    they are."""
    s = str(text)
    if not any(_unsafe(ch) for ch in s):
        return s
    return "".join(_escape(ch) if ch == "\\" or _unsafe(ch) else ch for ch in s)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code > 0xFFFF:  # JSON writes an astral character as its UTF-16 surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_text(value: object, indent: int | None = 2) -> str:
    """``value`` as JSON for a terminal: readable UTF-8 as ``ensure_ascii=False`` writes it, but with every character
    :func:`shown` escapes written as a JSON escape (``\\u202e``), so a file name's bidi control cannot reorder the
    line it is printed on; ``json.loads`` gives back the same value."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    if not any(_unsafe(ch) for ch in text):
        return text
    return "".join(_json_escape(ch) if _unsafe(ch) and ch != "\n" else ch for ch in text)


# characters a terminal does not show at all: dropped from text rather than escaped (a soft hyphen in a PDF's text,
# a zero-width joiner); controls and bidi overrides are escaped, so what a document tried to do stays visible
_INVISIBLE = frozenset("\u00ad\u200b\u200c\u200d\u2060\ufeff")
_KEPT = frozenset("\n\t")


def terminal_text(text: str) -> str:
    """``text`` made safe for a terminal, lines kept: every control character (C0 and C1: ESC, BEL, CR, so no OSC,
    CSI or DCS sequence can act), bidi override or isolate, line separator, surrogate and unassigned character
    escaped as :func:`shown` writes it, zero-width characters dropped; newlines and tabs kept. Backslashes are left
    as they are (the text arrives in pieces, so a doubling could not be undone)."""
    if not any(_unsafe(ch) for ch in text if ch not in _KEPT):
        return text
    return "".join("" if ch in _INVISIBLE else _escape(ch) if ch not in _KEPT and _unsafe(ch) else ch
                   for ch in text)


class TerminalStream(io.TextIOBase):
    """The one door from the command line to a terminal: every write goes through :func:`terminal_text`, whatever
    printed it (click, a progress line, an error message). ``inner`` is the wrapped stream, for the progress line's
    own carriage returns only."""

    def __init__(self, inner: TextIO) -> None:
        super().__init__()
        self.inner = inner

    def write(self, s: str) -> int:
        self.inner.write(terminal_text(s))
        return len(s)

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.inner.encoding or "utf-8"  # None for an in-memory stream

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self.inner.errors

    def close(self) -> None:  # the wrapped stream belongs to whoever made it
        self.flush()


def raw_stream(stream: TextIO) -> TextIO:
    """The stream under a :class:`TerminalStream` (``stream`` itself otherwise)."""
    return stream.inner if isinstance(stream, TerminalStream) else stream
