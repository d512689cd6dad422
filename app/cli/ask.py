"""``shelfwise ask``: navigate, show the sentence that answers with its citation, then stream the model's answer
and say whether it is kept."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import click

from shelfwise.app.cli.group import (
    JUDGE_OPTION,
    READOUTS,
    command_shelf,
    err,
    require_library,
    setting_help,
    settings_for,
    warn_if_degraded,
)
from shelfwise.app.cli.index import before_question, say_before_question
from shelfwise.app.cli.progress import IndexLine
from shelfwise.app.cli.render import StreamedAnswer, answer_json, render_path, render_trace, result_json
from shelfwise.app.cli.scope_options import scope_error, scope_from, scope_options
from shelfwise.app.cli.shown import json_text, shown
from shelfwise.core.answers.types import Answer
from shelfwise.core.api.asking import EmptyCollection, OnlyFilters, ScopeError
from shelfwise.core.api.indexing import QuestionEvents
from shelfwise.core.navigation.trace import SearchResult
from shelfwise.core.settings import whole_range
from shelfwise.core.shelf import Shelf


class QuestionCommand(click.Command):
    """A command whose argument is a question: an argument that starts with "-" but holds a space ("- how do I
    reset my password?", a list item pasted from notes) is the question, never an option (options hold no
    spaces)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" not in args:
            texts = [a for a in args if a.startswith("-") and any(ch.isspace() for ch in a)]
            if texts:
                args = [a for a in args if a not in texts] + ["--", *texts]
        return super().parse_args(ctx, args)


@click.command("ask", cls=QuestionCommand)
@click.argument("question")
@click.option("--collection", default="default", show_default=True, help="Collection to search.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (passages, trace, answer, citations).")
@click.option("--trace", "show_trace", is_flag=True, help="Print every level of the walk, kept and pruned.")
@click.option("--no-answer", is_flag=True, help="Only navigate; do not write an answer.")
@click.option("--adaptive/--no-adaptive", default=None, help=setting_help("adaptive"))
@click.option("--generate/--no-generate", default=None,
              help="After the extracted sentence, let the model write an answer (shown only if its facts are in "
                   "the cited passages). Default: on.")
@click.option("--readout", type=READOUTS, default=None, help=setting_help("readout"))
@click.option("--model", "model_path", type=click.Path(dir_okay=False), default=None, help=setting_help("model_path"))
@click.option("--backend", "backend_url", default=None,
              help="url:http://host:port to use an OpenAI-compatible server instead of the in-process model.")
@click.option("--gpu-layers", type=click.IntRange(*whole_range("n_gpu_layers")), default=None,
              help=setting_help("n_gpu_layers"))
@click.option("--threads", type=click.IntRange(*whole_range("n_threads")), default=None,
              help=setting_help("n_threads"))
@JUDGE_OPTION
@scope_options
@click.option("--conversation", "conversation_id", default=None,
              help="Ask this as the next turn of a stored conversation (its id, or 'new'); the question is read "
                   "with that conversation's history (see `shelfwise chat`). --json then shows how it was read.")
@click.pass_context
def ask_cmd(ctx: click.Context, question: str, collection: str, as_json: bool, show_trace: bool, no_answer: bool,
            adaptive: bool | None, generate: bool | None, readout: str | None, model_path: str | None,
            backend_url: str | None,
            gpu_layers: int | None, threads: int | None, judge: str | None, in_paths: tuple[str, ...],
            types: tuple[str, ...], since: str | None, until: str | None, conversation_id: str | None) -> None:
    """Answer a question from your documents and show the path taken to the passages.

    Questions about a document's structure (its chapters, a summary, how many pages or slides, which documents
    mention something, where something is described) are answered from its table of contents. --in, --type,
    --since and --until (or in:, type:, since:, until: in the question) limit where it looks.

    \b
    Example:
        shelfwise ask "How many days of annual leave do I get?"
        shelfwise ask "VPN rules" --no-answer --trace
        shelfwise ask "Who approves travel?" --json
        shelfwise ask "What are the chapters of the employee handbook?"
        shelfwise ask "type:pptx Which slides cover passwords?" --since 2025-01-01
        shelfwise ask --conversation 3 "and who approves it?" --json
    """
    question = typed_question(question)
    require_library(ctx)

    scope = scope_from(in_paths, types, since, until)
    if conversation_id is not None:
        if no_answer:
            raise click.UsageError("--no-answer does not apply with --conversation: a turn is stored with its "
                                   "answer (--no-generate keeps the answer to the sentence from the sources)")
        # a turn reads its filters from the question, on this turn and on the follow-ups that continue it
        question = inline_filters(in_paths, types, since, until) + question

    if backend_url and backend_url.startswith("url:"):
        backend_url = backend_url[4:]
    settings = settings_for(ctx, readout=readout, model_path=model_path, backend_url=backend_url,
                         n_gpu_layers=gpu_layers, n_threads=threads, adaptive=adaptive,
                            answer_generate=generate, judge=judge)
    with command_shelf(settings) as shelf:
        warn_if_degraded(shelf)  # a damaged library answers too, read-only, with this warning
        if conversation_id is not None:
            _turn(shelf, conversation_id, question, collection, as_json, show_trace)
            return
        # the question as typed handed to the facade once: read, the index made ready, walked and answered
        events = _events(as_json, show_trace)
        printer = StreamedAnswer(click.echo)
        if not as_json and not no_answer:  # the answer printed as it is made
            events = printer.listening(events)
        with _door(question, collection):
            if no_answer:
                _print_walk(shelf.search_typed(question, collection, scope=scope, events=events), as_json)
                return
            answer = shelf.ask_typed(question, collection, scope=scope, events=events)
        _print_answer(answer, printer, as_json)


def _print_answer(answer: Answer, printer: StreamedAnswer, as_json: bool) -> None:
    """What no event printed: the steps and sources, the notes not said yet, the cost (or the one JSON object)."""
    if as_json:
        click.echo(json_text(answer_json(answer), indent=1))
        return
    printer.finish(answer)
    said = set(answer.search.trace.notes) if answer.search else set()
    for note in answer.notes:  # e.g. a source whose file is gone or changed since it was read
        if note not in said:
            err(f"Note: {note}")
    if answer.search:
        click.echo(f"\n({answer.search.trace.tokens} tokens to navigate, {answer.tokens} in all, "
                   f"{answer.seconds:.1f} s)")


def _print_walk(result: SearchResult, as_json: bool) -> None:
    """``--no-answer``: the walk's passages (its path was printed as it was reported)."""
    if as_json:
        click.echo(json_text(result_json(result), indent=1))
        return
    _print_passages(result)


def _turn(shelf: Shelf, conversation_id: str, question: str, collection: str, as_json: bool,
          show_trace: bool) -> None:
    """``--conversation``: the turn's question read once here (the turn does not read it again), the index made
    ready, then the turn asked and printed (``app/cli/chat.py``)."""
    from shelfwise.app.cli.chat import continue_conversation

    if not shelf.documents(collection):
        _no_documents(collection)
    turn_question = shelf.take_question(question, collection)
    if turn_question.error is not None:
        raise scope_error(turn_question.error)
    assert turn_question.prepared is not None  # read unless a filter is malformed (said just above)
    only_filters(question, turn_question.prepared.text)
    before_question(shelf, collection)
    continue_conversation(shelf, conversation_id, turn_question, collection, as_json, show_trace)


@contextmanager
def _door(question: str, collection: str) -> Iterator[None]:
    """What the facade's door refuses, said as the command line says it: no documents (exit 2), a malformed filter
    or only filters (usage errors)."""
    try:
        yield
    except EmptyCollection:
        _no_documents(collection)
    except OnlyFilters:
        only_filters(question, "")
    except ScopeError as exc:
        raise scope_error(exc) from exc


def _no_documents(collection: str) -> NoReturn:
    err(f"Collection {collection!r} has no documents. Add some first: shelfwise ingest PATH")
    sys.exit(2)


def _events(as_json: bool, show_trace: bool) -> QuestionEvents:
    """What the command shows before the answer: the index made ready (on stderr), the notes of the walk (e.g. the
    question was clipped: said even with --json), its scope and path (and every level with ``--trace``)."""

    def on_search(result: SearchResult) -> None:
        for note in result.trace.notes:
            err(f"Note: {note}")
        if as_json:
            return
        if result.trace.scope:
            click.echo(f"Scope: {shown(result.trace.scope)}")
        if result.trace.readout == "structure" or (not result.hits and result.trace.scope):
            click.echo("Read from the documents' tables of contents.\n")
            return
        click.echo("Path:")
        for line in render_path(result):
            click.echo(line)
        if show_trace:
            click.echo("")
            for line in render_trace(result.trace):
                click.echo(line)
        click.echo("")

    return QuestionEvents(on_search=on_search, on_before=say_before_question, on_index=IndexLine())


def inline_filters(in_paths: tuple[str, ...], types: tuple[str, ...], since: str | None,
                   until: str | None) -> str:
    """The scope options written as the question's inline filters (``in:"PATH" type:pdf since:DATE ``), which mean
    the same; a path holding a double quote cannot be written so and is a usage error."""
    for p in in_paths:
        if '"' in p:
            raise click.UsageError(f"--in {p!r}: a path with a double quote cannot scope a conversation's turn; "
                                   "name its folder or the document instead")
    parts = [f'in:"{p}"' for p in in_paths] + [f"type:{t}" for t in types]
    parts += [f"since:{since}"] if since else []
    parts += [f"until:{until}"] if until else []
    return "".join(part + " " for part in parts)


def only_filters(question: str, asked: str) -> None:
    """A usage error when ``question`` is only filters (``asked``: what it asks besides them)."""
    if not any(ch.isalnum() for ch in asked):
        raise click.UsageError("The question is only filters: type what you want to know after them, e.g. "
                               f'shelfwise ask "{question.strip()} How many days of annual leave do I get?"')


def typed_question(raw: str) -> str:
    """The question as the user meant it: bytes that are not UTF-8 (the shell passes them through as surrogate
    escapes, which no encoder takes) become U+FFFD; an empty question is a usage error (exit 2), not a walk."""
    question = os.fsencode(raw).decode("utf-8", errors="replace") if any(
        "\udc80" <= ch <= "\udcff" for ch in raw) else raw
    if not question.strip() or not any(ch.isalnum() for ch in question):
        raise click.UsageError("The question is empty: type what you want to know, e.g. "
                               'shelfwise ask "How many days of annual leave do I get?"')
    return question


def _print_passages(result: SearchResult) -> None:
    click.echo("Passages:")
    for i, h in enumerate(result.hits, 1):
        where = " > ".join(shown(x) for x in [h.title, *h.heading_path])
        loc = h.location.label()
        text = " ".join(h.text.split())
        click.echo(f"{i:>2}. {h.score:.2f}  {where}{' (' + loc + ')' if loc else ''}")
        click.echo(f"      {text[:200]}{'...' if len(text) > 200 else ''}")
        click.echo(f"      {shown(h.path)}")


COMMANDS = (ask_cmd,)
