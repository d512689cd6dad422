"""Text from files (names, messages, warnings) made safe to print: one output line can never become two, and a
name cannot reorder or hide the text after it.

A file name may hold a newline or a tab (a forged status line), terminal escapes, bidi controls such as U+202E
(``txt.exe`` shown as ``exe.txt``), zero-width characters, or bytes that are not UTF-8 (surrogate escapes). Each is
shown escaped, as Python writes it (``\\n``, ``\\t``, ``\\u202e``, ``\\x1b``; a byte that is not UTF-8 as ``\\xff``).
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

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


def json_text(value: Any, indent: int | None = 2) -> str:
    """``value`` as JSON for a terminal: readable UTF-8 as ``ensure_ascii=False`` writes it, but with every character
    :func:`shown` escapes written as a JSON escape (``\\u202e``), so a file name's bidi control cannot reorder the
    line it is printed on; ``json.loads`` gives back the same value."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    if not any(_unsafe(ch) for ch in text):
        return text
    return "".join(_json_escape(ch) if _unsafe(ch) and ch != "\n" else ch for ch in text)
