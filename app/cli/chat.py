"""``shelfwise chat``: a conversation in the terminal (follow-up questions read with their history), and the
part of ``shelfwise ask --conversation ID`` that continues a stored conversation."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import click

from shelfwise.app.cli.group import err, settings_for, warn_if_degraded
from shelfwise.app.cli.index import before_question
from shelfwise.app.cli.render import StreamedAnswer, answer_json, render_path, render_trace
from shelfwise.app.cli.scope_options import scope_message
from shelfwise.app.cli.shown import json_text, raw_stream
from shelfwise.core.api.asking import (
    EmptyQuestion,
    NoSuchConversation,
    TurnEvents,
    TurnQuestion,
    write_text_atomically,
)
from shelfwise.core.conversation.model import Conversation, Reading
from shelfwise.core.navigation.trace import SearchResult

if TYPE_CHECKING:
    from shelfwise.core.shelf import Shelf

ONLY_FILTERS = ("Nothing asked: the question is only filters (in:, type:, since:, until:); type what you want to "
                "know after them.")
HELP = ("Type a question; a follow-up is read with the conversation. /alone QUESTION asks it alone, /new starts "
        "a new conversation, /export FILE writes it as Markdown, /list shows the stored ones, /quit ends.")


def reading_line(reading: Reading) -> str | None:
    """What the terminal says before a follow-up's answer (nothing for a first question)."""
    if reading.mode == "followup":
        return f"(read as a follow-up: {reading.query})" if reading.query != reading.question else \
            "(read as a follow-up)"
    if reading.mode == "shift":
        return "(read alone: a new topic)"
    return None


def reading_json(reading: Reading, conversation: Conversation) -> dict[str, object]:
    return {"id": conversation.id, "turn": len(conversation.turns), "reading": reading.to_dict()}


def open_conversation(shelf: Shelf, spec: str | None, collection: str) -> Conversation:
    """``new`` (or nothing): a new conversation; else the stored one with that id (a clear message if none)."""
    if spec is None or spec == "new":
        return shelf.new_conversation(collection)
    try:
        cid = int(spec)
    except ValueError:
        raise click.BadParameter(f"{spec!r} is not a conversation id (a number, or 'new')",
                                 param_hint="--conversation") from None
    try:
        return shelf.conversation(cid)
    except NoSuchConversation as exc:
        raise click.ClickException(str(exc)) from exc


def taken(shelf: Shelf, question: str, collection: str) -> TurnQuestion | None:
    """``question`` read once for the next turn (``Shelf.take_question``); None, said on stderr, when it asks
    nothing (empty, or only filters) or a filter in it is malformed or names nothing (the chat goes on)."""
    try:
        turn_question = shelf.take_question(question, collection)
    except EmptyQuestion as exc:
        err(f"Nothing asked: {exc}.")
        return None
    if turn_question.only_filters:
        err(ONLY_FILTERS)
        return None
    if turn_question.error is not None:  # a filter that names nothing: said, and the chat goes on
        err(scope_message(turn_question.error))
        return None
    return turn_question


def answer_turn(shelf: Shelf, conv: Conversation, question: str | TurnQuestion, *, as_json: bool = False,
                alone: bool = False, show_trace: bool = False) -> Conversation | None:
    """Ask one turn of ``conv`` through the facade and print it (streamed text, or one JSON object); the
    conversation with the turn, or None when the question asks nothing. A question read at the door
    (:func:`taken`) is not read again. ``show_trace``: the path and every level of the walk before the answer."""
    shown = StreamedAnswer(click.echo)

    def on_reading(reading: Reading) -> None:
        line = reading_line(reading)
        if line and not as_json:
            click.echo(line)

    def on_search(result: SearchResult) -> None:
        if as_json or not show_trace:
            return
        click.echo("Path:")
        for line in [*render_path(result), "", *render_trace(result.trace), ""]:
            click.echo(line)

    events = TurnEvents(on_reading=on_reading, on_search=on_search)
    if not as_json:  # the answer streamed as it is made
        events = shown.listening(events)
    if isinstance(question, str):
        read_once = taken(shelf, question, conv.collection)
        if read_once is None:
            return None
        question = read_once
    assert conv.id is not None
    try:
        conv, turn, answer = shelf.ask_in_conversation(conv.id, question, conv.collection, alone=alone,
                                                       events=events)
    except EmptyQuestion as exc:
        err(f"Nothing asked: {exc}.")
        return None
    for note in answer.notes:  # e.g. the question was clipped to what the model reads (and stored so)
        err(f"Note: {note}")
    if as_json:
        out = answer_json(answer)
        out["conversation"] = reading_json(turn.reading, conv) | {"question": turn.question}
        click.echo(json_text(out, indent=1))
        return conv
    shown.finish(answer)
    return conv


HISTORY_LINES = 1000  # lines of the chat's history kept between chats
HISTORY_BYTES = 1 << 20  # a history file past this is not read


def _history_file() -> Path | None:
    try:
        from shelfwise.core.paths import data_dir

        return data_dir() / "chat_history"
    except Exception:  # no writable data dir: history for this session only
        return None


def _readline() -> ModuleType | None:
    try:
        import readline
    except ImportError:  # Windows without pyreadline: plain input()
        return None
    # one chat's history: cleared first, since a process may run several chats (read_history_file appends, so the
    # history doubled with each one and the file grew without bound until readline crashed writing it), and kept
    # to HISTORY_LINES; a file larger than any such history is not read (it is replaced when the chat ends)
    readline.clear_history()
    readline.set_history_length(HISTORY_LINES)
    path = _history_file()
    try:
        if path is not None and path.stat().st_size <= HISTORY_BYTES:
            readline.read_history_file(str(path))
    except OSError:
        pass
    return readline


def typed_line(prompt: str) -> str:
    """One line from the user: ``input`` on the real stdout (readline's editing and history need it; the prompt is
    Shelfwise's own text), not through the terminal door."""
    wrapped = sys.stdout
    sys.stdout = raw_stream(wrapped)
    try:
        return input(prompt)
    finally:
        sys.stdout = wrapped


@click.command("chat")
@click.option("--collection", default="default", show_default=True, help="Collection to search.")
@click.option("--conversation", "conversation_id", default=None,
              help="Continue the stored conversation with this id (see --list).")
@click.option("--list", "list_only", is_flag=True, help="List the stored conversations and exit.")
@click.option("--delete", "delete_id", type=int, default=None, help="Delete the conversation with this id.")
@click.option("--export", "export_id", type=int, default=None,
              help="Print the conversation with this id as Markdown and exit.")
@click.pass_context
def chat_cmd(ctx: click.Context, collection: str, conversation_id: str | None, list_only: bool,
             delete_id: int | None, export_id: int | None) -> None:
    """Ask questions one after another; each follow-up is read with the conversation before it.

    Inside: /alone QUESTION (ask without the history), /new, /export FILE, /list, /quit (or Ctrl+D).
    Every finished turn is stored in the library at once.

    \b
    Example:
        shelfwise chat
        you> How many days of annual leave do employees get?
        you> and how do I request it?
        shelfwise chat --list
        shelfwise chat --conversation 3
    """
    from shelfwise.core.shelf import Shelf

    with Shelf(settings_for(ctx)) as shelf:
        warn_if_degraded(shelf)
        if list_only:
            for s in shelf.conversations():
                click.echo(f"{s.id:>4}  {s.updated_at}  {s.turns:>2} turn(s)  [{s.collection}] {s.title}")
            return
        for cid, what in ((delete_id, "delete"), (export_id, "export")):
            if cid is None:
                continue
            try:
                if what == "delete":
                    shelf.delete_conversation(cid)
                    click.echo(f"Deleted conversation {cid}.")
                else:
                    click.echo(shelf.conversation_markdown(cid), nl=False)
            except NoSuchConversation as exc:
                raise click.ClickException(str(exc)) from exc
            return
        if not shelf.documents(collection):
            err(f"Collection {collection!r} has no documents. Add some first: shelfwise ingest PATH")
            sys.exit(2)
        conv = open_conversation(shelf, conversation_id, collection) if conversation_id else None
        chat_loop(shelf, conv, collection)


def chat_loop(shelf: Shelf, conv: Conversation | None, collection: str) -> None:
    rl = _readline()
    index_ready = False
    click.echo(HELP)
    if conv is not None and conv.turns:
        click.echo(f"Continuing conversation {conv.id}: {len(conv.turns)} turn(s), last: {conv.turns[-1].question}")
    try:
        while True:
            try:
                line = typed_line("you> ")
            except EOFError:
                click.echo("")
                break
            text = line.strip()
            if not text:
                continue
            if text in ("/quit", "/exit", "/q"):
                break
            if text == "/new":
                conv = None
                click.echo("New conversation.")
                continue
            if text == "/list":
                for s in shelf.conversations():
                    click.echo(f"{s.id:>4}  {s.turns:>2} turn(s)  {s.title}")
                continue
            if text.startswith("/export"):
                target = text[len("/export"):].strip()
                if not target:
                    click.echo("Usage: /export FILE")
                elif conv is None or conv.id is None or not conv.turns:
                    click.echo("Nothing to export yet: ask a question first.")
                else:
                    try:
                        write_text_atomically(Path(target).expanduser(), shelf.conversation_markdown(conv.id))
                        click.echo(f"Exported {len(conv.turns)} turn(s) to {target}")
                    except OSError as exc:
                        click.echo(f"Could not write {target}: {exc.strerror or exc}")
                continue
            alone = text.startswith("/alone ")
            if text.startswith("/") and not alone:
                click.echo(HELP)
                continue
            # read once, here: a question that asks nothing is said before a conversation is made for it
            question = taken(shelf, text[len("/alone "):] if alone else line,
                             conv.collection if conv is not None else collection)
            if question is None:
                continue
            if conv is None:
                conv = shelf.new_conversation(collection)
            if not index_ready:  # as ask does: a new or interrupted index is finished before the first answer
                before_question(shelf, conv.collection)
                index_ready = True
            conv = answer_turn(shelf, conv, question, alone=alone) or conv
            click.echo("")
    finally:
        path = _history_file()
        if rl is not None and path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                rl.write_history_file(str(path))
            except OSError:
                pass


def continue_conversation(shelf: Shelf, spec: str, question: str | TurnQuestion, collection: str,
                          as_json: bool, show_trace: bool = False) -> None:
    """``shelfwise ask --conversation ID "..."``: the next turn of a stored conversation (or of a new one)."""
    conv = open_conversation(shelf, spec, collection)
    if conv.collection != collection and conv.turns:
        err(f"Note: conversation {conv.id} is about collection {conv.collection!r}; asking there.")
    asked = answer_turn(shelf, conv, question, as_json=as_json, show_trace=show_trace)
    if asked is None:
        sys.exit(2)
    conv = asked
    if not as_json:
        err(f"(conversation {conv.id}, turn {len(conv.turns)}: continue it with --conversation {conv.id})")


COMMANDS = (chat_cmd,)
