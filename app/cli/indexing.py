"""Indexing in the CLI: finish a collection's index with progress on stderr, and never wait silently before a
question (say that an ingest is running, or that the index is being finished and how far it is)."""

from __future__ import annotations

import sys
from typing import Any, TextIO

import click

from shelfwise.core.ingestion.indexing import index_state, ingest_running
from shelfwise.core.navigation.finish import IndexProgress, finish_index
from shelfwise.core.store.db import Store


class IndexLine:
    """``Indexing: embedding 120/3400`` on stderr: redrawn on a terminal, every 10% otherwise."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.shown = -1

    def __call__(self, p: IndexProgress) -> None:
        if p.stage == "embedding":
            tenth = int(10 * p.done / max(1, p.total))
            if self.tty:
                self.stream.write(f"\rIndexing: embedding {p.done}/{p.total}")
            elif tenth != self.shown:
                self.stream.write(f"Indexing: embedding {p.done}/{p.total}\n")
                self.shown = tenth
        elif p.stage == "calibrating":
            self.stream.write(("\r" if self.tty else "") + "Indexing: topics and calibration" +
                              ("    " if self.tty else "\n"))
        elif p.stage == "done" and self.tty:
            self.stream.write("\r" + " " * 60 + "\r")
        self.stream.flush()


def index_collection(store: Store, collection: str, quiet: bool, embedder: Any = None) -> None:
    """Embed new nodes, rebuild topic clusters if the documents changed, and self-calibrate, with progress (no
    generative model needed: calibration of the embedding and lexical evidence takes seconds)."""
    from shelfwise.core.models.embedder import Embedder

    coll = store.find_collection(collection)
    if coll is None or store.read_only:
        return
    state = index_state(store, coll.id)
    if state.unfinished and not quiet:
        click.echo(f"Indexing '{collection}': {state.without_vectors} nodes to embed, then topics and "
                   "calibration.", err=True)
    progress = None if quiet else IndexLine()
    if embedder is not None:
        done = finish_index(store, coll.id, embedder, progress=progress)
    else:
        with Embedder() as emb:
            done = finish_index(store, coll.id, emb, progress=progress)
    if not quiet:
        click.echo(f"Indexed: {done['embedded']} nodes embedded, {done['clusters']} topic clusters.", err=True)


def before_question(shelf: Any, collection: str) -> None:
    """What a question does with the index first, said on stderr: answer from what exists while an ingest runs;
    otherwise finish unfinished indexing with progress (a no-op when the index is current)."""
    store: Store = shelf.store
    coll = store.find_collection(collection)
    if coll is None:
        return
    state = index_state(store, coll.id)
    if ingest_running(store.path):
        docs = sum(1 for d in store.documents(coll.id) if d.status == "ok")
        note = (f"; {state.without_vectors} sections and passages not embedded yet are found by their words only"
                if state.without_vectors else "")
        click.echo(f"An ingest is running on this library: answering from the {docs} documents stored so "
                   f"far{note}.", err=True)
        return
    if store.read_only:
        if state.unfinished:
            click.echo(f"The library is read-only and its index is unfinished ({state.without_vectors} nodes "
                       "without vectors): answering from what is indexed.", err=True)
        return
    if state.unfinished:
        click.echo(f"Finishing the index of '{collection}' before answering (it was interrupted or is new): "
                   f"{state.without_vectors} nodes to embed, then topics and calibration.", err=True)
        shelf.refresh(collection, progress=IndexLine())
    else:
        shelf.refresh(collection)
