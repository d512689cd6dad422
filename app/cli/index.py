"""Indexing in the CLI: finish a collection's index with progress on stderr, in the background if asked
(``ingest --no-wait`` starts ``shelfwise index`` as a detached process), and never wait silently before a question
(say that an ingest or a background indexer is running and how far it is, or finish the index with progress)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import click

from shelfwise.app.cli.group import open_library
from shelfwise.app.cli.progress import IndexLine, describe_progress
from shelfwise.core.api.indexing import (
    INDEX_WAIT_SECONDS,
    BeforeQuestion,
    CollectionIndex,
    IndexProgress,
    IndexState,
)
from shelfwise.core.shelf import Shelf


def index_collection(shelf: Shelf, collection: str, quiet: bool, *, wait: float = 0.0,
                     on_wait: Callable[[], None] | None = None, hold_ingest_lock: bool = False) -> bool:
    """Embed new nodes, rebuild topic clusters if the documents changed, and self-calibrate, as the library's only
    indexer (:meth:`Shelf.index`), with progress (no generative model needed: calibration of the embedding and
    lexical evidence takes seconds). False when another process indexes the library."""
    def starting(state: IndexState) -> None:
        if state.unfinished and not quiet:
            click.echo(f"Indexing '{collection}': {state.without_vectors} nodes to embed, then topics and "
                       "calibration.", err=True)

    done = shelf.index(collection, progress=None if quiet else IndexLine(), wait=wait, on_wait=on_wait,
                       on_start=starting, hold_ingest_lock=hold_ingest_lock)
    if done is None:
        return False
    if done and not quiet:
        click.echo(f"Indexed: {done['embedded']} nodes embedded, {done['clusters']} topic clusters.", err=True)
    return True


def before_question(shelf: Shelf, collection: str) -> None:
    """What a question does with the index first (:meth:`Shelf.before_question`), said on stderr."""
    shelf.before_question(collection, said=say_before_question, progress=IndexLine())


def say_before_question(what: BeforeQuestion) -> None:
    if what.kind == "busy":
        note = (f"; {what.without_vectors} sections and passages not embedded yet are found by their words only"
                if what.without_vectors else "")
        doing = (f"The library is being indexed in the background ({describe_progress(what.progress)})"
                 if what.progress is not None else "An ingest is running on this library")
        click.echo(f"{doing}: answering from the {what.documents} documents stored so far{note}.", err=True)
    elif what.kind == "read_only":
        click.echo(f"The library is read-only and its index is unfinished ({what.without_vectors} nodes "
                   "without vectors): answering from what is indexed.", err=True)
    elif what.kind == "finishing":
        click.echo(f"Finishing the index of '{what.collection}' before answering (it was interrupted or is new): "
                   f"{what.without_vectors} nodes to embed, then topics and calibration.", err=True)
    elif what.kind == "disk_full":
        click.echo(f"The disk holding the library is full ({what.error}): answering from what is indexed; free "
                   "some space to let indexing finish.", err=True)


# --------------------------------------------------------------------------- background indexing


def index_after_ingest(shelf: Shelf, collection: str, quiet: bool) -> None:
    """The index step of ``ingest``: wait while another process (a second ingest, ``shelfwise index``) indexes
    this library, saying so, then finish what is left (often nothing: the other one indexed these files too)."""
    def waiting() -> None:
        click.echo(f"Another process is indexing this library; waiting for it to finish (it indexes the files "
                   f"just stored in '{collection}' too), then finishing what is left.", err=True)

    if not index_collection(shelf, collection, quiet=quiet, wait=INDEX_WAIT_SECONDS, on_wait=waiting):
        click.echo("The other indexer is still running: this collection is finished by it, or by the next "
                   "question (see: shelfwise status).", err=True)


def start_background_index(shelf: Shelf, collection: str, embedder: str | None = None) -> int:
    """Start ``shelfwise --db DB index -c COLLECTION`` detached from this terminal (its output: a log file next to
    the log file) and record it as the collection's indexer. Returns its pid."""
    from shelfwise.core.api.models import log_file

    db = shelf.state.path
    coll = shelf.find_collection(collection)
    if db is None or coll is None:
        raise click.ClickException("nothing to index in the background")
    with open(log_file().with_name("index-background.log"), "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", "from shelfwise.app.cli.main import main; main()", "--db", str(db),
             *(["--embedder", embedder] if embedder else []), "index", "--collection", collection, "--quiet"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True, close_fds=True,
        )
    shelf.mark_indexer(collection, proc.pid)
    return proc.pid


def index_lines(indexes: list[CollectionIndex]) -> list[str]:
    """One line per collection whose index is not finished: how far, and whether something is working on it."""
    lines = []
    for c in indexes:
        if not c.unfinished:
            continue
        if c.running and c.stage is not None:
            p = IndexProgress(c.stage, c.done or 0, c.total or 0, c.eta_seconds)
            lines.append(f"Index '{c.collection}': {describe_progress(p)} (pid {c.pid}); questions meanwhile are "
                         "answered from what is indexed.")
        else:
            lines.append(f"Index '{c.collection}': {c.pending} nodes without vectors, not being indexed "
                         "now; the next question finishes it (or: shelfwise index).")
    return lines


@click.command("index")
@click.option("--collection", "-c", default="default", show_default=True, help="Collection to index.")
@click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")
@click.pass_context
def index_cmd(ctx: click.Context, collection: str, quiet: bool) -> None:
    """Finish a collection's index now: embed what has no vector, topic clusters, calibration.

    Runs by itself after ingest; ingest --no-wait starts it in the background, and shelfwise status shows how far
    it is. A second indexer of the same library exits at once.

    \b
    Example:
        shelfwise index --collection work
    """
    shelf = open_library(ctx)
    state = shelf.state
    if state.read_only:
        raise click.ClickException(f"cannot index: {state.why_read_only}")
    # questions asked meanwhile answer from what exists (the ingest lock is held)
    if not index_collection(shelf, collection, quiet=quiet, hold_ingest_lock=True) and not quiet:
        click.echo("Another process is indexing this library; see: shelfwise status", err=True)


COMMANDS = (index_cmd,)
