"""Markdown export of a conversation: each turn's question, how it was read, the answer shown, and its citations
(file, page / slide / sheet, section, the quoted sentence); a citation whose document left the library says so.
Every piece of text from a document, a question or a model is made inert (:func:`markdown_text`: control and bidi
characters escaped, remote images and raw HTML made literal), so opening the export fetches nothing."""

from __future__ import annotations

from shelfwise.core.conversation.model import Conversation, Turn
from shelfwise.core.store.inert import markdown_text as md

REMOVED = "the cited document is no longer in the library"


def citation_line(c_number: int, where: str, quote: str, missing: bool) -> str:
    quote = md(" ".join(quote.split()))
    line = f"[{c_number}] {md(where)}"
    if missing:
        line += f" ({REMOVED})"
    return line + (f"\n    > {quote}" if quote else "")


def turn_markdown(turn: Turn, number: int) -> str:
    out = [f"## {number}. {md(' '.join(turn.question.split()))}", ""]
    if turn.reading.mode == "followup" and turn.reading.query != turn.question:
        out += [f"*Read as a follow-up: {md(' '.join(turn.reading.query.split()))}*", ""]
    elif turn.reading.mode == "shift":
        out += ["*Read alone: a new topic.*", ""]
    out += [md(turn.shown) if turn.found else "Not found in your documents.", ""]
    if turn.citations:
        out.append("Sources:")
        out.append("")
        for c in turn.citations:
            out.append("- " + citation_line(c.number, c.where(), c.quote, c.missing))
        out.append("")
    return "\n".join(out)


def conversation_markdown(conv: Conversation) -> str:
    head = [f"# {md(conv.title or 'Conversation')}", "",
            f"Collection `{md(conv.collection)}` · {len(conv.turns)} question(s) · started {conv.created_at}", ""]
    return "\n".join(head + [turn_markdown(t, i) for i, t in enumerate(conv.turns, 1)]).rstrip() + "\n"
