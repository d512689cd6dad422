"""Text and JSON renderings of the core's result objects for the command line: the walk (:func:`render_trace`,
:func:`render_path`), the passages as JSON (:func:`result_json`), an answer with its steps and sources
(:func:`render_answer_text`) and an answer as it is made (:class:`StreamedAnswer`). The window renders the same
objects with widgets (``app/gui``).
"""

from __future__ import annotations

import shutil
import sys
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from shelfwise.app.cli.shown import raw_stream, shown, terminal_text
from shelfwise.app.cli.table_answer import table_lines
from shelfwise.core.answers.types import Answer, AnswerEvents, Citation
from shelfwise.core.navigation.trace import Hit, SearchResult, Trace, to_dict


def render_path(result: SearchResult) -> list[str]:
    """The path topic -> document -> section -> passage of the best hit, with the score at each level."""
    if not result.hits:
        return ["(no passage found)"]
    best = result.hits[0].node_id
    lines = []
    chain: set[int] = {best}
    # walk levels bottom-up to collect the best hit's ancestors that appear in the trace
    by_id = {c.node_id: c for lvl in result.trace.levels for c in lvl.candidates}
    node = by_id.get(best)
    while node is not None and node.parent_id is not None:
        chain.add(node.parent_id)
        node = by_id.get(node.parent_id)
    for lvl in result.trace.levels:
        on_path = [c for c in lvl.candidates if c.node_id in chain]
        for c in on_path[:1]:
            lines.append(f"  {lvl.label:<10} {c.score:5.2f}  {shown(c.title)}")
    return lines


def render_trace(trace: Trace) -> list[str]:
    lines = []
    for lvl in trace.levels:
        kept = len(lvl.kept)
        judged = f" · judge read {lvl.judged}" if lvl.judged else ""
        lines.append(f"Level {lvl.depth} · {lvl.label} · {len(lvl.candidates)} judged -> kept {kept} · "
                     f"{lvl.tokens} tokens · {lvl.requests} requests{judged} · {lvl.seconds:.2f} s")
        for c in lvl.candidates[:12]:
            bar = "#" * round(c.score * 20)
            mark = "+" if c.kept else "-"
            src = "" if c.source == "tree" else f" ({c.source})"
            jl = f"  [judge {c.features['judge']:+.1f}]" if "judge" in c.features else ""
            lines.append(f"   {mark} {bar:<20} {c.score:5.2f}  {shown(c.title[:80])}{src}{jl}")
        if len(lvl.candidates) > 12:
            lines.append(f"     ... {len(lvl.candidates) - 12} more")
    lines.append(f"Total: {trace.tokens} tokens evaluated, {trace.requests} requests, {trace.seconds:.2f} s")
    if trace.judge:
        lines.append(f"Relevance judge: {trace.judge} ({trace.judged} candidates read)")
    if trace.encoder and not trace.encoder.endswith(", in process"):
        lines.append(f"Sentence encoder: {trace.encoder}")
    if trace.calibration:
        lines.append(f"Decision model: {trace.calibration}")
    return lines


def result_json(result: SearchResult) -> dict[str, object]:
    passages = [{
        "text": h.text, "path": h.path, "title": h.title, "heading_path": h.heading_path,
        "location": to_dict(h.location), "score": h.score, "node_id": h.node_id,
    } for h in result.hits]
    trace = to_dict(result.trace)
    return {"question": result.query, "passages": passages, "trace": trace["levels"], "tokens": trace["tokens"],
            "requests": trace["requests"], "seconds": round(result.trace.seconds, 3), "readout": result.trace.readout,
            "calibration": result.trace.calibration, "judge": result.trace.judge or None,
            "encoder": result.trace.encoder or None, "judged": result.trace.judged, "notes": list(result.trace.notes)}


def answer_json(answer: Answer) -> dict[str, object]:
    """``shelfwise ask --json``: the search's passages and trace, then the answer, its citations and steps."""
    out: dict[str, object] = (result_json(answer.search) if answer.search
                           else {"question": answer.question, "passages": [], "trace": []})
    out["answer"] = answer.shown_first()
    out["short_answer"] = to_dict(answer.short) if answer.short else None
    out["found"] = answer.found
    out["sentences"] = [to_dict(s) for s in answer.sentences]
    out["generated"] = answer.generated
    out["generated_raw"] = answer.generated_raw
    out["generation_note"] = answer.generation_note
    out["generation_checks"] = list(answer.generation_checks)
    out["first_seconds"] = round(answer.first_seconds, 3)
    out["citations"] = [{"number": c.number, "path": c.hit.path, "title": c.hit.title,
                         "location": to_dict(c.hit.location), "heading_path": c.hit.heading_path,
                         "text": c.hit.text, "node_id": c.hit.node_id} for c in answer.citations]
    out["related"] = [{"path": h.path, "title": h.title, "location": to_dict(h.location),
                       "heading_path": h.heading_path, "text": h.text, "node_id": h.node_id}
                      for h in related_hits(answer)]
    out["steps"] = [to_dict(s) for s in answer.steps]
    out["notes"] = sorted(set(answer.notes) | set(answer.search.trace.notes if answer.search else []))
    return out


def source_line(c: Citation) -> str:
    """``[1] title > heading > ... (p. 4) path``, each name escaped (:func:`shown`): a name's newline cannot forge a
    source line."""
    h = c.hit
    parts: list[str] = []
    for x in [h.title, *h.heading_path]:  # a document's title is often its first heading too
        if x and (not parts or x != parts[-1]):
            parts.append(x)
    where = " > ".join(shown(x) for x in parts)
    loc = h.location.label()
    return f"[{c.number}] {where}" + (f" ({loc})" if loc else "") + (f" {shown(h.path)}" if h.path else "")


def answer_lines(answer: Answer) -> list[str]:
    """What is shown first, in order: "Answer:" with the value asked for (or "Yes:"/"No:" and the deciding
    sentence), "In the sources:" with the sentence(s) it is read from, a table value's explanation and cells; just
    "Answer:" and the sentence(s) when no value was found (or "Not found in your documents.")."""
    short = answer.short
    if answer.by_steps:  # several questions, or an adaptive run's parts: each with its own answer
        return ["Answer:", *(f"{i}. {line}" for i, line in enumerate(answer.text.splitlines(), 1))]
    if short is None or not answer.found:
        return [f"Answer: {answer.text}"]
    if short.operation and short.cells:  # a table's value: the value, the operation, the cells, the rows read
        return [*table_lines(short), *([f"In the sources: {answer.text}"] if short.sentence else [])]
    if short.kind == "yes_no":
        return [f"Answer: {short.text}: {answer.text}"]
    cite = f" [{short.number}]" if short.number else ""
    lines = [f"Answer: {short.text}{cite}"]
    if short.explanation:
        lines.append(f"  {short.explanation}")
    if short.cells:
        lines.append("  cells: " + "; ".join(f"{c.address} = {c.value}" for c in short.cells))
    return [*lines, f"In the sources: {answer.text}"]


RELATED = 3  # nearest passages offered under "Not found in your documents."


def related_hits(answer: Answer) -> list[Hit]:
    """The passages nearest a question the documents do not answer (offered as related, not as an answer)."""
    if answer.found or answer.search is None or answer.kind:
        return []
    return list(answer.search.hits[:RELATED])


def render_sources(answer: Answer) -> list[str]:
    """The "Sources:" block under an answer; under "Not found", the nearest passages as related ones."""
    if answer.citations:
        return ["Sources:", *(source_line(c) for c in answer.citations)]
    related = related_hits(answer)
    if related:
        return ["Related passages (nearest, they do not answer it):",
                *(source_line(Citation(i, h)) for i, h in enumerate(related, 1))]
    return []


def checked_label(answer: Answer) -> str:
    """The label of a kept model text: exactly the checks it passed (``Answer.generation_checks``)."""
    return "Model's answer (checked: " + "; ".join(answer.generation_checks) + ")"


def render_generation(answer: Answer) -> list[str]:
    """Under the answer: the model's own answer with what it was checked for, when it passed the checks, or why it
    is not shown (nothing when the model was not asked)."""
    if answer.generated:
        return ["", f"{checked_label(answer)}: {answer.generated}"]
    if answer.generation_note:
        return ["", f"({answer.generation_note})"]
    return []


def render_verdict(answer: Answer, streamed: str) -> list[str]:
    """Under a streamed model's answer that is kept (``streamed``, as printed): what it was checked for, and the
    kept text when the check changed it."""
    checks = "; ".join(answer.generation_checks)
    if " ".join(answer.generated.split()) == " ".join(streamed.split()):
        return [f"(kept, checked: {checks})"]
    return [f"(kept, checked: {checks}; as kept: {answer.generated})"]


E = TypeVar("E", bound=AnswerEvents)


def terminal_columns() -> int | None:
    """The width of the terminal an answer is printed on, or None when standard output is not a terminal (a pipe,
    a file, a captured run): there the model's text is printed once it is checked, never as it is written."""
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def rows_taken(text: str, columns: int) -> int:
    """How many rows of a terminal ``columns`` wide ``text`` takes when written from the start of a row (wide East
    Asian characters take two cells, combining marks none, tabs stop every 8 cells)."""
    def cells(line: str) -> int:
        return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
                   for ch in line.expandtabs(8))
    return sum(max(1, -(-cells(line) // columns)) for line in text.split("\n"))


STREAM_LABEL = "Model's answer: "


class StreamedAnswer:
    """The terminal's side of an answer being made (``shelfwise ask``, ``shelfwise chat``): the extracted
    sentence at once (:meth:`on_extract`), the model's answer as it is written (:meth:`on_token`), then whether it
    is kept (:meth:`on_generated`); :meth:`finish` prints what no event brought (the steps, the sources).

    A text the checks do not keep never stays on screen: on a terminal (``columns``, from
    :func:`terminal_columns`) it is written as it comes and erased when withdrawn, the reason printed in its place,
    as the window replaces it; elsewhere (a pipe, a file) it is held until checked and only what is kept is
    printed."""

    def __init__(self, echo: Callable[..., object]) -> None:
        self.echo = echo
        self.columns = terminal_columns()
        self.extracted = False
        self.streamed = ""
        self.judged = False

    def listening(self, events: E) -> E:
        """``events`` with this printer's ``on_extract``, ``on_token`` and ``on_generated`` (the command's own
        events, such as printing the walk, kept)."""
        return replace(events, on_extract=self.on_extract, on_token=self.on_token, on_generated=self.on_generated)

    def on_extract(self, answer: Answer) -> None:
        for line in answer_lines(answer):
            self.echo(line)
        self.extracted = True

    def on_token(self, piece: str) -> None:
        if self.columns is not None:
            if not self.streamed:
                self.echo("\n" + STREAM_LABEL, nl=False)
            self.echo(piece, nl=False)  # click.echo flushes: each piece shows as it comes
        self.streamed += piece

    def on_generated(self, answer: Answer) -> None:
        if self.streamed and self.columns is not None:
            if answer.generated:
                self.echo("")
                lines = render_verdict(answer, self.streamed)
            else:  # withdrawn or adding nothing: off the screen, the reason in its place
                self.erase_streamed()
                lines = render_generation(answer)[1:]  # the blank line above the text stays
        else:
            lines = render_generation(answer)
        for line in lines:
            self.echo(line)
        self.judged = True

    def erase_streamed(self) -> None:
        """Moves the cursor back to the start of the streamed text's first row and clears to the end of the screen
        (written under the output door, which would escape the control sequence)."""
        assert self.columns is not None
        rows = rows_taken(STREAM_LABEL + terminal_text(self.streamed), self.columns)
        sys.stdout.flush()
        out = raw_stream(sys.stdout)
        out.write("\r" + (f"\x1b[{rows - 1}A" if rows > 1 else "") + "\x1b[J")
        out.flush()

    def finish(self, answer: Answer) -> None:
        if not self.extracted:
            self.on_extract(answer)
        if not self.judged:
            for line in render_generation(answer):
                self.echo(line)
        steps = render_steps(answer) if shows_steps(answer) else []
        for line in ["", "Steps:", *steps] if steps else []:
            self.echo(line)
        for line in render_sources(answer):
            self.echo(line)


def shows_steps(answer: Answer) -> bool:
    """Adaptive retrieval's one step is worth showing when the model answered it itself (several are the answer's
    own lines)."""
    if answer.by_steps:  # the answer lists them already
        return False
    return any(s.source == "model" for s in answer.steps)


def render_steps(answer: Answer) -> list[str]:
    lines = []
    for i, s in enumerate(answer.steps, 1):
        lines.append(f"{i}. {s.question} -> {s.answer}  ({s.label})")
    return lines


def render_answer_text(answer: Answer) -> str:
    """The answer, the adaptive steps if there were several, then "Sources:" lines."""
    parts = [*answer_lines(answer), *render_generation(answer)]
    if shows_steps(answer):
        parts += ["", "Steps:", *render_steps(answer)]
    sources = render_sources(answer)
    if sources:
        parts += ["", *sources]
    return "\n".join(parts)
