"""An in-memory, read-only snapshot of one collection's tree for fast navigation.

Passages are laid out in depth-first order, so every node's subtree is one contiguous range of passage rows: a
node's "evidence beneath it" (best passage similarity, lexical hits) is a slice, computed with one vectorised pass
per query. Built from the store once and cached until the collection changes (``Store`` meta key
``tree_version:<collection_id>``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from shelfwise.core.store.db import Store
from shelfwise.ingest.model import Location


@dataclass
class NodeInfo:
    id: int
    kind: str
    title: str
    description: str
    parent: int | None
    document_id: int | None
    heading_path: list[str]
    location: Location
    text: str = ""
    children: list[int] = field(default_factory=list)
    span: tuple[int, int] = (0, 0)  # passage rows [start, end) of the subtree
    vec_row: int = -1  # row in Snapshot.node_vecs (-1 = no vector)


@dataclass
class Snapshot:
    collection_id: int
    root: int
    nodes: dict[int, NodeInfo]
    passage_ids: np.ndarray  # (n_passages,) node ids in DFS order
    passage_vecs: np.ndarray  # (n_passages, dim) float32, L2-normalised (zeros where missing)
    node_vecs: np.ndarray  # (n_nodes_with_vec, dim) description vectors of non-passage nodes
    version: str = ""
    row_of: dict[int, int] = field(default_factory=dict)  # passage node id -> row
    row_parent: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # (n_passages,) parent node id
    doc_languages: dict[int, list[str]] = field(default_factory=dict)  # document id -> its languages, main first

    def children(self, node_id: int) -> list[NodeInfo]:
        return [self.nodes[c] for c in self.nodes[node_id].children]

    def ancestors(self, node_id: int) -> list[NodeInfo]:
        out = []
        p = self.nodes[node_id].parent
        while p is not None and p in self.nodes:
            out.append(self.nodes[p])
            p = self.nodes[p].parent
        return out

    def document_of(self, node_id: int) -> NodeInfo | None:
        n = self.nodes[node_id]
        while n.kind not in ("document",) and n.parent is not None:
            n = self.nodes[n.parent]
        return n if n.kind == "document" else None

    def section_of(self, node_id: int) -> NodeInfo | None:
        """The deepest section containing a passage (or the document when the passage sits directly under it)."""
        n = self.nodes[node_id]
        p = self.nodes.get(n.parent) if n.parent is not None else None
        return p


def tree_version(store: Store, collection_id: int) -> str:
    """Changes whenever documents are written or removed (the store bumps ``tree_version``), or the collection's
    hierarchy or embeddings are rebuilt (``bump_tree_version``)."""
    return f"{store.get_meta('tree_version', 0)}:{store.get_meta(f'index_version:{collection_id}', 0)}"


def bump_tree_version(store: Store, collection_id: int) -> None:
    store.set_meta(f"index_version:{collection_id}", int(store.get_meta(f"index_version:{collection_id}", 0)) + 1)


def build_snapshot(store: Store, collection_id: int, embed_model: str | None) -> Snapshot:
    rows = store.conn.execute(
        "select id, kind, title, description, parent_id, document_id, heading_path, location, text, ordinal "
        "from nodes where collection_id = ? order by parent_id, ordinal, id",
        [collection_id],
    ).fetchall()
    nodes: dict[int, NodeInfo] = {}
    root = None
    for nid, kind, title, desc, parent, doc_id, hp, loc, text, _ord in rows:
        nodes[nid] = NodeInfo(
            id=nid, kind=kind, title=title or "", description=desc or "", parent=parent, document_id=doc_id,
            heading_path=json.loads(hp) if hp else [], location=Location.from_dict(json.loads(loc) if loc else None),
            text=text or "" if kind == "passage" else "",
        )
        if kind == "collection":
            root = nid
    if root is None:
        raise ValueError(f"collection {collection_id} has no root node")
    for nid, kind, _t, _d, parent, *_ in rows:
        if parent is not None and parent in nodes and kind != "collection":
            nodes[parent].children.append(nid)
    # depth-first layout of passages; iterative to survive deep trees
    order: list[int] = []
    stack: list[tuple[int, bool]] = [(root, False)]
    start_of: dict[int, int] = {}
    while stack:
        nid, done = stack.pop()
        node = nodes[nid]
        if done:
            node.span = (start_of[nid], len(order))
            continue
        start_of[nid] = len(order)
        if node.kind == "passage":
            order.append(nid)
            node.span = (len(order) - 1, len(order))
            continue
        stack.append((nid, True))
        for child in reversed(node.children):
            stack.append((child, False))
    passage_ids = np.array(order, dtype=np.int64)
    row_of = {int(p): i for i, p in enumerate(order)}
    dim = 0
    passage_vecs = np.zeros((len(order), 1), dtype=np.float32)
    node_vec_list: list[np.ndarray] = []
    if embed_model:
        ids, mat = store.embeddings(embed_model, collection_id=collection_id)
        if len(ids):
            dim = mat.shape[1]
            passage_vecs = np.zeros((len(order), dim), dtype=np.float32)
            for nid, vec in zip(ids.tolist(), mat, strict=True):
                if nid in row_of:
                    passage_vecs[row_of[nid]] = vec
                elif nid in nodes:
                    nodes[nid].vec_row = len(node_vec_list)
                    node_vec_list.append(vec)
    node_vecs = np.stack(node_vec_list).astype(np.float32) if node_vec_list else np.zeros((0, max(dim, 1)), np.float32)
    return Snapshot(
        collection_id=collection_id, root=root, nodes=nodes, passage_ids=passage_ids, passage_vecs=passage_vecs,
        node_vecs=node_vecs, version=tree_version(store, collection_id), row_of=row_of,
        row_parent=np.array([nodes[p].parent or -1 for p in order], dtype=np.int64),
        doc_languages={int(d): langs.split(",") for d, langs in store.conn.execute(
            "SELECT id, languages FROM documents WHERE collection_id = ? AND languages != ''", [collection_id])},
    )
