"""Reading the library as the front ends show it: where it is and whether it is writable (``state``), its
collections and documents, ``shelfwise status`` and ``shelfwise tree`` as one call each, word search, export, and
the preview's look-ups. Nothing here loads a model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from shelfwise.core.api.opened import OpenLibrary
from shelfwise.core.indexing.encoder import encoder_for
from shelfwise.core.indexing.state import CollectionIndex, index_status
from shelfwise.core.navigation.lookup import LibraryLookup, NodeText
from shelfwise.core.navigation.scope import Scope, prepare_question
from shelfwise.core.navigation.trace import Candidate, Hit
from shelfwise.core.store.export import LibraryExport, export_rows
from shelfwise.core.store.on_disk import on_disk
from shelfwise.core.store.tables import TableGrid, table_grid
from shelfwise.core.store.types import KEPT_SUFFIX, CollectionRow, DocumentRow, NodeRow, StoreError

# What this part's calls return, and the library's row types and errors the front ends show with them.
__all__ = [
    "KEPT_SUFFIX",
    "CollectionRow",
    "DocumentRow",
    "DocumentStatus",
    "LibraryExport",
    "LibraryState",
    "LibraryStatus",
    "LibraryTree",
    "NodeRow",
    "NodeText",
    "Reads",
    "StoreError",
    "TableGrid",
    "WordHit",
    "WordSearch",
]


@dataclass(frozen=True)
class WordHit:
    """One passage (or section, document) a word search found, with its document's path."""

    rank: int
    score: float
    node: NodeRow
    path: str
    snippet: str  # the matched terms in [ ]


@dataclass(frozen=True)
class WordSearch:
    """What :meth:`Shelf.search_words` found for ``query`` (the text without its filters); ``no_match`` says why
    nothing was searched (a scope that admits no document)."""

    query: str
    hits: list[WordHit]
    no_match: str = ""


@dataclass(frozen=True)
class LibraryState:
    """The library file itself, as the front ends show it: where it is and whether (and why) writes are refused."""

    path: Path | None  # None: an in-memory library
    read_only: bool
    reason: str  # why it was opened read-only ("" when writable)
    damage: str  # SQLite quick_check's finding when it is damaged ("" when sound)
    why_read_only: str  # why writes are refused, with what to do ("" when writable)


@dataclass(frozen=True)
class DocumentStatus:
    """A stored document with its collection's name and its file now (``on_disk``: "" as read, else "missing",
    "empty" or "changed"; always "" for a document that was not stored ok)."""

    document: DocumentRow
    collection: str
    on_disk: str


@dataclass(frozen=True)
class LibraryStatus:
    """What ``shelfwise status`` shows: the documents (of one collection, or all) and the library's damage ("" when
    sound); then, each read when first asked (so a damaged library lists the documents it can read before a part it
    cannot read fails), the library's documents counted by status, every collection's index and the library's
    sentence encoder."""

    documents: list[DocumentStatus]
    damage: str
    _counts: Callable[[], dict[str, int]] = field(repr=False, compare=False)
    _indexes: Callable[[], list[CollectionIndex]] = field(repr=False, compare=False)
    _encoder: Callable[[], str] = field(repr=False, compare=False)

    @cached_property
    def by_status(self) -> dict[str, int]:
        return self._counts()

    @cached_property
    def indexes(self) -> list[CollectionIndex]:
        return self._indexes()

    @cached_property
    def encoder(self) -> str:
        return self._encoder()


@dataclass(frozen=True)
class LibraryTree:
    """The table-of-contents tree: the collections' root nodes and each node's children in order (down to the
    depth asked for)."""

    roots: list[NodeRow]
    children: dict[int, list[NodeRow]]

    def kids(self, node: NodeRow) -> list[NodeRow]:
        return self.children.get(node.id, [])


class Reads(OpenLibrary):
    """The read calls of :class:`~shelfwise.core.shelf.Shelf`."""

    @property
    def state(self) -> LibraryState:
        """Where the library is and whether (and why) it is read-only or damaged."""
        store = self.store
        return LibraryState(store.path, store.read_only, store.read_only_reason, store.damage, store.why_read_only())

    def collections(self) -> list[CollectionRow]:
        """Every collection, in the order they were made."""
        return self.store.collections()

    def find_collection(self, name: str) -> CollectionRow | None:
        """The collection named ``name``, None when there is none."""
        return self.store.find_collection(name)

    def documents(self, collection: str | None = None) -> list[DocumentRow]:
        """The documents of the collection named ``collection`` (None: of every collection; none for a collection
        that does not exist), by collection and path."""
        if collection is None:
            return self.store.documents()
        found = self.store.find_collection(collection)
        return self.store.documents(found.id) if found is not None else []

    def status(self, collection: str | None = None) -> LibraryStatus:
        """``shelfwise status``'s rows: the documents of ``collection`` (None: all) with their files now and the
        damage; the whole library's documents counted by status, every collection's index and the encoder are read
        when the front end first asks for them (:class:`LibraryStatus`)."""
        store = self.store
        names = {c.id: c.name for c in store.collections()}
        rows = [DocumentStatus(d, names.get(d.collection_id, ""),
                               on_disk(d.path, d.size, d.mtime) if d.status == "ok" else "")
                for d in self.documents(collection)]
        return LibraryStatus(rows, store.damage, lambda: store.stats().documents_by_status, self.index_status,
                             lambda: self.library_encoder)

    def tree(self, collection: str | None = None, depth: int | None = None) -> LibraryTree:
        """The table-of-contents tree of ``collection`` (None: every collection; empty for one that does not
        exist), its nodes down to ``depth`` (0 = collections, 1 = documents, ...; None: all)."""
        cid = None
        if collection is not None:
            found = self.store.find_collection(collection)
            if found is None:
                return LibraryTree([], {})
            cid = found.id
        roots = [c for c in self.store.collections() if cid is None or c.id == cid]
        children: dict[int, list[NodeRow]] = {}
        nodes: dict[int, NodeRow] = {}
        for n in self.store.iter_nodes(collection_id=cid):
            nodes[n.id] = n
            if n.parent_id is not None and (depth is None or n.depth <= depth):
                children.setdefault(n.parent_id, []).append(n)
        for kids in children.values():
            kids.sort(key=lambda n: (n.ordinal, n.id))
        return LibraryTree([nodes[c.root_node_id] for c in roots if c.root_node_id in nodes], children)

    def index_status(self) -> list[CollectionIndex]:
        """Each collection's index: how far, and whether an indexer works on it (``shelfwise status``)."""
        return index_status(self.store)

    def is_empty(self) -> bool:
        """Whether the library holds no document yet."""
        return LibraryLookup(self.store).is_empty()

    def passage_context(self, hit: Hit) -> list[str]:
        """The passages around ``hit`` (same parent) for the window's preview; nothing for a PDF (shown as its
        page)."""
        return LibraryLookup(self.store).context(hit)

    def shown_for(self, candidate: Candidate, hits: Sequence[Hit] = ()) -> Hit | NodeText:
        """What the preview opens for a row of the walk: a passage as a hit (from the search's ``hits``, else from
        the library; an outline's heading as its first passage), any other node as the text the model read."""
        return LibraryLookup(self.store).for_candidate(candidate, hits)

    def table_grid(self, table_id: int, around: Sequence[int] = ()) -> TableGrid | None:
        """A stored table for the preview's grid (the rows around ``around`` when it is big; docs/tables.md)."""
        return table_grid(self.store.conn, table_id, around)

    def passage_hit(self, node_id: int, document_id: int) -> Hit | None:
        """A stored passage of a document as a :class:`Hit` (score 0), None when either has left the library."""
        node = self.store.node(node_id)
        doc = self.store.document(document_id)
        if node is None or doc is None:
            return None
        return Hit(node_id=node.id, document_id=doc.id, text=node.text, score=0.0, path=doc.path, title=doc.title,
                   heading_path=list(node.heading_path), location=node.location)

    def export(self, collection: str | None = None) -> LibraryExport:
        """The library's documents, sections and passages as rows (of ``collection`` when given; KeyError when
        there is no such collection), for ``shelfwise export``."""
        cid = None
        if collection is not None:
            found = self.store.find_collection(collection)
            if found is None:
                raise KeyError(collection)
            cid = found.id
        return export_rows(self.store.conn, cid)

    def search_words(self, text: str, collection: str | None = None, *, kinds: Sequence[str] = ("passage",),
                     limit: int = 10, scope: Scope | None = None) -> WordSearch:
        """Lexical search (FTS5, BM25) for ``text`` as typed: "a phrase" must occur, -word must not, inline
        filters and ``scope`` (the CLI's options) limit it to some documents (ScopeError for a malformed one); a
        scope that admits nothing is said in ``no_match`` instead of searching elsewhere."""
        store = self.store
        found = store.find_collection(collection) if collection is not None else None
        cid = found.id if found is not None else None
        prepared = prepare_question(store, collection or "default", text, scope)
        resolved = prepared.resolved
        if resolved is not None and resolved.empty:
            return WordSearch(prepared.text, [], resolved.no_match_message())
        if resolved is not None and cid is None:  # the collection the scope was resolved in
            default = store.find_collection(collection or "default")
            cid = default.id if default is not None else None
        hits = store.search_hits(prepared.text, limit=limit, kinds=kinds, collection_id=cid,
                                 document_ids=resolved.document_ids if resolved is not None else None,
                                 match=prepared.parsed.lexical_match())
        if resolved is not None and resolved.excluded_passages:
            hits = [h for h in hits if h.node.id not in resolved.excluded_passages]
        paths: dict[int, str] = {}
        rows = []
        for rank, h in enumerate(hits, 1):
            did = h.node.document_id
            if did is not None and did not in paths:
                doc = store.document(did)
                paths[did] = doc.path if doc else ""
            rows.append(WordHit(rank, h.score, h.node, paths.get(did, "") if did is not None else "",
                                " ".join(h.snippet.split())))
        return WordSearch(prepared.text, rows)

    @property
    def library_encoder(self) -> str:
        """The sentence encoder this library is built with (what its rankings read)."""
        return encoder_for(self.store, None)
