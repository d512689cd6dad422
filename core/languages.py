"""Writing systems: what Shelfwise must not assume about words, sentences and case in other languages.

A shared leaf module (no Shelfwise imports), used by the store's full-text index, the extractive answer and the
grounding check:

* **Unsegmented scripts** (Chinese, Japanese, Korean, Thai, Lao, Khmer, Myanmar) write words without spaces, so a
  whole clause is one "word" to a whitespace or Unicode-word tokenizer. :func:`fts_index_text` puts a separator
  between their characters (a character with its combining marks is one unit) so the index holds one token per
  character, and :func:`query_terms` turns a run of such characters in a query into its overlapping character
  bigrams, each a two-token phrase (the bigram convention of Lucene's CJK analyzer). Other scripts are left as
  they are; the measurement that chose this over a trigram table is in ``docs/eval/xquad.md``.
* **Folding** (:func:`fold`): Arabic and Hebrew vowel marks and the Arabic tatweel are dropped, full-width ASCII
  forms (common in Japanese text) become ASCII, so a query written without them still matches.
* **Sentence ends** (:data:`SENTENCE_END_CHARS`, :func:`split_sentences`): ``. ! ? …`` and the ends of other
  scripts (``。！？`` CJK, ``।॥`` Devanagari and related scripts, ``؟ ۔`` Arabic script, ``።`` Ethiopic, ``။``
  Myanmar, ``។`` Khmer, ``։`` Armenian).
* **Words for overlap** (:func:`word_units`): spaced-script words in lower case, plus character bigrams of the
  unsegmented runs, so an overlap of "words" between a question and a sentence works in every script.
* **Patterns compiled on first use** (:func:`lazy`): Python compiles a module's regular expressions when the module
  is imported, in Python (a class of every unsegmented script above costs milliseconds), and every ``shelfwise
  ask`` is a new process. A pattern that only some questions reach (a number written in words, a generated
  answer's checks, a follow-up's cues) is written ``lazy(r"...", flags)``: the same pattern, compiled by
  :func:`re.compile` on its first use; from then on its methods are the compiled pattern's own (docs/scale.md,
  "Session 23").
"""

from __future__ import annotations

import itertools
import re
import sys
import unicodedata
from collections.abc import Callable, Iterator
from functools import cached_property


class LazyPattern:
    """``re.compile(pattern, flags)``, done when a method is first called; ``pattern`` is the source, readable
    without compiling (to build other patterns from it)."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        compiled = re.compile(self.pattern, self._flags)
        # the compiled pattern's bound methods shadow this class's: a later call costs what a compiled one's does
        vars(self).update(search=compiled.search, match=compiled.match, fullmatch=compiled.fullmatch,
                          finditer=compiled.finditer, findall=compiled.findall, sub=compiled.sub, subn=compiled.subn,
                          split=compiled.split)
        return compiled

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled.fullmatch(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[str]:
        """As :meth:`re.Pattern.findall`: the matched strings (tuples of the groups where the pattern has several)."""
        return self.compiled.findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled.sub(repl, string, count)

    def subn(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> tuple[str, int]:
        return self.compiled.subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | None]:
        return self.compiled.split(string, maxsplit)

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r}, {self._flags!r})"


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    """The pattern :func:`re.compile` would make, compiled on first use (see the module doc)."""
    return LazyPattern(pattern, flags)


# Unsegmented scripts: CJK radicals and punctuation-free ideograph blocks, kana, bopomofo, hangul, Thai, Lao,
# Myanmar, Khmer, the CJK extensions beyond the BMP.
_UNSEG_RANGES = (
    "\u0e00-\u0e7f"  # Thai
    "\u0e80-\u0eff"  # Lao
    "\u1000-\u109f"  # Myanmar
    "\u1100-\u11ff"  # Hangul Jamo
    "\u1780-\u17dd"  # Khmer letters and signs (17D4-17DA are punctuation: excluded below)
    "\u2e80-\u2fdf"  # CJK radicals
    "\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c"  # ideographic iteration marks and numbers
    "\u3040-\u309f"  # Hiragana (incl. voicing marks)
    "\u30a0-\u30fa\u30fc-\u30ff"  # Katakana (not the middle dot U+30FB, a separator)
    "\u3100-\u312f\u3130-\u318f\u31a0-\u31bf\u31f0-\u31ff"  # Bopomofo, Hangul compatibility Jamo, Katakana ext.
    "\u3400-\u4dbf\u4e00-\u9fff"  # CJK ideographs (ext. A, unified)
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
    "\U00020000-\U0003134f"  # CJK extensions B..G
)
_UNSEG_PUNCT = "\u0e2f\u0e46\u0e4f\u0e5a\u0e5b\u104a\u104b\u17d4-\u17da"  # Thai/Myanmar/Khmer punctuation
UNSEGMENTED = f"(?:(?![{_UNSEG_PUNCT}])[{_UNSEG_RANGES}])"
_MARK_CHARS = "".join(
    chr(c) for c in range(0x300, 0x2000) if unicodedata.category(chr(c)).startswith("M")
) + "\u3099\u309a\u20d0-\u20ff"
_UNIT = lazy(f"{UNSEGMENTED}[{_MARK_CHARS}]*")  # one character of an unsegmented script with its marks
_RUN = re.compile(f"(?:{UNSEGMENTED}[{_MARK_CHARS}]*)+")
_HAS_UNSEG = lazy(UNSEGMENTED)

# Arabic harakat, Quranic marks and tatweel; Hebrew points: dropped by fold().
_FOLD_MARKS = lazy("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e8\u06ea-\u06ed\u0640\u0591-\u05c7]")
_FULLWIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}

# What separates the units of an unsegmented run in the index: a zero-width space, declared a separator to the
# FTS5 tokenizer (core/store/fts.py) and invisible in any snippet that keeps it.
FTS_SEPARATOR = "\u200b"

SENTENCE_END_CHARS = (".!?\u2026\u3002\uff01\uff1f\uff0e\uff61\u0964\u0965\u061f\u06d4\u1362\u1367\u1368\u104b"
                      "\u17d4\u0589\u203c\u2047\u2048\u2049")
# Ends after which text goes on without a space (CJK full stops and marks).
UNSPACED_ENDS = "\u3002\uff01\uff1f\uff61"
CLOSERS = "\"'\u201d\u2019)\\]\u300d\u300f\uff09\u3011\u00bb"


def has_unsegmented(text: str) -> bool:
    return bool(_HAS_UNSEG.search(text))


def fold(text: str) -> str:
    """``text`` with Arabic/Hebrew vowel marks and tatweel dropped and full-width ASCII made ASCII."""
    if text.isascii():
        return text
    return _FOLD_MARKS.sub("", text).translate(_FULLWIDTH)


def units(run: str) -> list[str]:
    """The characters of a run of an unsegmented script, each with its combining marks."""
    return _UNIT.findall(run)


def fts_index_text(text: str | None) -> str | None:
    """What the full-text index reads for ``text``: :func:`fold` ed, every unit of an unsegmented run set apart by
    :data:`FTS_SEPARATOR` (ASCII text is returned as it is, at once)."""
    if text is None or text.isascii():
        return text
    text = fold(text)
    if not _HAS_UNSEG.search(text):
        return text
    sep = FTS_SEPARATOR
    return _RUN.sub(lambda m: sep + sep.join(_UNIT.findall(m.group(0))) + sep, text)


def _is_token_char(ch: str) -> bool:
    """A character the FTS5 tokenizer keeps in a token: categories L*, N*, Co and M* (core/store/fts.py)."""
    cat = unicodedata.category(ch)
    return cat[0] in "LNM" or cat == "Co"


def tokens(text: str) -> Iterator[str]:
    """The tokens of ``text`` as the full-text tokenizer splits them (before segmenting): maximal runs of letters,
    digits, marks and private-use characters."""
    start = -1
    for i, ch in enumerate(text):
        if _is_token_char(ch):
            if start < 0:
                start = i
        elif start >= 0:
            yield text[start:i]
            start = -1
    if start >= 0:
        yield text[start:]


def query_terms(text: str) -> list[str]:
    """The FTS5 query terms of ``text``, each to be quoted: a word of a spaced script as it is; a run of an
    unsegmented script as its overlapping bigrams (``"北 京"``, ``"京 大"``, ...), a lone character as itself. In
    order of first occurrence, without repeats (case-insensitively: FTS5 folds case)."""
    seen: dict[str, str] = {}
    for term in _terms(text):
        seen.setdefault(term.casefold(), term)
    return list(seen.values())


def phrase_tokens(text: str) -> list[str]:
    """The tokens of ``text`` as the index holds them, for an FTS5 phrase (``"..."``) that must match in order: a
    run of an unsegmented script one token per character."""
    out: list[str] = []
    for token in tokens(fold(text)):
        out.extend((fts_index_text(token) or "").replace(FTS_SEPARATOR, " ").split())
    return out


def word_units(text: str) -> list[str]:
    """The "words" of ``text`` for overlap between a question and a sentence: casefolded words of spaced scripts,
    and the character bigrams (a lone character: itself) of unsegmented runs, in order."""
    return [t.replace(" ", "").casefold() for t in _terms(text)]


def _terms(text: str) -> Iterator[str]:
    for token in tokens(fold(text)):
        pos = 0
        for m in _RUN.finditer(token):
            if m.start() > pos:
                yield token[pos:m.start()]
            chars = _UNIT.findall(m.group(0))
            if len(chars) == 1:
                yield chars[0]
            for a, b in itertools.pairwise(chars):
                yield f"{a} {b}"
            pos = m.end()
        if pos < len(token):
            yield token[pos:]


def word_count(text: str) -> int:
    """Words of ``text``: whitespace-separated words, with each unit of an unsegmented run counted as one word
    (a Chinese sentence of 12 characters has 12, not 1)."""
    n = 0
    for w in text.split():
        if _HAS_UNSEG.search(w):
            rest = _RUN.sub(" ", w)
            n += sum(len(_UNIT.findall(r)) for r in _RUN.findall(w)) + len(rest.split())
        else:
            n += 1
    return n


# The ends of scripts other than Latin: a boundary after them needs no capital (most of these scripts have no case),
# and after the CJK ones no space either. Modules with their own rule for ". ! ?" add this alternative to it.
OTHER_ENDS = "\u0964\u0965\u061f\u06d4\u1362\u1367\u1368\u104b\u17d4\u0589"
OTHER_BREAK = (f"(?<=[{OTHER_ENDS}])[{re.escape(CLOSERS)}]*\\s+"
               f"|(?<=[{UNSPACED_ENDS}])[{re.escape(CLOSERS)}]*\\s*(?=\\S)")
# ". ! ?" and space before a character outside ASCII: a boundary when that character opens a sentence (below).
NON_ASCII_AFTER_STOP = "(?P<beyond_ascii>(?<=[.!?])[\"')\\]]*\\s+(?=[^\\x00-\\x7f]))"


_OPENERS = "\"'([\u201c\u2018\u00ab\u300c\u300e"


def opens_sentence(ch: str) -> bool:
    """Whether a sentence can start with ``ch``: a capital of any script, a letter of a script without case, a
    digit, an opening quote or bracket (not a lower-case letter, as after "e.g. ")."""
    return ch.isupper() or ch.isdigit() or (ch.isalpha() and not ch.islower()) or ch in _OPENERS


def boundaries(pattern: re.Pattern[str] | LazyPattern, text: str) -> list[re.Match[str]]:
    """The matches of ``pattern`` in ``text``, less the ``beyond_ascii`` ones (:data:`NON_ASCII_AFTER_STOP`) that
    a lower-case letter follows."""
    out = []
    for m in pattern.finditer(text):
        if m.groupdict().get("beyond_ascii") is not None and not opens_sentence(text[m.end():m.end() + 1] or "a"):
            continue
        out.append(m)
    return out


_GENERIC = re.compile(f"(?<=[.!?\u2026])[{re.escape(CLOSERS)}]*\\s+(?=\\S)|{OTHER_BREAK}")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` at the ends of every script (see the module doc); no abbreviation handling."""
    out, pos = [], 0
    for m in _GENERIC.finditer(text):
        out.append(text[pos:m.start()])
        pos = m.end()
    out.append(text[pos:])
    return [s.strip() for s in out if s.strip()]


def is_question(text: str) -> bool:
    """Whether ``text`` ends in a question mark of any script (``? ？ ؟ ;`` Greek, ``՞`` Armenian)."""
    return text.rstrip().rstrip(CLOSERS).endswith(("?", "\uff1f", "\u061f", "\u037e", "\u055e"))


def cased_script(word: str) -> bool:
    """Whether ``word`` is written in a script with upper and lower case (Latin, Cyrillic, Greek, Armenian...), so
    that a capital can mark a name."""
    return any(ch.isupper() or ch.islower() for ch in word)
