"""Generators of hostile text and names for the output boundary (issue 38): what a document or a file name may hold
to drive a terminal (OSC, CSI, DCS sequences, BEL, C1 controls, carriage returns, backspaces), reorder a line (bidi
overrides and isolates) or render as markup in a Qt widget (HTML that loads an image or restyles a pane), and
:func:`terminal_unsafe`, the check that none of it reaches a terminal. Shared by ``tests/reliability`` and
``benchmarks/product/reliability.py``; every draw comes from a seed, so a failure can be replayed."""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path

from tests.reliability.variants import WORDS, hostile_name, sentence

CONTROLS = (
    "\x1b]0;PWNED\x07",  # OSC: set the terminal's title
    "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",  # OSC 8: a hyperlink
    "\x1b[2J\x1b[H",  # CSI: clear the screen
    "\x1b[31mred\x1b[0m",
    "\x1bP+q544e\x1b\\",  # DCS: a terminfo request
    "\x9b31m",  # C1 CSI
    "\x9d0;C1TITLE\x9c",  # C1 OSC ... ST
    "\x07\x07",
    "\r[2] Source: handbook.pdf p. 3",
    "\x08\x08\x08",
    "\u202e", "\u202d", "\u2066", "\u2067", "\u2069", "\u200f", "\u061c",
)
MARKUP = (
    '<img src="/tmp/x.png" width=900>',
    '<h1 style="color:red">HACKED</h1>',
    '<a href="file:///etc/passwd">open me</a>',
    "<b>bold</b> <i>it</i>",
    "<table border=1><tr><td>cell</td></tr></table>",
    "<style>*{color:red}</style>",
)
# U+202A..U+202E, U+2066..U+2069, LRM/RLM/ALM
BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def hostile_phrase(rng: random.Random) -> str:
    """A few words with one to three controls or pieces of markup between them."""
    parts = [rng.choice(WORDS)]
    for _ in range(rng.randint(1, 3)):
        parts.append(rng.choice(CONTROLS + MARKUP))
        parts.append(rng.choice(WORDS))
    return " ".join(parts)


def hostile_document(rng: random.Random) -> str:
    """A small Markdown document whose headings and paragraphs hold controls, bidi marks and markup."""
    lines = []
    for _ in range(rng.randint(1, 3)):
        lines.append(f"# {hostile_phrase(rng)}")
        for _ in range(rng.randint(1, 2)):
            lines.append(f"{sentence(rng)} {hostile_phrase(rng)} {sentence(rng)}")
        lines.append("")
    return "\n".join(lines)


def hostile_files(folder: Path, seed: int, n: int) -> list[Path]:
    """``n`` Markdown and text files with hostile names (``variants.hostile_name``, which adds newlines, bytes that
    are not UTF-8 and long names) and hostile text."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        name = hostile_name(rng, ext=rng.choice((".md", ".txt")))
        if rng.random() < 0.5:
            name = f"{i}{rng.choice(CONTROLS + MARKUP).replace('/', '_')}{name}"
        path = folder / name
        if path.exists() or len(name.encode("utf-8", "surrogateescape")) > 240:
            path = folder / f"{i}-{rng.choice(WORDS)}{rng.choice(CONTROLS).replace('/', '_')}.md"
        path.write_text(hostile_document(rng), encoding="utf-8")
        out.append(path)
    return out


def terminal_unsafe(data: bytes) -> list[str]:
    """What in ``data`` (a command's stdout or stderr) could drive a terminal or reorder a line: C0 controls other
    than newline and tab (ESC, BEL, CR, BS...), DEL, C1 controls, bidi overrides and isolates; each as a short
    excerpt around it (empty when the output is clean)."""
    text = data.decode("utf-8", errors="replace")
    found = []
    for i, ch in enumerate(text):
        code = ord(ch)
        bad = (code < 0x20 and ch not in "\n\t") or code == 0x7F or 0x80 <= code <= 0x9F or ch in BIDI \
            or unicodedata.category(ch) in ("Zl", "Zp")
        if bad:
            found.append(repr(text[max(0, i - 30):i + 10]))
    return found
