"""Small pure text helpers used by the store: node descriptions and safe FTS5 queries."""

from __future__ import annotations

import re

from shelfwise.core.languages import SENTENCE_END_CHARS, UNSPACED_ENDS, query_terms

# A sentence ends at . ! ? (or the ends of other scripts, core/languages.py) followed by whitespace or the end of
# the text, or at a CJK full stop.
_ENDS = SENTENCE_END_CHARS.replace("\u2026", "")  # an ellipsis does not end a lead sentence
_SENTENCE_END = re.compile(f"[{re.escape(_ENDS)}](?=\\s|$)|[{UNSPACED_ENDS}]")
MAX_QUERY_TERMS = 64


def squash(text: str) -> str:
    """Collapse runs of whitespace to one space and strip."""
    return " ".join(text.split())


def lead_sentence(text: str, max_chars: int = 200, min_chars: int = 20) -> str:
    """The first sentence of ``text`` (at least ``min_chars`` long, so "Fig. 3" does not end it), clipped to
    ``max_chars`` at a word boundary with an ellipsis."""
    flat = squash(text[: max_chars * 4])  # the lead is near the start; do not squash a whole long passage
    if not flat:
        return ""
    end = len(flat)
    for m in _SENTENCE_END.finditer(flat):
        if m.end() >= min_chars:
            end = m.end()
            break
    lead = flat[:end]
    if len(lead) > max_chars:
        cut = lead[:max_chars]
        space = cut.rfind(" ")
        lead = (cut[:space] if space > max_chars // 2 else cut).rstrip(" ,;:") + "\u2026"
    return lead


def describe(title: str, text: str, max_chars: int = 300) -> str:
    """A one-line description: ``title: lead sentence`` (just one of them when the other is empty, and just the
    lead when it already starts with the title)."""
    title = squash(title)
    lead = lead_sentence(text)
    if not lead:
        out = title
    elif not title or lead.casefold().startswith(title.casefold()):
        out = lead
    else:
        out = f"{title}: {lead}"
    return out if len(out) <= max_chars else out[: max_chars - 1].rstrip() + "\u2026"


def fts_query(text: str) -> str | None:
    """Turn arbitrary user text into a safe FTS5 MATCH expression: each term quoted, terms OR-ed.

    Terms are the words of the text as the index's tokenizer sees them, a run of Chinese/Japanese/Thai-like script
    as its character bigrams (:func:`shelfwise.core.languages.query_terms`, ``core/store/fts.py``). Operators,
    parentheses, quotes, column filters and ``*`` are dropped, so no input can raise a syntax error. Returns None
    when the text has no searchable word.
    """
    terms = [f'"{t}"' for t in query_terms(text)[:MAX_QUERY_TERMS]]
    return " OR ".join(terms) if terms else None
