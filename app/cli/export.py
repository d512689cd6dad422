"""``shelfwise export``: a library's documents, sections and passages as JSON or CSV (``Shelf.export``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from shelfwise.app.cli.group import open_library


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
    shelf = open_library(ctx)
    try:
        rows = shelf.export(collection)
    except KeyError:
        known = ", ".join(c.name for c in shelf.store.collections()) or "none yet"
        raise click.UsageError(f"No collection named {collection!r} (collections: {known}).") from None
    if fmt == "csv":
        assert out is not None
        for path in rows.write_csv(out):
            click.echo(f"wrote {path}", err=True)
    elif out is None:
        rows.write_json(sys.stdout)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as fh:
            rows.write_json(fh)
        click.echo(f"wrote {out}: {len(rows.documents)} documents, {len(rows.sections)} sections, "
                   f"{len(rows.passages)} passages", err=True)


COMMANDS = (export_cmd,)
