"""``shelfwise export``: a library's documents, sections and passages as JSON or CSV (``Shelf.export``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from shelfwise.app.cli.group import open_library
from shelfwise.app.cli.shown import json_text, raw_stream, shown


@click.command("export")
@click.option("--format", "fmt", type=click.Choice(["json", "csv"]), default="json", show_default=True,
              help="json: one object with the three lists; csv: documents.csv, sections.csv and passages.csv.")
@click.option("--collection", "-c", default=None, help="Only this collection (default: all).")
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None, metavar="FILE|DIR",
              help="JSON: the file to write (default: stdout). CSV: the folder for the three files (required).")
@click.pass_context
def export_cmd(ctx: click.Context, fmt: str, collection: str | None, out: Path | None) -> None:
    """Export the library's documents, sections and passages (text, heading, page, location) as JSON or CSV.

    \b
    Example:
        shelfwise export > library.json
        shelfwise export --collection handbooks --out handbooks.json
        shelfwise export --format csv --out exported/
        shelfwise export | jq '.passages[] | select(.page == 3) | .text'
    """
    if fmt == "csv" and out is None:
        raise click.UsageError("--format csv writes three files: give the folder with --out DIR")
    if out is not None and fmt == "json" and out.is_dir():
        raise click.UsageError(f"{out} is a folder: give a file name for the JSON (or --format csv)")
    if out is not None and fmt == "csv" and out.exists() and not out.is_dir():
        raise click.UsageError(f"{shown(out)} is a file: --format csv writes three files into a folder; give a "
                               "folder with --out DIR")
    shelf = open_library(ctx)
    try:
        rows = shelf.export(collection)
    except KeyError:
        known = ", ".join(c.name for c in shelf.collections()) or "none yet"
        raise click.UsageError(f"No collection named {collection!r} (collections: {known}).") from None
    try:
        if fmt == "csv":
            assert out is not None
            for path in rows.write_csv(out):
                click.echo(f"wrote {shown(path)}", err=True)
        elif out is None:
            stdout = raw_stream(sys.stdout)
            if stdout.isatty():  # a person reads it: control and bidi characters as JSON escapes (still valid JSON)
                stdout.write(json_text(rows.as_dict()) + "\n")
            else:  # a pipe or a file: exactly what json.dump writes, nothing filtered for display
                rows.write_json(stdout)
            stdout.flush()
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            rows.write_json_file(out)
            click.echo(f"wrote {shown(out)}: {len(rows.documents)} documents, {len(rows.sections)} sections, "
                       f"{len(rows.passages)} passages", err=True)
    except OSError as exc:  # a full disk, /dev/full, a path under a file, no permission: the old file is kept
        where = shown(exc.filename) if exc.filename else shown(out) if out is not None else "stdout"
        raise click.ClickException(f"cannot write {where}: {exc.strerror or exc}; nothing was replaced") from None


COMMANDS = (export_cmd,)
