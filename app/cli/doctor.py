"""``shelfwise doctor``: check the library in full (``check_library``, ``core/api/doctor.py``, which rebuilds a word
index out of step with the passages), rebuild a damaged one from the source files (built beside it, swapped in only
when complete), name the old libraries kept beside it and put one back (``--restore``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from shelfwise.app.cli.group import CliState
from shelfwise.app.cli.shown import shown
from shelfwise.core.api.doctor import (
    LibraryCheck,
    RebuildFailed,
    RebuildRefused,
    RebuildReport,
    Salvage,
    check_library,
    kept_copies,
    rebuild,
    rebuild_running,
    remove_leftovers,
    restore,
    salvage,
)
from shelfwise.core.api.indexing import IngestProgress
from shelfwise.core.api.reads import StoreError
from shelfwise.core.shelf import Shelf


def _file_line(p: IngestProgress) -> None:
    if p.status != "working":
        note = f": {shown(p.message)}" if p.message and p.status != "ok" else ""
        click.echo(f"[{p.done}/{p.total}] {p.status:<9} {shown(Path(p.path).name)}{note}", err=True)


@click.command("doctor")
@click.option("--rebuild", "do_rebuild", is_flag=True,
              help="Rebuild a damaged library from its source files, keeping its collections, settings and "
                   "conversations (the old file is kept beside it as .damaged-*).")
@click.option("--force", is_flag=True, help="With --rebuild: rebuild a healthy library too (the old file is kept "
              "beside it as .replaced-*).")
@click.option("--yes", "-y", is_flag=True, help="Do not ask before rebuilding.")
@click.option("--no-index", is_flag=True, help="After a rebuild, skip embedding and calibration for now.")
@click.option("--restore", "restore_name", default=None, metavar="FILE",
              help="Put back an old library kept beside this one by a rebuild (a .replaced-* or .damaged-* file that "
                   "doctor names); the library it replaces is kept the same way.")
@click.pass_context
def doctor_cmd(ctx: click.Context, do_rebuild: bool, force: bool, yes: bool, no_index: bool,
               restore_name: str | None) -> None:
    """Check the library with SQLite's full integrity_check (and the search index's own check); offer to rebuild
    a damaged one from your files, keeping its collections, settings and conversations. A search index out of step
    with the passages (the pages themselves intact) is rebuilt from them at once, and said. Exit code 0 when
    healthy, 3 when damaged. A healthy library is rebuilt only with --force.

    \b
    Example:
        shelfwise doctor
        shelfwise doctor --rebuild --yes
        shelfwise doctor --rebuild --force --yes
        shelfwise doctor --restore library.db.replaced-20261206-031500
    """
    try:
        _doctor(ctx, do_rebuild, force, yes, no_index, restore_name)
    except KeyboardInterrupt:
        if ctx.meta.get("shelfwise.rebuilt"):
            click.echo("Interrupted after the rebuild: the new library is in place; its index is finished by the next "
                       "question or `shelfwise index`.", err=True)
        else:
            click.echo("Interrupted before anything was changed: the library is as it was.", err=True)
        ctx.exit(130)


def _doctor(ctx: click.Context, do_rebuild: bool, force: bool, yes: bool, no_index: bool,
            restore_name: str | None) -> None:
    db = _library_path(ctx)
    if restore_name is not None:
        _restore(db, restore_name)
        return
    checked = _check(db)
    _print_check(db, checked, do_rebuild)
    diag = checked.diagnosis
    if diag.ok and not (do_rebuild and force):
        click.echo("The library is healthy." + (" Nothing was rebuilt (to rebuild it from its files anyway: "
                                                 f"shelfwise --db {shown(db)} doctor --rebuild --force)."
                                                 if do_rebuild else ""))
        return
    found = salvage(db)
    _agree_to_rebuild(ctx, db, found, do_rebuild, yes)
    if checked.read_only and not checked.damage:
        raise click.ClickException(f"cannot rebuild: {checked.read_only_reason}")
    report = _rebuild(ctx, db, found, diag.ok)
    ctx.meta["shelfwise.rebuilt"] = True
    _print_rebuilt(db, report, diag.ok)
    if not no_index:
        from shelfwise.app.cli.group import settings_for
        from shelfwise.app.cli.index import index_collection
        with Shelf(settings_for(ctx)) as shelf:
            for name in report.collections:
                index_collection(shelf, name, quiet=False)


def _library_path(ctx: click.Context) -> Path:
    """The library ``--db`` names, else the default one."""
    state = ctx.find_object(CliState)
    db = state.db if state is not None and state.db is not None else None
    if db is None:
        from shelfwise.core.paths import default_db

        db = default_db()
    return Path(db)


def _check(db: Path) -> LibraryCheck:
    """The library checked in full, after saying what is around it (a rebuild running, a rebuild's leftovers
    removed); a clear message when there is no library or it cannot be read as one."""
    if not db.exists():
        earlier = kept_copies(db)
        if earlier:  # the library is gone but a rebuild kept an earlier one beside it
            raise click.ClickException(f"No library at {shown(db)}. An earlier one is kept beside it: "
                                       f"{shown(earlier[-1].name)}; to put it back: shelfwise --db {shown(db)} doctor "
                                       f"--restore {shown(earlier[-1].name)}")
        raise click.ClickException(f"No library at {db}.")
    if rebuild_running(db):
        click.echo(f"A rebuild of {shown(db)} is running in another process; the library stays as it is until the "
                   "new one is complete.")
    for left in remove_leftovers(db):
        click.echo(f"Removed {shown(left.name)}: the partial file of a rebuild that was interrupted (the library was "
                   "never replaced by it).")
    try:
        return check_library(db)
    except StoreError as exc:
        raise click.ClickException(
            f"{exc}. It cannot be rebuilt from itself; ingest your folders into a new one."
        ) from exc


def _print_check(db: Path, checked: LibraryCheck, do_rebuild: bool) -> None:
    """What the check found: both checks, the counts, unreadable tables, old libraries kept beside it."""
    diag, reason = checked.diagnosis, checked.read_only_reason
    click.echo(f"Library: {db}")
    click.echo(f"  integrity_check: {'; '.join(diag.integrity)}")
    if checked.words_rebuilt:
        click.echo(f"  search index check: out of step with the passages ({checked.words_rebuilt}); rebuilt from "
                   f"them, checked again: {diag.fts}")
    else:
        click.echo(f"  search index check: {diag.fts}")
    click.echo(f"  {diag.collections} collections, {diag.documents} documents")
    if diag.tables:
        click.echo("  tables: " + ", ".join(f"{t.name} {t.rows}" for t in diag.tables))
    for u in diag.unreadable:
        click.echo(f"  unreadable: {u}")
    for kept in kept_copies(db):
        click.echo(f"  kept beside it: {shown(kept.name)} (an earlier library, {kept.stat().st_size / 2**20:.1f} MB); "
                   f"to put it back: shelfwise --db {shown(db)} doctor --restore {shown(kept.name)}")
    if reason and not do_rebuild:
        click.echo(f"  read-only: {reason}")


def _agree_to_rebuild(ctx: click.Context, db: Path, found: Salvage, do_rebuild: bool, yes: bool) -> None:
    """Returns when the rebuild may go ahead (asked for, or agreed to at the terminal); exits with 3 otherwise."""
    n = found.n_documents
    if not do_rebuild:
        click.echo(f"The library is damaged. It lists {n} source files in {len(found.collections)} collections; "
                   "a rebuild ingests them again and keeps the collections, settings and "
                   f"{len(found.conversations[1])} conversations.")
        if not (sys.stdin.isatty() and click.confirm("Rebuild it now?", default=False)):
            click.echo(f"To rebuild: shelfwise --db {db} doctor --rebuild")
            ctx.exit(3)
    elif not yes and not click.confirm(f"Rebuild {db} from its {n} source files?", default=True):
        ctx.exit(3)


def _rebuild(ctx: click.Context, db: Path, found: Salvage, healthy: bool) -> RebuildReport:
    """The rebuild, its failures said as one line each (the library then as it was)."""
    try:
        return rebuild(db, progress=_file_line, found=found, healthy=healthy)
    except RebuildRefused as exc:
        raise click.ClickException(f"cannot rebuild: {exc}") from None
    except (RebuildFailed, OSError) as exc:
        raise click.ClickException(f"the rebuild failed: {exc}. The library is as it was: {_unchanged(db)}") from None
    except KeyboardInterrupt:
        click.echo(f"Interrupted: the rebuild stopped before it was complete. The library is as it was: "
                   f"{_unchanged(db)}", err=True)
        ctx.exit(130)


def _print_rebuilt(db: Path, report: RebuildReport, healthy: bool) -> None:
    added = sum(r.counts["added"] for r in report.ingest_reports)
    failed = sum(len(r.failed) for r in report.ingest_reports)
    click.echo(f"Rebuilt {db}: {len(report.collections)} collections ({', '.join(report.collections)}), "
               f"{added} documents ingested, {failed} failed, {len(report.missing)} missing, "
               f"{report.settings_kept} settings kept, {report.conversations_kept} conversations "
               f"({report.turns_kept} turns) kept.")
    click.echo(f"The {'previous' if healthy else 'damaged'} file is kept as {shown(report.damaged_copy)}")
    for p in report.missing:
        click.echo(f"  missing: {shown(p)}")
    for p in report.problems:
        click.echo(f"  could not read: {p}")


def _unchanged(db: Path) -> str:
    """What the live library still holds, said after a rebuild that did not complete."""
    try:
        found = salvage(db)
    except Exception as exc:  # the message must not end in a traceback
        return f"{shown(db)} ({exc})"
    return (f"{shown(db)}, {found.n_documents} documents in {len(found.collections)} collections, "
            f"{len(found.conversations[1])} conversations.")


def _restore(db: Path, name: str) -> None:
    kept = Path(name) if Path(name).is_absolute() or Path(name).parent != Path(".") else db.with_name(name)
    known = kept_copies(db)
    if kept.resolve() not in {k.resolve() for k in known}:
        listing = ", ".join(k.name for k in known) or "none"
        raise click.ClickException(f"{shown(name)} is not an old library kept beside {shown(db)} (kept: "
                                   f"{shown(listing)})")
    try:
        aside = restore(db, kept)
    except (RebuildRefused, OSError) as exc:
        raise click.ClickException(f"cannot restore: {exc}") from None
    click.echo(f"Restored {shown(kept.name)} as {shown(db)}: {_unchanged(db)}")
    if aside != db:
        click.echo(f"The library it replaces is kept as {shown(aside.name)}")


COMMANDS = (doctor_cmd,)
