"""``shelfwise ingest``: add files and folders to the library, then index them (or start indexing in the
background)."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

import click

from shelfwise.app.cli.group import CliState, open_library
from shelfwise.app.cli.index import index_after_ingest, start_background_index
from shelfwise.app.cli.progress import IngestLine
from shelfwise.app.cli.shown import json_text, shown
from shelfwise.core.api.indexing import IngestReport

FIRST_LINES = 5  # warnings and refused entries: this many printed, then a count (--json keeps all)


def _first_lines(rows: list[str], more: str) -> None:
    for line in rows[:FIRST_LINES]:
        click.echo(line)
    if len(rows) > FIRST_LINES:
        click.echo(f"  ... and {len(rows) - FIRST_LINES} more ({more})")


def warning_line(path: str, warnings: list[str]) -> str:
    """``  warning   report.pdf: only the first 5,000 pages were read (+2 more)``: one line per document."""
    extra = f" (+{len(warnings) - 1} more)" if len(warnings) > 1 else ""
    return f"  {'warning':<9} {shown(path)}: {shown(warnings[0])}{extra}"


def retry_note(retry: bool) -> str:
    return " [may pass: the next ingest tries it again]" if retry else ""


def _print_summary(report: IngestReport) -> None:
    c = report.counts
    ignored = f", {c['ignored']} not files" if c["ignored"] else ""
    ignored += f", {c['duplicate']} reached twice (stored once)" if c["duplicate"] else ""
    click.echo(
        f"Collection '{shown(report.collection)}': {c['added']} added, {c['updated']} updated, {c['skipped']} "
        f"unchanged, {c['removed']} removed, {c['failed']} failed{ignored} in {report.seconds:.1f} s"
        + (" (cancelled)" if report.cancelled else "")
    )
    if report.pages:
        rate = report.pages / report.seconds if report.seconds > 0 else 0.0
        click.echo(f"Parsed {report.pages} pages/slides/sheets into {report.passages} passages ({rate:.0f} pages/s)")
    warned = [r for r in report.warned if r.action in ("added", "updated")]
    if warned:
        click.echo(f"{len(warned)} file(s) stored with warnings (part of a file not read, an encoding guessed):")
        _first_lines([warning_line(r.path, r.warnings) for r in warned], "ingest --json or status lists them all")
    failed = report.failed
    if failed:
        click.echo(f"{len(failed)} file(s) without an up-to-date tree:")
        for r in failed:
            click.echo(f"  {r.status:<9} {shown(r.path)}: {shown(r.message)}{retry_note(r.retry)}")
    ignored_rows = report.ignored
    if ignored_rows:
        click.echo(f"{len(ignored_rows)} entries of the folders given are not regular files and were not read:")
        for r in ignored_rows:
            click.echo(f"  {'not read':<9} {shown(r.path)}: {shown(r.message)}")
    for r in (r for r in report.results if r.action == "duplicate"):
        click.echo(f"  {'twice':<9} {shown(r.path)}: {shown(r.message)}")


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--collection", "-c", default="default", show_default=True, help="Collection to add the files to.")
@click.option("--force", is_flag=True, help="Re-parse files even if they are unchanged.")
@click.option("--json", "as_json", is_flag=True, help="Print the per-file report as JSON instead of a summary.")
@click.option("--no-index", is_flag=True,
              help="Skip embedding, topic clustering and calibration now (done before the first question).")
@click.option("--no-wait", is_flag=True,
              help="Return when parsing is done and index in the background (shelfwise status shows how far); "
                   "search and ask work at once, by words first, with vectors as they arrive.")
@click.pass_context
def ingest_cmd(ctx: click.Context, paths: tuple[Path, ...], collection: str, force: bool, as_json: bool,
               no_index: bool, no_wait: bool) -> None:
    """Add files and folders (PDF, Word, PowerPoint, Excel, Markdown, text) to the library.

    Folders are walked recursively; unchanged files are skipped, changed ones replaced, and files that have
    disappeared from an ingested folder are removed. Exit code 1 if any file could not be ingested.

    \b
    Example:
        shelfwise ingest ~/Documents/policies report.pdf --collection work
        shelfwise ingest ~/Documents/manuals --no-wait && shelfwise ask "How do I reset the printer?"
    """
    shelf = open_library(ctx, create=True)
    library = shelf.state
    if library.read_only:
        raise click.ClickException(f"cannot add files: {library.why_read_only}")
    bar = IngestLine(sys.stderr)
    index_now = not no_index and not (no_wait and library.path is not None)
    state = ctx.find_object(CliState)
    try:
        report = shelf.ingest(list(paths), collection, progress=bar, force=force, embed=index_now, index=False)
    finally:
        bar.finish()
    if as_json:
        click.echo(json_text({
            "collection": report.collection, "seconds": report.seconds, "cancelled": report.cancelled,
            "counts": report.counts, "pages": report.pages, "results": [asdict(r) for r in report.results],
        }, indent=2))
    else:
        _print_summary(report)
    coll = shelf.find_collection(collection)
    changed = any(report.counts[a] for a in ("added", "updated", "removed"))
    if not no_index and coll is not None and (changed or shelf.index_unfinished(collection)):
        if no_wait and library.path is not None:
            pid = start_background_index(shelf, collection, state.embedder if state else None)
            click.echo(f"Searchable now (by words; vectors fill in as they are made). Indexing in the "
                       f"background (pid {pid}): shelfwise status shows how far.", err=True)
        else:
            index_after_ingest(shelf, collection, quiet=as_json)
    ctx.exit(1 if report.failed else 0)


COMMANDS = (ingest_cmd,)
