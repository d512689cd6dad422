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

# A file that is UTF-8 in places and Windows-1252 in others (lines pasted from two sources) is decoded as UTF-8
# with every byte that is not valid UTF-8 read as Windows-1252 (an error handler, so it streams).
MIXED = "utf-8+cp1252"
MIXED_ERRORS = "shelfwise-cp1252"
_UTF8_SEQ = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def _cp1252_fallback(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    bad = exc.object[exc.start : exc.end]
    return bytes(bad).decode("cp1252", errors="replace"), exc.end


codecs.register_error(MIXED_ERRORS, _cp1252_fallback)


def _codec(encoding: str) -> tuple[str, str]:
    """(codec, error handler) to decode text detected as ``encoding``."""
    return ("utf-8", MIXED_ERRORS) if encoding == MIXED else (encoding, "replace")


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
    for enc, nuls, others in (("utf-16-le", odd, even), ("utf-16-be", even, odd)):
        if nuls >= 0.2 * half and others <= 0.02 * half:
            if one_script(sample[: len(sample) // 2 * 2].decode(enc, errors="replace")):
                return enc
            return None
    if nul_separated(sample):  # UTF-8 text with NUL bytes in it, not UTF-16
        return None
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
        if text and len(_TEXT_CHARS.findall(text)) >= min_share * len(text) and plausible_utf16(sample, text):
            return enc
    return None


def _ascii_pairs(sample: bytes) -> float:
    """Share of 2-byte units whose two bytes are both printable ASCII: about 1 for ASCII text read as UTF-16
    (``"an"`` is U+616E, an ideograph), under 0.45 for real UTF-16 CJK text (ideographs' low bytes are spread
    over 0-255; kana's high byte is 0x30)."""
    units = len(sample) // 2
    if not units:
        return 0.0
    both = sum(1 for i in range(0, units * 2, 2) if 0x20 <= sample[i] <= 0x7E and 0x20 <= sample[i + 1] <= 0x7E)
    return both / units


def plausible_utf16(sample: bytes, text: str) -> bool:
    """A UTF-16 reading without a BOM is kept only if it is not ASCII bytes paired up (text with NUL bytes between
    its words read as UTF-16BE was stored as "CJK" garbage) and its letters are mostly of one script."""
    return _ascii_pairs(sample) < 0.8 and one_script(text)


def _script(ch: str) -> str:
    code = ord(ch)
    if code < 0x250 or 0x1E00 <= code < 0x1F00:
        return "latin"
    if 0x370 <= code < 0x400:
        return "greek"
    if 0x400 <= code < 0x530:
        return "cyrillic"
    if 0x590 <= code < 0x600:
        return "hebrew"
    if 0x600 <= code < 0x700:
        return "arabic"
    if 0x900 <= code < 0xE00:
        return "indic"
    if 0xE00 <= code < 0xE80:
        return "thai"
    if 0x1100 <= code < 0x1200 or 0xAC00 <= code < 0xD7B0:
        return "hangul"
    if 0x3040 <= code < 0x3100 or 0x3400 <= code < 0xA000 or 0xF900 <= code < 0xFB00 or 0xFF00 <= code < 0xFFF0:
        return "cjk"  # kana, ideographs, full-width forms: Japanese and Chinese text mix them
    return "other"


def one_script(text: str, share: float = 0.8) -> bool:
    """True when the letters of ``text`` are mostly (``share``) of one script (Korean text may mix hangul and
    ideographs); text without letters passes."""
    counts: dict[str, int] = {}
    for ch in text[:20_000]:
        if ch.isalpha():
            k = _script(ch)
            counts[k] = counts.get(k, 0) + 1
    total = sum(counts.values())
    if not total:
        return True
    top = max(counts.values())
    if counts.get("hangul", 0) and counts.get("cjk", 0):
        top = max(top, counts["hangul"] + counts["cjk"])
    return top >= share * total


def nul_separated(head: bytes) -> bool:
    """Text with NUL bytes in it (between words, padding) that is not UTF-16: without its NULs, valid UTF-8 that is
    nearly all printable. Such text is read with the NULs as spaces."""
    if b"\x00" not in head:
        return False
    rest = head.replace(b"\x00", b"")
    if len(rest) < 0.6 * len(head) or not rest:
        return False
    text = rest.decode("utf-8", errors="ignore")
    if len(text.encode("utf-8")) < 0.97 * len(rest):
        return False
    return printable_ratio(text) >= 0.97


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
    warnings: list[str] = []
    if b"\x00" in head and nul_separated(head):
        head = head.replace(b"\x00", b" ")  # read as spaces (see _lines)
        warnings.append("NUL bytes in the text (read as spaces)")
    if is_utf8:
        _check(head.decode("utf-8", errors="ignore"), "utf-8", limits)  # "ignore": a character cut at the end
        return "utf-8", warnings
    utf8_chars = len(_UTF8_SEQ.findall(head))
    text = head.decode("utf-8", errors=MIXED_ERRORS) if utf8_chars else head.decode("cp1252", errors="replace")
    try:
        _check(text, "cp1252", limits, text.count("\ufffd"))
    except UnsupportedFormat as exc:
        raise UnsupportedFormat(f"{exc}; if it is text in a legacy encoding (Shift-JIS, GBK, KOI8-R...), save it "
                                "as UTF-8") from exc
    sample = text[:200_000]
    nonascii = sum(1 for ch in sample if ord(ch) > 127) / max(1, len(sample))
    if nonascii > limits.max_nonascii_ratio_cp1252 or not one_script(sample):
        raise UnsupportedFormat(
            f"not text in an encoding Shelfwise can tell: not UTF-8, and read as Windows-1252 {nonascii:.0%} of it "
            f"is non-ASCII (text has at most {limits.max_nonascii_ratio_cp1252:.0%}) or its letters mix scripts; "
            "if it is text in a legacy encoding (Shift-JIS, GBK, KOI8-R...), save it as UTF-8"
        )
    if utf8_chars:  # some lines UTF-8, some legacy: each character read in the encoding it is valid in
        return MIXED, [*warnings, "mixed UTF-8 and Windows-1252 (each byte sequence read in the encoding it is "
                                  "valid in)"]
    return "cp1252", [*warnings, "not valid UTF-8; read as Windows-1252"]


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
    codec, errors = _codec(enc)
    return data.decode(codec, errors=errors).lstrip("\ufeff").replace("\x00", " "), warnings


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
    codec, errors = _codec(encoding)
    with open(path, encoding=codec, errors=errors, newline=None) as f:
        rest = ""
        n = 1
        first = True
        while chunk := f.read(CHUNK):
            if first:
                chunk, first = chunk.lstrip("\ufeff"), False
            chunk = chunk.replace("\x00", " ")  # NUL bytes between words (a UTF-16 reading has none left)
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
