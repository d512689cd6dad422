"""``shelfwise search``: plain BM25 keyword search (SQLite FTS5), the baseline the navigator is compared with."""

from __future__ import annotations

from pathlib import Path

import click

from shelfwise.app.cli.group import collection_id, open_library
from shelfwise.app.cli.scope_options import scope_error, scope_from, scope_options
from shelfwise.app.cli.shown import json_text, shown


@click.command("search")
@click.argument("words", nargs=-1, required=True)
@click.option("--limit", "-n", type=click.IntRange(min=1), default=10, show_default=True, help="Results to show.")
@click.option("--collection", "-c", default=None, help="Only this collection.")
@click.option("--kind", "kinds", multiple=True, default=("passage",), show_default=True,
              type=click.Choice(["document", "section", "passage"]), help="Node kinds to search (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Results as a JSON list.")
@scope_options
@click.pass_context
def search_cmd(
    ctx: click.Context, words: tuple[str, ...], limit: int, collection: str | None, kinds: tuple[str, ...],
    as_json: bool, in_paths: tuple[str, ...], types: tuple[str, ...], since: str | None, until: str | None,
) -> None:
    """Lexical search (SQLite FTS5, BM25 ranking) over passages: the baseline the navigator is compared with.

    "a phrase" must occur, -word must not; --in/--type/--since/--until (or in:, type:, since:, until: among the
    words) limit it to some documents.

    \b
    Example:
        shelfwise search "password reset policy" --limit 5
        shelfwise search '"annual leave" -parental' --in handbook.pdf
    """
    from shelfwise.core.api.asking import ScopeError

    shelf = open_library(ctx)
    scope = scope_from(in_paths, types, since, until)
    collection_id(shelf, collection)  # a usage error naming the collections when there is no such one
    try:
        found = shelf.search_words(" ".join(words), collection, kinds=kinds, limit=limit, scope=scope)
    except ScopeError as exc:
        raise scope_error(exc) from exc
    if found.no_match:
        click.echo(found.no_match)
        return
    query = found.query
    if as_json:
        click.echo(json_text([{
            "rank": h.rank, "score": round(h.score, 4), "node_id": h.node.id, "kind": h.node.kind, "path": h.path,
            "title": h.node.title, "heading_path": h.node.heading_path, "location": h.node.location.to_dict(),
            "location_label": h.node.location.label(), "snippet": h.snippet,
        } for h in found.hits], indent=2))
        return
    if not found.hits:
        click.echo(f"No matches for {query!r}.")
        return
    for h in found.hits:
        where = " > ".join(shown(x) for x in [Path(h.path).name, *h.node.heading_path])
        label = h.node.location.label()
        loc = f"  [{label}]" if label else ""
        click.echo(f"{h.rank:>3}. {round(h.score, 4):7.2f}  {where}{loc}")
        click.echo(f"     {h.snippet}")


COMMANDS = (search_cmd,)
