"""``shelfwise tree``: the table-of-contents tree, as an outline or nested JSON."""

from __future__ import annotations

import click

from shelfwise.app.cli.group import collection_id, open_library
from shelfwise.app.cli.shown import json_text, shown
from shelfwise.core.api.reads import LibraryTree, NodeRow


def _label(node: NodeRow, width: int = 70) -> str:
    text = node.title or node.description or node.text
    text = " ".join(text.split())
    return shown(text if len(text) <= width else text[: width - 1] + "\u2026")


def _tree_json(node: NodeRow, tree: LibraryTree, max_depth: int | None) -> dict[str, object]:
    children = tree.kids(node) if max_depth is None or node.depth < max_depth else []
    return {
        "id": node.id, "kind": node.kind, "title": node.title, "description": node.description,
        "document_id": node.document_id, "location": node.location.to_dict() | {"label": node.location.label()},
        "children": [_tree_json(c, tree, max_depth) for c in children],
    }


@click.command("tree")
@click.option("--collection", "-c", default=None, help="Only this collection (default: all).")
@click.option("--depth", "-d", type=click.IntRange(min=0), default=None,
              help="Show levels down to this depth (0 = collections, 1 = documents, ...).")
@click.option("--json", "as_json", is_flag=True, help="Nested JSON instead of an indented outline.")
@click.pass_context
def tree_cmd(ctx: click.Context, collection: str | None, depth: int | None, as_json: bool) -> None:
    """Print the table-of-contents tree: collection, topics, documents, sections, passages.

    \b
    Example:
        shelfwise tree --collection default --depth 3
    """
    shelf = open_library(ctx)
    collection_id(shelf, collection)  # a usage error naming the collections when there is no such one
    tree = shelf.tree(collection, depth)
    tops = tree.roots
    if as_json:
        click.echo(json_text([_tree_json(t, tree, depth) for t in tops], indent=2))
        return
    if not tops:
        click.echo("The library is empty. Add documents with: shelfwise ingest PATH")
    stack = list(reversed(tops))
    while stack:
        n = stack.pop()
        loc = n.location.label()
        click.echo(f"{'  ' * n.depth}{n.kind:<10} {_label(n)}" + (f"  [{loc}]" if loc else ""))
        stack.extend(reversed(tree.kids(n)))


COMMANDS = (tree_cmd,)
