"""Markdown export of an answer: the text, its numbered sources and the navigation trace (no Qt).

The GUI's "Export..." action and any script can call :func:`answer_to_markdown`; it is a pure function of the
answer and trace objects (``core/answers/types.py``, ``core/navigation/trace.py``). Text from documents, questions and
the model is made inert (``core/store/inert.py``: control and bidi characters escaped, remote images and raw HTML
made literal), so opening the export fetches nothing.
"""

from __future__ import annotations

from shelfwise.core.answers.types import Answer
from shelfwise.core.navigation.trace import Hit, Level, SearchResult
from shelfwise.core.store.inert import escaped
from shelfwise.core.store.inert import markdown_text as md


def source_label(hit: Hit) -> str:
    """``file > heading > ... p. 4``: the name of the file, its heading path and the location."""
    name = hit.path.replace("\\", "/").rsplit("/", 1)[-1] or hit.title
    parts = [name, *[h for h in hit.heading_path if h]]
    label = " > ".join(parts)
    where = hit.location_label()
    return f"{label} {where}".strip() if where else label


def level_summary(level: Level) -> str:
    """``Level 2 · documents · 31 -> kept 4 · 420 tokens · 0.6 s``."""
    return (
        f"Level {level.depth} · {level.label} · {len(level.candidates)} -> kept {len(level.kept)}"
        f" · {level.tokens} tokens · {level.seconds:.1f} s"
    )


def _quote(text: str, limit: int = 400) -> str:
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return "> " + md(text)


def _escape_cell(text: str) -> str:
    return md(" ".join(text.split()).replace("|", "\\|"))


def trace_to_markdown(search: SearchResult, *, max_rows: int = 12) -> str:
    """The walk as Markdown: one table per level, kept candidates first."""
    trace = search.trace
    lines = [
        "## The walk",
        "",
        f"{len(trace.levels)} levels · {trace.requests} requests · {trace.tokens} tokens · {trace.seconds:.1f} s"
        + (f" · readout: {trace.readout}" if trace.readout else ""),
        "",
    ]
    for level in trace.levels:
        lines += [f"### {level_summary(level)}", "", "| | candidate | kind | score |", "|---|---|---|---|"]
        ranked = sorted(level.candidates, key=lambda c: (not c.kept, -c.score))
        for cand in ranked[:max_rows]:
            mark = "kept" if cand.kept else "pruned"
            src = "" if cand.source == "tree" else f" ({cand.source})"
            lines.append(f"| {mark} | {_escape_cell(cand.title)}{src} | {cand.kind} | {cand.score:.2f} |")
        if len(ranked) > max_rows:
            lines.append(f"| | … {len(ranked) - max_rows} more | | |")
        lines.append("")
    return "\n".join(lines)


def answer_to_markdown(answer: Answer, *, include_trace: bool = True) -> str:
    """The whole export: question, answer with [n] markers, sources with quotes, and (optionally) the walk."""
    lines = [f"# {md(answer.question.strip())}", "", md(answer.text.strip()) or "_(no answer)_", ""]
    if not answer.found:
        lines += ["_Not found in your documents._", ""]
    if answer.citations:
        lines += ["## Sources", ""]
        for cit in sorted(answer.citations, key=lambda c: c.number):
            lines.append(f"[{cit.number}] {md(source_label(cit.hit))}  ")
            lines.append(f"`{escaped(cit.hit.path).replace('`', chr(39))}`")  # a code span: nothing in it acts
            lines.append("")
            lines.append(_quote(cit.hit.text))
            lines.append("")
    if answer.steps:
        lines += ["## Steps", ""]
        for i, step in enumerate(answer.steps, 1):
            lines.append(f"{i}. **{md(step.question)}** ({md(step.label)}): "
                         f"{md(step.answer)}")
        lines.append("")
    if include_trace and answer.search is not None:
        lines.append(trace_to_markdown(answer.search))
    if answer.tokens or answer.seconds:
        lines += [f"_Answer: {answer.tokens} tokens, {answer.seconds:.1f} s._", ""]
    return "\n".join(lines).rstrip() + "\n"
