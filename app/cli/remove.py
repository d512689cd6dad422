"""``shelfwise remove``: take files or folders out of the library (``Shelf.remove_paths``), as the window's
"Remove from library" does."""

from __future__ import annotations

from pathlib import Path

import click

from shelfwise.app.cli.group import collection_id, open_library
from shelfwise.app.cli.shown import shown


@click.command("remove")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--collection", "-c", default="default", show_default=True,
              help="Collection to remove the documents from.")
@click.option("--no-index", is_flag=True,
              help="Do not bring the index up to date now (the next ingest, index run or question does).")
@click.pass_context
def remove_cmd(ctx: click.Context, paths: tuple[Path, ...], collection: str, no_index: bool) -> None:
    """Remove the documents stored from these files or folders (everything ingested under a folder) from the
    library, whether or not the files are still on disk; the files themselves are not touched, and ingesting them
    again brings them back. The collection's index is brought up to date (unless --no-index). Exit code 1 when
    nothing stored matched.

    \b
    Example:
        shelfwise remove ~/Documents/old-handbooks
        shelfwise remove report.pdf --collection work
    """
    shelf = open_library(ctx)
    if shelf.state.read_only:
        raise click.ClickException(f"cannot remove documents: {shelf.state.why_read_only}")
    collection_id(shelf, collection)  # a usage error naming the collections when there is no such one
    removed = shelf.remove_paths(list(paths), collection, index=not no_index)
    if not removed:
        named = ", ".join(shown(str(p)) for p in paths)
        click.echo(f"Nothing in collection {collection!r} was ingested from {named}; "
                   "shelfwise status lists what is stored.", err=True)
        ctx.exit(1)
    click.echo(f"Removed {len(removed)} document{'s' if len(removed) != 1 else ''} from {collection!r}:")
    for d in removed:
        click.echo(f"  {shown(d.path)}")


COMMANDS = (remove_cmd,)
