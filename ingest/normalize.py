"""Text as a reader reads it: compatibility characters folded, symbol-font and private-use glyphs dropped.

PDF writers keep typographic ligatures (``ﬁ`` for "fi"), and Japanese text mixes full-width and half-width forms;
stored as they are, ``qualification`` does not find "quali\ufb01cation". :func:`fold_compat` applies the Unicode
compatibility mapping (NFKC) to the characters that are only a different glyph of ordinary text (ligatures, wide
and narrow forms, mathematical alphanumerics, odd spaces) and leaves the ones that carry meaning (superscripts,
fractions, circled numbers, the ellipsis). :func:`normalize_document` applies it to every title and passage of a
parsed document, whatever its format (``registry.parse`` calls it).
"""

from __future__ import annotations

import re
import unicodedata

from shelfwise.ingest.model import ParsedDocument


def _table() -> dict[int, str]:
    table: dict[int, str] = {}
    codes = [*range(0xFB00, 0xFB07), *range(0xFB13, 0xFB18), *range(0xFF01, 0xFFEF), 0x3000, 0x00A0,
             *range(0x2000, 0x200B), 0x202F, 0x205F, *range(0x1D400, 0x1D800)]
    codes += [ord(c) for c in "ĲĳĿŀŉſǄǅǆǇǈǉǊǋǌǱǲǳ"]
    for code in codes:
        ch = chr(code)
        tag = unicodedata.decomposition(ch).split(" ", 1)[0]
        if code < 0x1D400 or tag == "<font>":
            folded = unicodedata.normalize("NFKC", ch)
            if folded != ch:
                table[code] = folded
    return table


_FOLD = _table()
_NEEDS = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(_FOLD) if c < 0x10000) + "\U0001d400-\U0001d7ff]")
# private use (symbol fonts mapped nowhere) and C0/C1 controls other than tab and newline
_GLYPHS = re.compile("[\ue000-\uf8ff\U000f0000-\U000ffffd\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def fold_compat(text: str) -> str:
    """``text`` with ligatures, full-width/half-width forms, mathematical letters and odd spaces made ordinary."""
    if text.isascii() or not _NEEDS.search(text):
        return text
    return text.translate(_FOLD)


def strip_glyphs(text: str) -> tuple[str, int]:
    """``text`` without private-use and control characters (a symbol font's glyphs, shown as mojibake), and how
    many were dropped. A glyph that opens a line (a bullet) becomes ``-``."""
    if text.isascii() and text.isprintable():
        return text, 0
    dropped = 0
    lines = []
    for line in text.split("\n"):
        stripped = line.lstrip()
        bullet = bool(stripped) and bool(_GLYPHS.match(stripped[0])) and len(stripped) > 1
        line, n = _GLYPHS.subn("", line)
        dropped += n
        if bullet and line.strip():
            line = "- " + line.strip()
        lines.append(line)
    return "\n".join(lines), dropped


# The characters a font with a wrong character map turns text into (Latin-1 letters and symbols, the Mac Roman
# extras, punctuation and math signs): "]üìÜüéê •ìê °ê£ë†£ûÜüéê" for "Enhance the performance" in a symbol-encoded
# sans-serif. Real text in a Latin script holds a few of them (accents), never mostly them; other scripts none.
_GARBLE = re.compile("[\u0080-\u00ff\u0152\u0153\u0178\u0192\u02c6\u02dc\u2010-\u22ff]")
GARBLED_SHARE = 0.5  # share of such characters in a font's text on a page; docs/eval/tree-quality.md
GARBLED_LINE_SHARE = 0.6  # the same for one line when fonts are not read (a stricter bar: less text to judge)


def garble_counts(text: str) -> tuple[int, int, int]:
    """(non-space characters, characters of :data:`_GARBLE`, of them letters) in ``text``."""
    chars = [c for c in text if not c.isspace()]
    if text.isascii():
        return len(chars), 0, 0
    odd = [c for c in chars if _GARBLE.match(c)]
    return len(chars), len(odd), sum(1 for c in odd if c.isalpha())


def is_garbled(chars: int, odd: int, letters: int, *, min_chars: int = 20, share: float = GARBLED_SHARE) -> bool:
    """Mojibake: enough text, most of it odd characters, a good part of them letters (a font of bullets or
    arrows alone is not mojibake: it is dropped or kept by :func:`strip_glyphs`'s rules)."""
    return chars >= min_chars and odd >= share * chars and letters >= 0.2 * chars


def is_garbled_line(text: str) -> bool:
    """One line judged alone (no font to pool it with): the stricter :data:`GARBLED_LINE_SHARE`."""
    return is_garbled(*garble_counts(text), min_chars=12, share=GARBLED_LINE_SHARE)


def normalize_document(doc: ParsedDocument) -> None:
    """Fold every title and text of ``doc`` in place (see :func:`fold_compat`)."""
    doc.title = fold_compat(doc.title)
    for node in doc.nodes():
        node.title = fold_compat(node.title)
        node.text = fold_compat(node.text)
