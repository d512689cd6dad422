"""The ``shelfwise`` click group and what every command shares: the database option, the per-invocation
:class:`CliState` (the library, a :class:`Shelf` opened on first use and closed when the command ends), and the
settings a command runs with. Command modules import this module; :mod:`shelfwise.app.cli.main` adds their
commands to the group.
"""

from __future__ import annotations

import atexit
import errno
import io
import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

import click

from shelfwise.core import environment
from shelfwise.core.api.models import BackendError
from shelfwise.core.api.reads import StoreError
from shelfwise.core.paths import DataDirError
from shelfwise.core.settings import EMBEDDER_NAMES, Settings, declared, load_settings
from shelfwise.core.shelf import Shelf

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 110}


@dataclass
class CliState:
    """What the group passes to its commands: the database path, and the library (a :class:`Shelf`) once opened."""

    db: Path | None
    verbose: bool = False
    embedder: str | None = None  # --embedder: minilm, embeddinggemma or a GGUF path (None: the library's own)
    settings_noted: bool = False  # a damaged settings file was reported (once per command)
    _shelf: Shelf | None = None

    def library_path(self) -> Path:
        if self.db is None:
            from shelfwise.core.paths import default_db

            self.db = default_db()
        return self.db

    def library(self, settings: Settings, create: bool = False) -> Shelf:
        """The library, opened on first use with ``settings`` (its models load when a command first needs them).
        Only a command that adds to it (``create``) may make a new one: a read-only command on a missing library
        says so and exits 2, creating no file and no folder."""
        if self._shelf is None:
            db = self.library_path()
            if not create and str(db) != ":memory:" and not Path(db).exists():
                no_library(db)
            try:
                self._shelf = Shelf(replace(settings, db_path=Path(db)))
            except StoreError as exc:
                raise click.ClickException(str(exc)) from exc
            warn_if_degraded(self._shelf)
        return self._shelf

    def close(self) -> None:
        if self._shelf is not None:
            self._shelf.close()
            self._shelf = None


def warn_if_degraded(shelf: Shelf) -> None:
    """On stderr: a damaged library (and the offer to rebuild it), or a read-only one."""
    state = shelf.state
    if state.damage:
        click.echo(
            f"Warning: the library {state.path} is damaged (SQLite quick_check: {state.damage}).\n"
            "It is open read-only: you can browse and search what is still readable, and answers may miss what was "
            "lost.\nYour files are the truth: rebuild it from them, keeping collections, settings and "
            f"conversations, with: shelfwise --db {state.path} doctor --rebuild", err=True)
    elif state.read_only:
        click.echo(f"Note: {state.reason}; browsing and searching only.", err=True)


class ShelfwiseGroup(click.Group):
    """Every command: a library that cannot be read ends with a message (exit 1), never a traceback; whatever it
    prints passes :class:`~shelfwise.app.cli.shown.TerminalStream` (the one output door)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        from shelfwise.app.cli import started
        from shelfwise.app.cli.shown import TerminalStream

        started()  # Ctrl-C is a KeyboardInterrupt again (while importing it ended the program with one line)
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = TerminalStream(sys.stdout), TerminalStream(sys.stderr)
        try:
            return super().main(*args, **kwargs)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            sys.stdout, sys.stderr = saved

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The program itself (the console script; tests call :meth:`main` through click's runner). A question's
        process (``ask``) ends as soon as its command has: see :func:`end_process`."""
        from shelfwise.app.cli.early import group_options

        _ENDS_WITH_COMMAND[0] = group_options(sys.argv[1:])[0] in FAST_EXIT
        try:
            return self.main(*args, **kwargs)
        except SystemExit as done:
            if (done.code is None or isinstance(done.code, int)) and _ENDS_WITH_COMMAND[0]:
                end_process(done.code or 0)
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (StoreError, BackendError, DataDirError) as exc:  # BackendError: a model missing or not loading
            raise click.ClickException(str(exc)) from exc
        except sqlite3.DatabaseError as exc:
            state = ctx.find_object(CliState)
            db = state.db if state is not None and state.db is not None else "the library"
            if "disk is full" in str(exc):
                raise click.ClickException(f"the disk holding {db} is full ({exc}): free some space and run the "
                                           "command again; nothing stored was lost") from exc
            raise click.ClickException(
                f"could not read {db}: {exc}. Check it with: shelfwise doctor (and rebuild it from your files with "
                "shelfwise doctor --rebuild)"
            ) from exc


FAST_EXIT = ("ask",)  # the commands whose process ends without the interpreter's teardown (end_process)
_ENDS_WITH_COMMAND = [False]  # this process is the program running a FAST_EXIT command (set by __call__)
_LEFT_FOR_EXIT: list[Shelf] = []  # the shelves whose models the process's end frees (command_shelf)


@contextmanager
def command_shelf(settings: Settings) -> Iterator[Shelf]:
    """A :class:`Shelf` for one command, closed when the command ends. When the process ends with the command (the
    program running a :data:`FAST_EXIT` command: :func:`end_process` follows), only its library is closed, cleanly;
    its models stay loaded for the kernel to free with the rest of the process, since llama.cpp freeing the encoder
    (EmbeddingGemma's 262,144-token vocabulary, one string at a time) costs a question 0.03-0.05 s for nothing
    (docs/scale.md, "Session 24"). Elsewhere (tests through click's runner, the window) everything is freed."""
    shelf = Shelf(settings)
    try:
        yield shelf
    finally:
        if _ENDS_WITH_COMMAND[0]:
            shelf.close(free_models=False)
            _LEFT_FOR_EXIT.append(shelf)
        else:
            shelf.close()


def end_process(code: int) -> NoReturn:
    """End the process with ``code`` now that the command is done: its library closed (with its clean-close record),
    the exit handlers run (the log's, the encoder preload's) and the output flushed, without the interpreter's
    teardown, which frees every module's objects one by one before the kernel frees the memory anyway (what that
    cost a question: docs/scale.md, "Session 22")."""
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            pass
    os._exit(code)


def no_library(db: Path) -> None:
    """Say there is no library at ``db`` (and how to make one), and end the command with exit code 2."""
    click.echo(f"No library at {db} yet. Add documents first: shelfwise --db {db} ingest PATH", err=True)
    raise click.exceptions.Exit(2)


def open_library(ctx: click.Context, create: bool = False) -> Shelf:
    """The library of this invocation, a :class:`Shelf` with the invocation's settings (:func:`settings_for`),
    opened on first use and closed when the command ends (commands do not close it); ``create``: a command that
    adds to the library may make a new one (see :meth:`CliState.library`)."""
    state = ctx.find_object(CliState)
    if state is None:  # a command invoked outside the group (tests)
        state = ctx.ensure_object(CliState)
    return state.library(settings_for(ctx), create)


def require_library(ctx: click.Context) -> None:
    """For a read-only command that opens the library itself (``ask``): stop with a message when it is missing."""
    state = ctx.find_object(CliState)
    db = state.library_path() if state is not None else Path(settings_for(ctx).db_path or "")
    if str(db) != ":memory:" and not Path(db).exists():
        no_library(Path(db))


@click.group(cls=ShelfwiseGroup, context_settings=CONTEXT)
@click.option(
    "--db", type=click.Path(dir_okay=False, path_type=Path), envvar=environment.DB, default=None,
    help="Library database file. Default: library.db in the user data dir (SHELFWISE_HOME overrides the dir; "
    "the SHELFWISE_DB variable sets this option).",
)
@click.option("--embedder", envvar=environment.EMBEDDER, default=None, metavar="NAME|GGUF|URL",
              help="Sentence encoder that judges every level. Not given: the library's own (a new library gets "
              "embeddinggemma, multilingual, installed by packaging/setup.sh). minilm is faster and reads English "
              "only; an embedding GGUF's path works too, and so does an encoder server's http://host:port "
              "(llama-server --embedding: docs/server.md). Naming another one than the library's switches it: the "
              "next index run (shelfwise index) re-embeds it; until then it is searched by its words and the "
              "vectors made so far. The SHELFWISE_EMBEDDER variable sets it too.")
@click.option("--verbose", "-v", is_flag=True, help="Also print llama.cpp's own log (and debug messages) on stderr; "
              "it always goes to the log file (shelfwise.log in the data dir's logs folder).")
@click.pass_context
def main(ctx: click.Context, db: Path | None, verbose: bool, embedder: str | None) -> None:
    """Shelfwise: find answers in your own documents, offline.

    Every command reads your settings file (settings.json in the data dir, or the file SHELFWISE_SETTINGS names;
    the window's Settings write it); options given on the command line override it for that run.

    \b
    Example:
        shelfwise --db library.db ingest ~/Documents/handbooks
        shelfwise --db library.db search "travel meal allowance"
        shelfwise --db english.db --embedder minilm ingest ~/Documents/english-only
    """
    from shelfwise.core.api.models import tune_openmp

    tune_openmp()  # before any command loads llama.cpp
    from shelfwise.app.cli.shown import raw_stream

    for stream in (sys.stdout, sys.stderr):  # file names that are not UTF-8 print as \udce9, not a traceback
        raw = raw_stream(stream)
        if isinstance(raw, io.TextIOWrapper):
            raw.reconfigure(errors="backslashreplace")
    from shelfwise.core.api.models import setup_logging

    setup_logging(verbose)
    if embedder is not None and embedder.lower() not in EMBEDDER_NAMES and not Path(embedder).expanduser().is_file() \
            and not embedder.lower().startswith(("http://", "https://")):
        raise click.BadParameter(f"{embedder!r} is neither {' nor '.join(EMBEDDER_NAMES)} nor a GGUF file nor an "
                                 "encoder server's http:// URL",
                                 param_hint="--embedder")
    if db is not None:
        _usable_library_path(db)
    state = CliState(db, verbose, embedder)
    ctx.obj = state
    ctx.call_on_close(state.close)


def _usable_library_path(db: Path) -> None:
    """A ``--db`` that no command could open, said as what it is (SQLite's own word for it was "unable to open
    database file", with advice to rebuild): a loop of symbolic links."""
    try:
        os.stat(db)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise click.BadParameter(f"{str(db)!r} is a symbolic link loop (the link leads back to itself); "
                                     "give the library's file, or a new file name", param_hint="--db") from None


def settings_for(ctx: click.Context, **changes: Any) -> Settings:
    """The user's settings file (``load_settings``, ``core/settings.py``; a damaged one: the defaults and a note on
    stderr) on this invocation's database, with the options the user gave overriding it for this run (None = not
    given)."""
    state = ctx.find_object(CliState)
    db = state.db if state else None
    if db is None:
        from shelfwise.core.paths import default_db

        db = default_db()
    loaded = load_settings(None, Settings(db_path=Path(db), embedder_path=state.embedder if state else None))
    if loaded.problem and not (state is not None and state.settings_noted):
        err(f"Note: {loaded.problem}")
        if state is not None:
            state.settings_noted = True
    return replace(loaded.settings, **{k: v for k, v in changes.items() if v is not None})


def err(msg: str) -> None:
    """A message on stderr."""
    click.echo(msg, err=True)


def collection_id(shelf: Shelf, name: str | None) -> int | None:
    """The id of the collection ``name`` (None: all); a usage error naming the collections when there is none."""
    if name is None:
        return None
    found = shelf.find_collection(name)
    if found is None:
        known = ", ".join(c.name for c in shelf.collections()) or "none yet"
        raise click.UsageError(f"No collection named {name!r} (collections: {known}).")
    return found.id


def setting_help(key: str) -> str:
    """The help of a setting's option: its declaration's (``DECLARED`` in ``core/settings.py``), which the window's
    Settings dialog shows as the tooltip."""
    return declared(key).help


# options several commands share
READOUTS = click.Choice(list(declared("readout").choices))
JUDGE_OPTION = click.option("--judge", default=None, help=setting_help("judge"))
