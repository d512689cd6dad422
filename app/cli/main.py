"""The ``shelfwise`` command line: a thin click layer over the store and the engine.

This module is the entry point (``shelfwise = shelfwise.app.cli.main:main``): it holds the library commands
(``ingest``, ``status``, ``tree``, ``search``) and adds the commands of the other modules to the group. Adding
commands from another module: create ``app/cli/<name>.py`` that does ::

    from shelfwise.app.cli.group import open_store

    @click.command("ask")
    @click.pass_context
    def ask_cmd(ctx: click.Context, ...) -> None:
        '''Answer a question.  Example: shelfwise ask "How do I claim travel meals?"'''
        store = open_store(ctx)

    COMMANDS = (ask_cmd,)

and add the module to :data:`COMMAND_MODULES` at the end of this file. Command modules import
:mod:`shelfwise.app.cli.group`, never this module, so the imports have no cycle. Import heavy dependencies
(llama.cpp, Qt) inside the command function, not at module level. Every command's help must contain an example
(``tests/test_cli.py`` checks).
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from shelfwise.app.cli import answer, doctor, indexing, query
from shelfwise.app.cli.group import main, open_store
from shelfwise.app.cli.indexing import (
    embedder_or_none,
    index_collection,
    index_status,
    start_background_index,
    status_lines,
)
from shelfwise.app.cli.progress import IngestLine
from shelfwise.app.cli.scope_options import scope_error, scope_from, scope_options
from shelfwise.core.ingestion.indexing import index_state
from shelfwise.core.ingestion.runner import IngestReport, ingest
from shelfwise.core.navigation.alongside import EmbedAlongside
from shelfwise.core.store.db import NodeRow, Store


# --------------------------------------------------------------------------- ingest
def _print_summary(report: IngestReport) -> None:
    c = report.counts
    click.echo(
        f"Collection '{report.collection}': {c['added']} added, {c['updated']} updated, {c['skipped']} unchanged, "
        f"{c['removed']} removed, {c['failed']} failed in {report.seconds:.1f} s"
        + (" (cancelled)" if report.cancelled else "")
    )
    if report.pages:
        rate = report.pages / report.seconds if report.seconds > 0 else 0.0
        click.echo(f"Parsed {report.pages} pages/slides/sheets into {report.passages} passages ({rate:.0f} pages/s)")
    failed = report.failed
    if failed:
        click.echo(f"{len(failed)} file(s) without an up-to-date tree:")
        for r in failed:
            click.echo(f"  {r.status:<9} {r.path}: {r.message}")


@main.command("ingest")
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
    store = open_store(ctx)
    if store.read_only:
        raise click.ClickException(f"cannot add files: {store.why_read_only()}")
    bar = IngestLine(sys.stderr)
    index_now = not no_index and not (no_wait and store.path is not None)
    embedder = embedder_or_none() if index_now else None
    try:
        along = None
        if embedder is not None:  # vectors for the files parsed so far while the next ones parse
            along = EmbedAlongside(store.path, store.collection(collection).id, embedder)
            along.start()
        try:
            report = ingest(store, list(paths), collection, progress=bar, force=force,
                            after_write=along.written if along is not None else None)
        finally:
            bar.finish()
            if along is not None:
                along.stop()
        if as_json:
            click.echo(json.dumps({
                "collection": report.collection, "seconds": report.seconds, "cancelled": report.cancelled,
                "counts": report.counts, "pages": report.pages, "results": [asdict(r) for r in report.results],
            }, ensure_ascii=False, indent=2))
        else:
            _print_summary(report)
        coll = store.find_collection(collection)
        changed = any(report.counts[a] for a in ("added", "updated", "removed"))
        if not no_index and coll is not None and (changed or index_state(store, coll.id).unfinished):
            if no_wait and store.path is not None:
                pid = start_background_index(store, collection)
                click.echo(f"Searchable now (by words; vectors fill in as they are made). Indexing in the "
                           f"background (pid {pid}): shelfwise status shows how far.", err=True)
            else:
                index_collection(store, collection, quiet=as_json, embedder=embedder)
    finally:
        if embedder is not None:
            embedder.close()
    ctx.exit(1 if report.failed else 0)


# --------------------------------------------------------------------------- status
@main.command("status")
@click.option("--collection", "-c", default=None, help="Only this collection.")
@click.option("--json", "as_json", is_flag=True, help="JSON: the documents and each collection's indexing.")
@click.pass_context
def status_cmd(ctx: click.Context, collection: str | None, as_json: bool) -> None:
    """Show every document in the library with its status (ok, error, needs_ocr) and size of its tree, and how
    far each collection's index is (nodes still without vectors; a background indexer's stage, done/total, ETA).

    Exit code 3 if the library is damaged (see shelfwise doctor).
    "ok (OCR)" marks a document whose text was (partly) read by OCR; ``--json`` gives ``ocr_pages``.
    ``--json`` prints {"documents": [...], "indexes": [...]}.

    \b
    Example:
        shelfwise status --json | jq '.documents[] | select(.status != "ok") | .path'
        shelfwise status --json | jq '.indexes[] | {collection, pending, done, total, eta_seconds}'
    """
    store = open_store(ctx)
    names = {c.id: c.name for c in store.collections()}
    cid = _collection_id(store, collection)
    docs = store.documents(cid)
    if as_json:
        documents = [{
            "id": d.id, "collection": names.get(d.collection_id, ""), "path": d.path, "status": d.status,
            "message": d.message, "format": d.format, "title": d.title, "pages": d.pages, "sections": d.sections,
            "passages": d.passages, "size": d.size, "ingested_at": d.ingested_at, "warnings": d.warnings,
            "ocr_pages": d.ocr_pages,
        } for d in docs]
        indexes = [asdict(c) for c in index_status(store) if collection is None or c.collection == collection]
        click.echo(json.dumps({"documents": documents, "indexes": indexes}, ensure_ascii=False, indent=2))
        ctx.exit(3 if store.damage else 0)
    if not docs:
        click.echo("No documents yet. Add some with: shelfwise ingest PATH")
        ctx.exit(3 if store.damage else 0)
    click.echo(f"{'STATUS':<9} {'FORMAT':<6} {'PAGES':>5} {'SECT':>5} {'PASS':>6}  PATH")
    for d in docs:
        status = f"{d.status} (OCR)" if d.ocr_pages else d.status  # the message says how many pages
        click.echo(f"{status:<9} {d.format:<6} {d.pages:>5} {d.sections:>5} {d.passages:>6}  {d.path}")
        if d.message:
            click.echo(f"{'':<36}{d.message}")
    by = store.stats().documents_by_status
    click.echo(f"{len(docs)} documents: " + ", ".join(f"{n} {s}" for s, n in sorted(by.items())))
    for line in status_lines(store):
        click.echo(line)
    if store.damage:
        ctx.exit(3)


def resolved_collection(store: Store, name: str | None) -> int | None:
    """The collection a scope was resolved in (``default`` when none is named)."""
    found = store.find_collection(name or "default")
    return found.id if found is not None else None


def _collection_id(store: Store, name: str | None) -> int | None:
    if name is None:
        return None
    found = store.find_collection(name)
    if found is None:
        known = ", ".join(c.name for c in store.collections()) or "none yet"
        raise click.UsageError(f"No collection named {name!r} (collections: {known}).")
    return found.id


# --------------------------------------------------------------------------- tree
def _label(node: NodeRow, width: int = 70) -> str:
    text = node.title or node.description or node.text
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def _tree_json(node: NodeRow, kids: dict[int, list[NodeRow]], max_depth: int | None) -> dict[str, Any]:
    children = kids.get(node.id, []) if max_depth is None or node.depth < max_depth else []
    return {
        "id": node.id, "kind": node.kind, "title": node.title, "description": node.description,
        "document_id": node.document_id, "location": node.location.to_dict() | {"label": node.location.label()},
        "children": [_tree_json(c, kids, max_depth) for c in children],
    }


@main.command("tree")
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
    store = open_store(ctx)
    cid = _collection_id(store, collection)
    roots = [c for c in store.collections() if cid is None or c.id == cid]
    kids: dict[int, list[NodeRow]] = {}
    nodes: dict[int, NodeRow] = {}
    for n in store.iter_nodes(collection_id=cid):
        nodes[n.id] = n
        if n.parent_id is not None and (depth is None or n.depth <= depth):
            kids.setdefault(n.parent_id, []).append(n)
    for lst in kids.values():
        lst.sort(key=lambda n: (n.ordinal, n.id))
    tops = [nodes[c.root_node_id] for c in roots if c.root_node_id in nodes]
    if as_json:
        click.echo(json.dumps([_tree_json(t, kids, depth) for t in tops], ensure_ascii=False, indent=2))
        return
    if not tops:
        click.echo("The library is empty. Add documents with: shelfwise ingest PATH")
    stack = list(reversed(tops))
    while stack:
        n = stack.pop()
        loc = n.location.label()
        click.echo(f"{'  ' * n.depth}{n.kind:<10} {_label(n)}" + (f"  [{loc}]" if loc else ""))
        stack.extend(reversed(kids.get(n.id, [])))


# --------------------------------------------------------------------------- search
@main.command("search")
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
    from shelfwise.core.navigation.scope import ScopeError, prepare_question

    store = open_store(ctx)
    scope = scope_from(in_paths, types, since, until)
    cid = _collection_id(store, collection)
    try:
        prepared = prepare_question(store, collection or "default", " ".join(words), scope)
    except ScopeError as exc:
        raise scope_error(exc) from exc
    resolved = prepared.resolved
    if resolved is not None and resolved.empty:
        click.echo(resolved.no_match_message())
        return
    query = prepared.text
    hits = store.search_hits(query, limit=limit, kinds=kinds, collection_id=cid if resolved is None else
                             (cid or resolved_collection(store, collection)),
                             document_ids=resolved.document_ids if resolved is not None else None,
                             match=prepared.parsed.lexical_match())
    if resolved is not None and resolved.excluded_passages:
        hits = [h for h in hits if h.node.id not in resolved.excluded_passages]
    paths: dict[int, str] = {}
    rows: list[dict[str, Any]] = []
    for rank, h in enumerate(hits, 1):
        did = h.node.document_id
        if did is not None and did not in paths:
            doc = store.document(did)
            paths[did] = doc.path if doc else ""
        rows.append({
            "rank": rank, "score": round(h.score, 4), "node_id": h.node.id, "kind": h.node.kind,
            "path": paths.get(did, "") if did is not None else "", "title": h.node.title,
            "heading_path": h.node.heading_path, "location": h.node.location.to_dict(),
            "location_label": h.node.location.label(), "snippet": " ".join(h.snippet.split()),
        })
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not rows:
        click.echo(f"No matches for {query!r}.")
        return
    for r in rows:
        where = " > ".join([Path(r["path"]).name, *r["heading_path"]])
        loc = f"  [{r['location_label']}]" if r["location_label"] else ""
        click.echo(f"{r['rank']:>3}. {r['score']:7.2f}  {where}{loc}")
        click.echo(f"     {r['snippet']}")


# --------------------------------------------------------------------------- other command modules
COMMAND_MODULES = (query, answer, doctor, indexing)
for _module in COMMAND_MODULES:
    for _command in _module.COMMANDS:
        main.add_command(_command)
