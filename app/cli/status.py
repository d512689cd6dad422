"""``shelfwise status``: every document with its status, and how far each collection's index is."""

from __future__ import annotations

from dataclasses import asdict

import click

from shelfwise.app.cli.group import collection_id, open_library
from shelfwise.app.cli.index import index_lines
from shelfwise.app.cli.shown import json_text, shown
from shelfwise.core.api.indexing import describe
from shelfwise.core.api.reads import KEPT_SUFFIX

STATE_LINES = {
    "missing": "the file is no longer there (deleted or moved): answers still quote it; ingest its folder again "
               "to remove it",
    "empty": "the file is now empty: answers quote the version read before; ingest it again once it is restored",
    "changed": "the file changed since it was read: answers quote the version read before; ingest it again",
    "unreadable": "the file cannot be read now (no permission on it or a folder above it): answers quote the "
                  "version read before; fix its permissions, then ingest again",
}


@click.command("status")
@click.option("--collection", "-c", default=None, help="Only this collection.")
@click.option("--json", "as_json", is_flag=True, help="JSON: the documents and each collection's indexing.")
@click.pass_context
def status_cmd(ctx: click.Context, collection: str | None, as_json: bool) -> None:
    """Show every document in the library with its status (ok, error, needs_ocr) and size of its tree, and how
    far each collection's index is (nodes still without vectors; a background indexer's stage, done/total, ETA).

    LANG is each document's languages, detected when it is indexed (main first; "?" not detected yet, "-" no text to
    tell). Exit code 3 if the library is damaged (see shelfwise doctor).
    "ok (OCR)" marks a document whose text was (partly) read by OCR; ``--json`` gives ``ocr_pages``. "stale" marks
    one whose file changed or was emptied since it was read (the library keeps the version it read), "gone" one
    whose file is no longer there, "stale" too one that cannot be read now (permissions; ``--json``: ``file``).
    ``--json`` prints {"documents": [...], "indexes": [...], "embedder": NAME}; the last line names the sentence
    encoder the library is built with.

    \b
    Example:
        shelfwise status --json | jq '.documents[] | select(.status != "ok") | .path'
        shelfwise status --json | jq '.indexes[] | {collection, pending, done, total, eta_seconds}'
    """
    shelf = open_library(ctx)
    collection_id(shelf, collection)  # a usage error naming the collections when there is no such one
    library = shelf.status(collection)
    if as_json:
        documents = [{
            "id": d.id, "collection": row.collection, "path": d.path, "status": d.status,
            "message": d.message, "format": d.format, "title": d.title, "pages": d.pages, "sections": d.sections,
            "passages": d.passages, "size": d.size, "ingested_at": d.ingested_at, "warnings": d.warnings,
            "ocr_pages": d.ocr_pages, "retry": d.retry, "languages": d.languages,
            "file": (row.on_disk or "as read") if d.status == "ok" else "",
        } for row in library.documents for d in (row.document,)]
        indexes = [asdict(c) for c in library.indexes if collection is None or c.collection == collection]
        click.echo(json_text({"documents": documents, "indexes": indexes, "embedder": library.encoder}, indent=2))
        ctx.exit(3 if library.damage else 0)
    docs = [row.document for row in library.documents]
    if not docs:
        click.echo("No documents yet. Add some with: shelfwise ingest PATH")
        ctx.exit(3 if library.damage else 0)
    click.echo(f"{'STATUS':<9} {'FORMAT':<6} {'PAGES':>5} {'SECT':>5} {'PASS':>6} {'LANG':<5}  PATH")
    for row in library.documents:
        d, state = row.document, row.on_disk
        status = f"{d.status} (OCR)" if d.ocr_pages else d.status  # the message says how many pages
        if state or d.message.endswith(KEPT_SUFFIX):
            status = "gone" if state == "missing" else "stale"  # not a plain ok: the file is not what was read
        click.echo(f"{status:<9} {shown(d.format):<6} {d.pages:>5} {d.sections:>5} {d.passages:>6} "
                   f"{language_label(d.languages):<5}  {shown(d.path)}")
        if d.message:
            click.echo(f"{'':<42}{shown(d.message)}")
        if state:
            click.echo(f"{'':<42}{STATE_LINES[state]}")
        if d.status != "ok":
            click.echo(f"{'':<42}({d.retry_label()})")
        elif d.warnings:
            extra = f" (+{len(d.warnings) - 1} more warnings: status --json)" if len(d.warnings) > 1 else ""
            click.echo(f"{'':<42}warning: {shown(d.warnings[0])}{extra}")
    by = library.by_status
    click.echo(f"{len(docs)} documents: " + ", ".join(f"{n} {s}" for s, n in sorted(by.items())))
    warned = sum(1 for d in docs if d.status == "ok" and d.warnings)
    retrying = sum(1 for d in docs if d.status != "ok" and d.retry)
    if warned:
        click.echo(f"{warned} stored with warnings (shown under each; status --json has them all).")
    if retrying:
        click.echo(f"{retrying} failed for a reason that may pass; the next ingest tries them again.")
    for line in index_lines(library.indexes):
        click.echo(line)
    click.echo(f"Sentence encoder: {describe(library.encoder)}")
    if library.damage:
        ctx.exit(3)


def language_label(languages: list[str] | None) -> str:
    """``de``, ``en,fr``; ``?`` before detection, ``-`` when the document has too little text to tell."""
    if languages is None:
        return "?"
    return ",".join(languages) or "-"


COMMANDS = (status_cmd,)
