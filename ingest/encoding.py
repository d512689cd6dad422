"""Decide whether bytes are text, and in which encoding: BOMs, UTF-16 without a BOM, UTF-8, then Windows-1252.

A text file is accepted only if its decoded characters are nearly all printable (``Limits.min_printable_ratio``),
so random bytes, which decode as Windows-1252 without an error, are rejected instead of filling search with
garbage. UTF-16 without a BOM is recognised by its NUL bytes: ASCII-range characters put a NUL in every other
byte (the odd bytes for little-endian, the even bytes for big-endian).

:func:`text_lines` reads a file this way without holding it: the encoding is chosen from its first megabyte (and a
streamed UTF-8 validity pass over the rest), then lines are decoded a megabyte at a time, and a line longer than
``max_chars`` is handed on in pieces cut at spaces, so a parser that stops early (the passage cap) stops reading.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from shelfwise.ingest.model import DEFAULT_LIMITS, Limits, UnsupportedFormat

CHUNK = 1 << 20  # bytes (and characters) read at a time; also the sample the encoding is judged on
MAX_LINE_CHARS = 1 << 16  # a longer line is cut (at a space) into pieces of at most this many characters

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
_NAMES = {"utf-8-sig": "UTF-8", "utf-8": "UTF-8", "utf-16-le": "UTF-16LE", "utf-16-be": "UTF-16BE",
          "utf-32-le": "UTF-32LE", "utf-32-be": "UTF-32BE", "cp1252": "Windows-1252"}


def utf16_without_bom(data: bytes) -> str | None:
    """``"utf-16-le"`` or ``"utf-16-be"`` when the NUL bytes sit (almost) only at odd or only at even offsets.

    Text in Latin scripts has a NUL in every other byte. CJK text has few (only its line breaks, spaces and ASCII
    are ``xx 00``, or ideographs ``U+xx00``): there, some NUL and nearly all characters ones real text uses
    (:func:`utf16_by_content`) decide. Windows-1252 text and random bytes "without NULs" never get here."""
    sample = data[:65536]
    if len(sample) < 4 or b"\x00" not in sample:
        return None
    even = sample[0::2].count(0)
    odd = sample[1::2].count(0)
    half = len(sample) // 2
    if odd >= 0.2 * half and even <= 0.02 * half:
        return "utf-16-le"
    if even >= 0.2 * half and odd <= 0.02 * half:
        return "utf-16-be"
    return utf16_by_content(sample)


# Characters that make up real text: ASCII, Latin, Greek, Cyrillic, CJK punctuation, kana, ideographs, hangul and
# full-width forms. UTF-16 CJK text has almost no NUL bytes, so it is recognised by what it decodes to instead.
_TEXT_CHARS = re.compile(r"[\t\n\r\x20-\x7e\u00a0-\u024f\u0370-\u04ff\u2000-\u206f\u3000-\u30ff\u3400-\u4dbf"
                         r"\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


def utf16_by_content(data: bytes, min_share: float = 0.95) -> str | None:
    """``"utf-16-le"`` or ``"utf-16-be"`` when the first 64 kB decode strictly as that with nearly every character
    one real text uses (random bytes: about half are, and many do not decode at all), or None."""
    sample = data[:65536]
    sample = sample[: len(sample) // 2 * 2]
    if len(sample) < 16:
        return None
    for enc in ("utf-16-le", "utf-16-be"):
        try:
            text = sample.decode(enc)
        except UnicodeDecodeError:
            try:  # a surrogate pair cut at the end of the sample
                text = sample[:-2].decode(enc)
            except UnicodeDecodeError:
                continue
        if text and len(_TEXT_CHARS.findall(text)) >= min_share * len(text):
            return enc
    return None


def printable_ratio(text: str) -> float:
    """Share of characters that are printable or ordinary whitespace (tab, newlines, form feed)."""
    if not text:
        return 1.0
    sample = text[:200_000]
    bad = sum(1 for ch in sample if not (ch.isprintable() or ch in "\t\n\r\f\v"))
    return 1.0 - bad / len(sample)


def _check(text: str, encoding: str, limits: Limits, errors: int = 0) -> None:
    ratio = printable_ratio(text) - errors / max(1, len(text))
    if ratio < limits.min_printable_ratio:
        raise UnsupportedFormat(
            f"binary data, not text: read as {_NAMES.get(encoding, encoding)}, only {ratio:.0%} of it is "
            f"printable (text needs {limits.min_printable_ratio:.0%})"
        )


def detect_encoding(head: bytes, is_utf8: bool, limits: Limits = DEFAULT_LIMITS) -> tuple[str, list[str]]:
    """The codec for data that starts with ``head`` (``is_utf8``: the whole data is valid UTF-8), and warnings;
    raises :class:`UnsupportedFormat` for data that is not text."""
    for bom, enc in _BOMS:
        if head.startswith(bom):
            text = head.decode(enc, errors="replace")
            _check(text.rstrip("\ufffd"), enc, limits, text.rstrip("\ufffd").count("\ufffd"))
            return enc, []
    guess = utf16_without_bom(head)
    if guess is not None:
        text = head[: len(head) // 2 * 2].decode(guess, errors="replace")
        _check(text, guess, limits, text.count("\ufffd"))
        return guess, [f"no byte-order mark; read as {_NAMES[guess]}"]
    if is_utf8:
        _check(head.decode("utf-8", errors="ignore"), "utf-8", limits)  # "ignore": a character cut at the end
        return "utf-8", []
    text = head.decode("cp1252", errors="replace")
    _check(text, "cp1252", limits, text.count("\ufffd"))
    sample = text[:200_000]
    nonascii = sum(1 for ch in sample if ord(ch) > 127) / max(1, len(sample))
    if nonascii > limits.max_nonascii_ratio_cp1252:
        raise UnsupportedFormat(
            f"binary data, not text: not UTF-8, and read as Windows-1252 {nonascii:.0%} of it is non-ASCII "
            f"(text has at most {limits.max_nonascii_ratio_cp1252:.0%})"
        )
    return "cp1252", ["not valid UTF-8; read as Windows-1252"]


def _valid_utf8(head: bytes, rest: BinaryIO | None) -> bool:
    dec = codecs.getincrementaldecoder("utf-8")()
    try:
        dec.decode(head)
        while rest is not None and (block := rest.read(CHUNK)):
            dec.decode(block)
        dec.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def decode_text(data: bytes, limits: Limits = DEFAULT_LIMITS) -> tuple[str, list[str]]:
    """Decoded text and warnings; raises :class:`UnsupportedFormat` for data that is not text."""
    enc, warnings = detect_encoding(data[:CHUNK], _valid_utf8(data, None), limits)
    if enc.startswith("utf-16"):
        data = data[: len(data) // 2 * 2]
    return data.decode(enc, errors="replace").lstrip("\ufeff"), warnings


def text_lines(path: Path, limits: Limits = DEFAULT_LIMITS,
               max_chars: int = MAX_LINE_CHARS) -> tuple[Iterator[tuple[int, str]], list[str]]:
    """The lines of a text file as (1-based line number, text without the line end; ``\\r\\n`` and ``\\r`` end
    lines too), decoded lazily, and the encoding's warnings. The encoding is checked before this returns (binary
    data raises :class:`UnsupportedFormat`); a line longer than ``max_chars`` comes in pieces cut at spaces, each
    with the line's number."""
    with path.open("rb") as f:
        head = f.read(CHUNK)
        enc = detect_encoding(head, _valid_utf8(head, f), limits)
    return _lines(path, enc[0], max_chars), enc[1]


def _lines(path: Path, encoding: str, max_chars: int) -> Iterator[tuple[int, str]]:
    with open(path, encoding=encoding, errors="replace", newline=None) as f:
        rest = ""
        n = 1
        first = True
        while chunk := f.read(CHUNK):
            if first:
                chunk, first = chunk.lstrip("\ufeff"), False
            lines = (rest + chunk).split("\n")
            for line in lines[:-1]:
                for piece in _split(line, max_chars):
                    yield n, piece
                n += 1
            *pieces, rest = _split(lines[-1], max_chars)  # the unfinished last line: keep its tail
            for piece in pieces:
                yield n, piece
        if rest:
            yield n, rest


def _split(line: str, max_chars: int) -> list[str]:
    """``line`` in pieces of at most ``max_chars``, cut after a space where there is one in the second half."""
    out: list[str] = []
    while len(line) > max_chars:
        cut = line.rfind(" ", max_chars // 2, max_chars)
        cut = cut + 1 if cut > 0 else max_chars
        out.append(line[:cut])
        line = line[cut:]
    out.append(line)
    return out
