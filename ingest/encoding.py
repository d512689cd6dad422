"""Decide whether bytes are text, and in which encoding: BOMs, UTF-16 without a BOM, UTF-8, then Windows-1252.

A text file is accepted only if its decoded characters are nearly all printable (``Limits.min_printable_ratio``),
so random bytes, which decode as Windows-1252 without an error, are rejected instead of filling search with
garbage. UTF-16 without a BOM is recognised by its NUL bytes: ASCII-range characters put a NUL in every other
byte (the odd bytes for little-endian, the even bytes for big-endian).
"""

from __future__ import annotations

from shelfwise.ingest.model import DEFAULT_LIMITS, Limits, UnsupportedFormat

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
    """``"utf-16-le"`` or ``"utf-16-be"`` when the NUL bytes sit (almost) only at odd or only at even offsets."""
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


def decode_text(data: bytes, limits: Limits = DEFAULT_LIMITS) -> tuple[str, list[str]]:
    """Decoded text and warnings; raises :class:`UnsupportedFormat` for data that is not text."""
    warnings: list[str] = []
    for bom, enc in _BOMS:
        if data.startswith(bom):
            text = data.decode(enc, errors="replace")
            _check(text, enc, limits, text.count("\ufffd"))
            return text.lstrip("\ufeff"), warnings
    guess = utf16_without_bom(data)
    if guess is not None:
        text = data[: len(data) // 2 * 2].decode(guess, errors="replace")
        _check(text, guess, limits, text.count("\ufffd"))
        warnings.append(f"no byte-order mark; read as {_NAMES[guess]}")
        return text, warnings
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        _check(text, "utf-8", limits)
        return text, warnings
    text = data.decode("cp1252", errors="replace")
    _check(text, "cp1252", limits, text.count("\ufffd"))
    sample = text[:200_000]
    nonascii = sum(1 for ch in sample if ord(ch) > 127) / max(1, len(sample))
    if nonascii > limits.max_nonascii_ratio_cp1252:
        raise UnsupportedFormat(
            f"binary data, not text: not UTF-8, and read as Windows-1252 {nonascii:.0%} of it is non-ASCII "
            f"(text has at most {limits.max_nonascii_ratio_cp1252:.0%})"
        )
    warnings.append("not valid UTF-8; read as Windows-1252")
    return text, warnings
