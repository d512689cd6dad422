"""A read-only snapshot of one collection's tree for fast navigation: columnar arrays, kept beside the library.

Passages are laid out in depth-first order, so every node's subtree is one contiguous range of passage rows: a
node's "evidence beneath it" (best passage similarity, lexical hits) is a slice, computed with one vectorised pass
per query. The tree is held as arrays, one entry per node (:class:`SnapshotData`: ids, parents, kinds, documents,
subtree spans, children in reading order) and the vectors as int8 rows, one byte a dimension
(``core/store/vectors.py``); a node's words (title, description, text, heading path, location) are read from the
library only for the nodes a question looks at (:class:`Snapshot.nodes`). Built from the store once per tree
version (``Store`` meta key ``tree_version:<collection_id>``) and written beside the library file
(``<library>.snapshots/``, :func:`load_or_build`), so a new process maps it instead of rebuilding it. Why: the
measurements in docs/scale.md ("Growth").
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import secrets
import shutil
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from shelfwise.core.store.db import Store
from shelfwise.core.store.vectors import decode, scores
from shelfwise.ingest.model import Location

_DONTNEED: int | None = None  # giving mapped pages back: Linux and macOS (on Windows they stay until unmapped)
try:
    from mmap import MADV_DONTNEED

    _DONTNEED = MADV_DONTNEED
except ImportError:
    pass

KINDS = ("collection", "cluster", "document", "section", "passage")
_KIND = {k: i for i, k in enumerate(KINDS)}
PASSAGE = _KIND["passage"]
BLOCK = 50_000  # stored vectors decoded at a time while building
RECENT = 4  # query vectors whose passage cosines a snapshot keeps (:meth:`Snapshot.passage_cos`)
_recent_lock = threading.Lock()


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
    vec_row: int = -1  # row in the node vectors (-1 = no vector)


@dataclass
class SnapshotData:
    """The columnar snapshot: what every question of a process (and every process, through the files) shares."""

    collection_id: int
    root: int
    version: str
    dim: int
    ids: np.ndarray  # (n,) int64 node ids, depth-first (the root first)
    pos_of: np.ndarray  # (max id + 1,) int32: position of a node id in ``ids``, -1 for none
    parent: np.ndarray  # (n,) int64 parent node id, -1 for the root
    kind: np.ndarray  # (n,) int8 index into KINDS
    document_id: np.ndarray  # (n,) int64, -1 for none
    span: np.ndarray  # (n, 2) int64 passage rows [start, end) of the subtree
    vec_row: np.ndarray  # (n,) int32 row in node_q (-1: none, and every passage: its vector is its passage row)
    child_start: np.ndarray  # (n + 1,) int64: the children of ids[i] are child_ids[child_start[i]:child_start[i+1]]
    child_ids: np.ndarray  # (n - 1,) int64, each node's children in reading order (ordinal, then id)
    passage_ids: np.ndarray  # (n_passages,) int64 node ids in depth-first order
    row_parent: np.ndarray  # (n_passages,) int64 parent node id of each passage row
    passage_q: np.ndarray  # (n_passages, dim) int8 (zeros where a passage has no vector yet)
    passage_scale: np.ndarray  # (n_passages,) float32 (0 where no vector)
    node_q: np.ndarray  # (n_node_vecs, dim) int8: description vectors of the other nodes
    node_scale: np.ndarray  # (n_node_vecs,) float32
    doc_languages: dict[int, list[str]] = field(default_factory=dict)  # document id -> languages, main first
    passage_map: Mapped | None = None  # the passage vectors' file mapping, when read from beside the library
    # the last few query vectors' passage cosines (query bytes -> read-only (n_passages,)): a conversation's
    # question is scanned by the topic-shift test and then by the walk (a scan of 10^6 passages: ~0.3 s)
    recent_cos: dict[bytes, np.ndarray] = field(default_factory=dict, repr=False)

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays by field name (what is written beside the library)."""
        return {f.name: v for f in fields(self) if isinstance(v := self.__dict__[f.name], np.ndarray)}

    def pos(self, node_id: int) -> int:
        return int(self.pos_of[node_id]) if 0 <= node_id < len(self.pos_of) else -1


ARRAYS = tuple(f.name for f in fields(SnapshotData) if f.type == "np.ndarray")


class Snapshot:
    """One store's view of a collection's :class:`SnapshotData`: the arrays, and the nodes' words read through
    that store when asked for (each node once per view). Made per question by ``snapshot_for``
    (``core/navigation/snapshots.py``), so a view is used by one thread, with its own store."""

    def __init__(self, data: SnapshotData, store: Store) -> None:
        self.data = data
        self.store = store
        self.nodes = NodeTable(self)

    # the arrays the walk reads
    @property
    def collection_id(self) -> int:
        return self.data.collection_id

    @property
    def root(self) -> int:
        return self.data.root

    @property
    def version(self) -> str:
        return self.data.version

    @property
    def dim(self) -> int:
        """The vectors' dimension (0: no vectors)."""
        return self.data.dim

    @property
    def passage_ids(self) -> np.ndarray:
        return self.data.passage_ids

    @property
    def row_parent(self) -> np.ndarray:
        return self.data.row_parent

    @property
    def doc_languages(self) -> dict[int, list[str]]:
        return self.data.doc_languages

    @property
    def row_of(self) -> RowOf:
        return RowOf(self.data)

    @property
    def n_node_vecs(self) -> int:
        return len(self.data.node_scale)

    def passage_cos(self, x: np.ndarray, *, keep: bool = True) -> np.ndarray:
        """Every passage's cosine with the query vector ``x`` (dim,), or with several (dim, k); zeros when the
        vectors are another dimension (another encoder's) or there are none. The cosines of the last
        :data:`RECENT` query vectors are kept (read-only, shared by the process's views of this snapshot) and a
        vector asked for again is not scanned again; ``keep=False`` scans (a benchmark of the scan)."""
        d = self.data
        if d.dim != x.shape[0]:
            return np.zeros((len(d.passage_ids), *x.shape[1:]), np.float32)
        x = np.asarray(x, dtype=np.float32)
        columns = [x] if x.ndim == 1 else [np.ascontiguousarray(x[:, j]) for j in range(x.shape[1])]
        with _recent_lock:
            found = [d.recent_cos.get(c.tobytes()) for c in columns] if keep else [None]
        if all(f is not None for f in found):
            return found[0] if x.ndim == 1 else np.stack(found, axis=1)  # type: ignore[return-value, arg-type]
        # a mapped file's pages are given back as each block is scanned: a question's peak memory holds one block
        # of the vectors, not all of them (10^6 passages: 768 MB)
        cos = scores(d.passage_q, d.passage_scale, x, release=d.passage_map.release if d.passage_map else None)
        if keep:
            with _recent_lock:
                for j, c in enumerate(columns):
                    column = cos if x.ndim == 1 else np.ascontiguousarray(cos[:, j])
                    column.setflags(write=False)
                    d.recent_cos[c.tobytes()] = column
                while len(d.recent_cos) > RECENT:
                    d.recent_cos.pop(next(iter(d.recent_cos)))
        return cos

    def node_cos(self, x: np.ndarray) -> np.ndarray:
        """The cosine of each node vector (``NodeInfo.vec_row``) with ``x``."""
        d = self.data
        if d.dim != x.shape[0]:
            return np.zeros(len(d.node_scale), np.float32)
        return scores(d.node_q, d.node_scale, x)

    def passage_vectors(self, rows: np.ndarray) -> np.ndarray:
        """The float32 vectors of some passage rows."""
        d = self.data
        return (d.passage_q[rows].astype(np.float32) * d.passage_scale[rows, None]).astype(np.float32)

    # the tree
    def kind_of(self, node_id: int) -> str:
        return KINDS[int(self.data.kind[self.data.pos(node_id)])]

    def parent_of(self, node_id: int) -> int | None:
        p = int(self.data.parent[self.data.pos(node_id)])
        return None if p < 0 else p

    def child_ids(self, node_id: int) -> list[int]:
        d = self.data
        i = d.pos(node_id)
        return d.child_ids[d.child_start[i]:d.child_start[i + 1]].tolist() if i >= 0 else []

    def child_ids_of_kind(self, node_id: int, kind: str) -> list[int]:
        """The children of ``node_id`` of one kind, in reading order (read off the arrays, one pass)."""
        d = self.data
        i = d.pos(node_id)
        if i < 0:
            return []
        kids = d.child_ids[d.child_start[i]:d.child_start[i + 1]]
        return kids[d.kind[d.pos_of[kids]] == _KIND[kind]].tolist()

    def children(self, node_id: int) -> list[NodeInfo]:
        return self.nodes.many(self.child_ids(node_id))

    def ancestors(self, node_id: int) -> list[NodeInfo]:
        out = []
        p = self.parent_of(node_id)
        while p is not None and p in self.nodes:
            out.append(self.nodes[p])
            p = self.parent_of(p)
        return out

    def document_of(self, node_id: int) -> NodeInfo | None:
        n: int | None = node_id
        while n is not None and self.kind_of(n) != "document":
            n = self.parent_of(n)
        return self.nodes[n] if n is not None else None

    def section_of(self, node_id: int) -> NodeInfo | None:
        """The deepest section containing a passage (or the document when the passage sits directly under it)."""
        p = self.parent_of(node_id)
        return self.nodes[p] if p is not None and p in self.nodes else None

    def passage_documents(self) -> np.ndarray:
        """(n_passages,) the document id of each passage row (-1: none)."""
        d = self.data
        return d.document_id[d.pos_of[d.passage_ids]]


class RowOf(Mapping[int, int]):
    """Passage node id -> its row in the passage arrays."""

    def __init__(self, data: SnapshotData) -> None:
        self.data = data

    def __getitem__(self, node_id: int) -> int:
        i = self.data.pos(int(node_id))
        if i < 0 or self.data.kind[i] != PASSAGE:
            raise KeyError(node_id)
        return int(self.data.span[i, 0])

    def __iter__(self) -> Iterator[int]:
        return iter(self.data.passage_ids.tolist())

    def __len__(self) -> int:
        return len(self.data.passage_ids)


class NodeTable(Mapping[int, NodeInfo]):
    """The collection's nodes by id. A node's words are read from the view's store the first time it is asked for
    (:meth:`many` reads a level's nodes in one statement); the tree fields come from the arrays."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self._made: dict[int, NodeInfo] = {}

    def __contains__(self, node_id: object) -> bool:
        return isinstance(node_id, int | np.integer) and self.snap.data.pos(int(node_id)) >= 0

    def __getitem__(self, node_id: int) -> NodeInfo:
        made = self._made.get(node_id)
        if made is not None:
            return made
        if node_id not in self:
            raise KeyError(node_id)
        return self.many([node_id])[0]

    def __iter__(self) -> Iterator[int]:
        return iter(self.snap.data.ids.tolist())

    def __len__(self) -> int:
        return len(self.snap.data.ids)

    def many(self, node_ids: list[int]) -> list[NodeInfo]:
        """These nodes, in this order; the ones not read yet are read in one statement (per 900 ids)."""
        todo = [n for n in dict.fromkeys(node_ids) if n not in self._made]
        for start in range(0, len(todo), 900):
            part = todo[start:start + 900]
            rows = self.snap.store.conn.execute(
                "SELECT id, title, description, heading_path, location, text FROM nodes WHERE id IN "
                f"({','.join('?' * len(part))})", part).fetchall()
            for row in rows:
                self._made[int(row[0])] = self._node(row)
        return [self._made[n] for n in node_ids]

    def _node(self, row: tuple) -> NodeInfo:
        nid, title, desc, hp, loc, text = row
        d = self.snap.data
        i = d.pos(int(nid))
        kind = KINDS[int(d.kind[i])]
        parent = int(d.parent[i])
        doc = int(d.document_id[i])
        return NodeInfo(
            id=int(nid), kind=kind, title=title or "", description=desc or "", parent=None if parent < 0 else parent,
            document_id=None if doc < 0 else doc, heading_path=json.loads(hp) if hp else [],
            location=Location.from_dict(json.loads(loc) if loc else None),
            text=(text or "") if kind == "passage" else "",
            children=d.child_ids[d.child_start[i]:d.child_start[i + 1]].tolist(),
            span=(int(d.span[i, 0]), int(d.span[i, 1])), vec_row=int(d.vec_row[i]),
        )

    def values(self) -> list[NodeInfo]:  # type: ignore[override]
        """Every node (each read once: for calibration and tests, not for a question)."""
        return self.many(self.snap.data.ids.tolist())

    def items(self) -> list[tuple[int, NodeInfo]]:  # type: ignore[override]
        return [(n.id, n) for n in self.values()]


def tree_version(store: Store, collection_id: int) -> str:
    """Changes whenever documents are written or removed (the store bumps ``tree_version``), or the collection's
    hierarchy or embeddings are rebuilt (``bump_tree_version``)."""
    return f"{store.get_meta('tree_version', 0)}:{store.get_meta(f'index_version:{collection_id}', 0)}"


def bump_tree_version(store: Store, collection_id: int) -> None:
    store.set_meta(f"index_version:{collection_id}", int(store.get_meta(f"index_version:{collection_id}", 0)) + 1)


def build_snapshot(store: Store, collection_id: int, embed_model: str | None) -> Snapshot:
    """The collection's snapshot built from the store now (nothing written beside it), seen through ``store``."""
    return Snapshot(build_data(store, collection_id, embed_model), store)


def build_data(store: Store, collection_id: int, embed_model: str | None) -> SnapshotData:
    """The collection's arrays, read from the store (the nodes' words are not read: :class:`NodeTable`)."""
    version = tree_version(store, collection_id)
    rows = store.conn.execute(
        "SELECT id, kind, parent_id, document_id FROM nodes WHERE collection_id = ? ORDER BY parent_id, ordinal, id",
        [collection_id]).fetchall()
    n = len(rows)
    ids_by_row = np.fromiter((r[0] for r in rows), np.int64, n)
    kind_by_row = np.fromiter((_KIND[r[1]] for r in rows), np.int8, n)
    parent_by_row = np.fromiter((-1 if r[2] is None else r[2] for r in rows), np.int64, n)
    doc_by_row = np.fromiter((-1 if r[3] is None else r[3] for r in rows), np.int64, n)
    del rows
    roots = np.flatnonzero(kind_by_row == _KIND["collection"])
    if not len(roots):
        raise ValueError(f"collection {collection_id} has no root node")
    root = int(ids_by_row[roots[0]])
    # children grouped by parent in reading order (the statement's order), as a CSR over parent ids
    has_parent = (parent_by_row >= 0) & (kind_by_row != _KIND["collection"])
    kids, kid_parent = ids_by_row[has_parent], parent_by_row[has_parent]
    first: dict[int, int] = {}
    count: dict[int, int] = {}
    for k, p in enumerate(kid_parent.tolist()):
        if p not in first:
            first[p] = k
        count[p] = count.get(p, 0) + 1
    kind_of = dict(zip(ids_by_row.tolist(), kind_by_row.tolist(), strict=True))
    order, span_of, passages = _depth_first(root, kind_of, kids.tolist(), first, count)
    ids = np.array(order, np.int64)
    pos_of = np.full(int(ids.max()) + 1 if len(ids) else 1, -1, np.int32)
    pos_of[ids] = np.arange(len(ids), dtype=np.int32)
    by_row = pos_of[ids_by_row]  # position of each statement row's node (-1: not reached from the root)
    reached = by_row >= 0
    parent = np.full(len(ids), -1, np.int64)
    parent[by_row[reached]] = parent_by_row[reached]
    kind = np.zeros(len(ids), np.int8)
    kind[by_row[reached]] = kind_by_row[reached]
    document_id = np.full(len(ids), -1, np.int64)
    document_id[by_row[reached]] = doc_by_row[reached]
    span = np.array([span_of[i] for i in order], np.int64).reshape(len(ids), 2)
    child_start = np.zeros(len(ids) + 1, np.int64)
    child_ids = np.zeros(0, np.int64)
    chunks = []
    for i, nid in enumerate(order):
        c = count.get(nid, 0)
        child_start[i + 1] = child_start[i] + c
        if c:
            chunks.append(kids[first[nid]:first[nid] + c])
    if chunks:
        child_ids = np.concatenate(chunks)
    passage_ids = np.array(passages, np.int64)
    row_parent = parent[pos_of[passage_ids]] if len(passage_ids) else np.zeros(0, np.int64)
    vec_row = np.full(len(ids), -1, np.int32)
    dim, passage_q, passage_scale, node_q, node_scale = _vectors(store, collection_id, embed_model, pos_of, kind,
                                                                 span, vec_row, len(passage_ids))
    return SnapshotData(
        collection_id=collection_id, root=root, version=version, dim=dim, ids=ids, pos_of=pos_of, parent=parent,
        kind=kind, document_id=document_id, span=span, vec_row=vec_row, child_start=child_start, child_ids=child_ids,
        passage_ids=passage_ids, row_parent=row_parent, passage_q=passage_q, passage_scale=passage_scale,
        node_q=node_q, node_scale=node_scale,
        doc_languages={int(d): langs.split(",") for d, langs in store.conn.execute(
            "SELECT id, languages FROM documents WHERE collection_id = ? AND languages != ''", [collection_id])},
    )


def _depth_first(root: int, kind_of: dict[int, int], kids: list[int], first: dict[int, int],
                 count: dict[int, int]) -> tuple[list[int], dict[int, tuple[int, int]], list[int]]:
    """The tree laid out depth first from ``root`` (iteratively: deep trees): the node ids in that order, each
    node's span of passage rows, and the passages numbered in reading order. ``kids[first[p]:first[p] + count[p]]``
    are node ``p``'s children in reading order."""
    order: list[int] = []
    span_of: dict[int, tuple[int, int]] = {}
    passages: list[int] = []
    stack: list[tuple[int, bool]] = [(root, False)]
    start_of: dict[int, int] = {}
    while stack:
        nid, done = stack.pop()
        if done:
            span_of[nid] = (start_of[nid], len(passages))
            continue
        order.append(nid)
        if kind_of[nid] == PASSAGE:
            span_of[nid] = (len(passages), len(passages) + 1)
            passages.append(nid)
            continue
        start_of[nid] = len(passages)
        stack.append((nid, True))
        if nid in first:
            a = first[nid]
            stack.extend((c, False) for c in reversed(kids[a:a + count[nid]]))
    return order, span_of, passages


def _vectors(store: Store, collection_id: int, model: str | None, pos_of: np.ndarray, kind: np.ndarray,
             span: np.ndarray, vec_row: np.ndarray, n_passages: int,
             ) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The stored vectors as int8 rows: passages at their passage row, the other nodes in ``vec_row`` order."""
    dim = 0
    passage_q = np.zeros((n_passages, 0), np.int8)
    passage_scale = np.zeros(n_passages, np.float32)
    node_parts: list[tuple[np.ndarray, np.ndarray]] = []
    n_node = 0
    if not model:
        return 0, passage_q, passage_scale, np.zeros((0, 0), np.int8), np.zeros(0, np.float32)
    cur = store.embedding_blobs(model, collection_id)
    while True:
        block = [r for _, r in zip(range(BLOCK), cur, strict=False)]
        if not block:
            break
        dims = {int(r[1]) for r in block}
        if len(dims) != 1 or (dim and dims != {dim}):
            raise ValueError(f"Embeddings for model {model!r} have mixed dimensions {sorted(dims | {dim} - {0})}")
        if not dim:
            dim = dims.pop()
            passage_q = np.zeros((n_passages, dim), np.int8)
        q, s = decode([r[2] for r in block], dim)
        nids = np.fromiter((r[0] for r in block), np.int64, len(block))
        inside = nids < len(pos_of)
        where = np.full(len(nids), -1, np.int64)
        where[inside] = pos_of[nids[inside]]
        ok = where >= 0
        is_passage = np.zeros(len(nids), bool)
        is_passage[ok] = kind[where[ok]] == PASSAGE
        rows = span[where[is_passage], 0]
        passage_q[rows] = q[is_passage]
        passage_scale[rows] = s[is_passage]
        other = ok & ~is_passage
        vec_row[where[other]] = np.arange(n_node, n_node + int(other.sum()), dtype=np.int32)
        n_node += int(other.sum())
        node_parts.append((q[other], s[other]))
    node_q = np.concatenate([p[0] for p in node_parts]) if node_parts else np.zeros((0, dim), np.int8)
    node_scale = np.concatenate([p[1] for p in node_parts]) if node_parts else np.zeros(0, np.float32)
    return dim, passage_q, passage_scale, node_q, node_scale


# -- beside the library ---------------------------------------------------------------------------------------
def folder(store: Store) -> Path | None:
    """Where a library's snapshots are kept (None: an in-memory store)."""
    return None if store.path is None else store.path.with_name(store.path.name + ".snapshots")


def _name(collection_id: int, model: str | None) -> str:
    return f"c{collection_id}-{hashlib.sha256((model or '').encode()).hexdigest()[:12]}"


def _meta_key(collection_id: int, model: str | None) -> str:
    return f"snapshot:{_name(collection_id, model)}"


def load_or_build(store: Store, collection_id: int, model: str | None) -> SnapshotData:
    """The collection's snapshot at its current tree version: mapped from the files beside the library when they
    are of this version and this library (the library's meta names the files' random stamp), else built from the
    store and written there (not for an in-memory or read-only library: then it is only kept in memory)."""
    version = tree_version(store, collection_id)
    base = folder(store)
    name = _name(collection_id, model)
    recorded = store.get_meta(_meta_key(collection_id, model))
    if base is not None and recorded:
        data = _load(base / name, version, str(recorded))
        if data is not None:
            return data
    data = build_data(store, collection_id, model)
    if base is not None and not store.read_only:
        with contextlib.suppress(OSError):
            stamp = _save(base, name, data)
            store.set_meta(_meta_key(collection_id, model), stamp)
            return _load(base / name, data.version, stamp) or data
    return data


def _save(base: Path, name: str, data: SnapshotData) -> str:
    """Write ``data`` as ``base/name`` (a new folder renamed into place); returns its stamp."""
    stamp = f"{data.version}|{secrets.token_hex(8)}"
    base.mkdir(exist_ok=True)
    tmp = base / f".{name}.{os.getpid()}.{secrets.token_hex(4)}"
    tmp.mkdir()
    try:
        for key, array in data.arrays().items():
            np.save(tmp / f"{key}.npy", array, allow_pickle=False)
        meta = {"stamp": stamp, "collection_id": data.collection_id, "root": data.root, "version": data.version,
                "dim": data.dim, "doc_languages": {str(k): v for k, v in data.doc_languages.items()}}
        (tmp / "meta.json").write_text(json.dumps(meta))
        final = base / name
        old = base / f".{name}.old.{os.getpid()}.{secrets.token_hex(4)}"
        with contextlib.suppress(FileNotFoundError):
            final.rename(old)
        tmp.rename(final)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return stamp


def _load(path: Path, version: str, stamp: str) -> SnapshotData | None:
    """The snapshot at ``path`` mapped read-only, when its stamp is ``stamp`` and its version ``version``."""
    try:
        meta = json.loads((path / "meta.json").read_text())
        if meta.get("stamp") != stamp or meta.get("version") != version:
            return None
        mapped = {key: _mapped(path / f"{key}.npy") for key in ARRAYS}
    except (OSError, ValueError):
        return None
    arrays: dict[str, Any] = {key: array for key, (array, _) in mapped.items()}
    data = SnapshotData(collection_id=int(meta["collection_id"]), root=int(meta["root"]), version=version,
                        dim=int(meta["dim"]), doc_languages={int(k): v for k, v in meta["doc_languages"].items()},
                        **arrays)
    data.passage_map = mapped["passage_q"][1]
    return data


def _mapped(path: Path) -> tuple[np.ndarray, Mapped | None]:
    """An array file mapped read-only, and its mapping (None: read whole, when it holds nothing: an empty mapping
    is refused)."""
    with path.open("rb") as fh:
        version = np.lib.format.read_magic(fh)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read(fh)
        offset = fh.tell()
        count = int(np.prod(shape))
        if count == 0 or fortran:
            return np.load(path, allow_pickle=False), None
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    array = np.frombuffer(mm, dtype=dtype, count=count, offset=offset).reshape(shape)
    return array, Mapped(mm, offset, int(array.strides[0]) if array.ndim else 0)


@dataclass
class Mapped:
    """Where an array's rows lie in its file's mapping, so the pages of rows already scanned can be given back."""

    mm: mmap.mmap
    offset: int  # bytes before the first row
    row_bytes: int

    def release(self, start: int, end: int) -> None:
        """Drop rows [start, end) from this process's memory (they stay in the page cache: reading them again costs
        a page fault each page, not a disk read)."""
        page = mmap.PAGESIZE
        a = -(-(self.offset + start * self.row_bytes) // page) * page
        b = (self.offset + end * self.row_bytes) // page * page
        if b > a and _DONTNEED is not None:
            self.mm.madvise(_DONTNEED, a, b - a)
