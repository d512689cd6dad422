"""Store look-ups a front end needs to show what a search found: the text around a passage for the preview, a
walk row turned into a passage hit, and what to show for a node that is not a passage. Reads only; the window
calls them through the facade on its UI thread (``Shelf.passage_context``, ``Shelf.shown_for``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from shelfwise.core.navigation.trace import Candidate, Hit
from shelfwise.core.store.db import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NodeText:
    """A non-passage node for the preview: a title, the description the model read, the document's path."""

    title: str
    text: str
    path: str | None


class LibraryLookup:
    def __init__(self, store: Store) -> None:
        self.store = store

    def is_empty(self) -> bool:
        return not self.store.documents()

    def context(self, hit: Hit) -> list[str]:
        """The passage's neighbours (same parent), for formats shown as text; nothing for a PDF (shown as a page)."""
        if hit.path.lower().endswith(".pdf"):
            return []
        try:
            node = self.store.node(hit.node_id)
            if node is None or node.parent_id is None:
                return [hit.text]
            siblings = [n.text for n in self.store.children(node.parent_id) if n.kind == "passage" and n.text]
            return siblings or [hit.text]
        except Exception:  # the preview still shows the passage itself
            log.exception("no context for node %s", hit.node_id)
            return [hit.text]

    def hit_for_node(self, node_id: int, score: float = 0.0) -> Hit | None:
        node = self.store.node(node_id)
        if node is None or node.document_id is None:
            return None
        doc = self.store.document(node.document_id)
        if doc is None:
            return None
        return Hit(node.id, doc.id, node.text, score, doc.path, doc.title, node.heading_path, node.location)

    def first_passage_hit(self, node_id: int) -> Hit | None:
        """A heading (or document) node as the hit of its first passage, at the heading's own place."""
        node = self.store.node(node_id)
        if node is None or node.document_id is None:
            return None
        first = self.store.first_passage_after(node.document_id, node.id)
        hit = self.hit_for_node(first) if first is not None else None
        if hit is None or node.kind != "section":
            return hit
        heading = [*node.heading_path, node.title] if node.heading_path[-1:] != [node.title] else node.heading_path
        return Hit(hit.node_id, hit.document_id, hit.text, hit.score, hit.path, hit.title, heading,
                   node.location if node.location.label() else hit.location)

    def for_candidate(self, candidate: Candidate, hits: Sequence[Hit] = ()) -> Hit | NodeText:
        """A row of the walk: a passage as a hit (from the search's hits, else from the store), any other node as
        the text the model read."""
        hit = next((h for h in hits if h.node_id == candidate.node_id), None)
        if hit is None and candidate.source == "outline":  # a heading of an outline: its first passage, its place
            hit = self.first_passage_hit(candidate.node_id)
        if hit is None and candidate.kind == "passage":
            hit = self.hit_for_node(candidate.node_id, candidate.score)
        if hit is not None:
            return hit
        node = self.store.node(candidate.node_id)
        doc = self.store.document(node.document_id) if node and node.document_id else None
        return NodeText(f"{candidate.title} ({candidate.kind})", candidate.description, doc.path if doc else None)
