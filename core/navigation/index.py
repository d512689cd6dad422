"""Keeps a collection's derived index current: node embeddings (incremental) and the topic hierarchy.

Called after every ingest. Only nodes without a vector for the current embedder are embedded; clusters are rebuilt
only when the set of documents changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shelfwise.core.navigation.hierarchy import (
    ClusterPlan,
    document_vectors,
    plan_clusters,
    signature,
    write_clusters,
)
from shelfwise.core.settings import Budgets
from shelfwise.core.store.db import NodeRow, Store
from shelfwise.core.store.snapshot import bump_tree_version

EMBED_BATCH = 32


def embedding_text(node: NodeRow, doc_title: str) -> str:
    """What the embedder reads for a node: passages and sections carry their document title and heading path,
    which measured better than bare text for both the embedder and BM25."""
    heads = " > ".join([doc_title, *node.heading_path]) if doc_title else " > ".join(node.heading_path)
    if node.kind == "passage":
        return f"{heads}: {node.text}" if heads else node.text
    if node.kind == "section":
        return f"{heads} > {node.title}. {node.description}" if heads else f"{node.title}. {node.description}"
    return node.description or node.title


def embed_missing(store: Store, collection_id: int, embedder: Any,
                  progress: Callable[[int, int], None] | None = None) -> int:
    missing = [n for n in store.nodes_missing_embedding(embedder.model_id, collection_id)
               if n.kind in ("passage", "section", "document")]
    if not missing:
        return 0
    titles = {d.id: d.title for d in store.documents(collection_id)}
    for i in range(0, len(missing), EMBED_BATCH):
        chunk = missing[i:i + EMBED_BATCH]
        vecs = embedder.embed([embedding_text(n, titles.get(n.document_id or -1, "")) for n in chunk])
        store.set_embeddings(embedder.model_id, list(zip([n.id for n in chunk], vecs, strict=True)))
        if progress:
            progress(min(i + EMBED_BATCH, len(missing)), len(missing))
    return len(missing)


def rebuild_hierarchy(store: Store, collection_id: int, embedder: Any, branching: int, force: bool = False) -> int:
    sig = f"{signature(store, collection_id)}:{branching}:{embedder.model_id}"
    key = f"hierarchy:{collection_id}"
    if not force and store.get_meta(key) == sig:
        return -1
    ids, titles, texts, vecs = document_vectors(store, collection_id, embedder.model_id)
    plans = plan_clusters(ids, titles, texts, vecs, branching)

    def describe(plan: ClusterPlan) -> str:
        return plan.description

    n = write_clusters(store, collection_id, plans, describe)
    if n:
        cluster_rows = store.nodes_missing_embedding(embedder.model_id, collection_id, kinds=["cluster"])
        if cluster_rows:
            vecs_c = embedder.embed([r.description for r in cluster_rows])
            store.set_embeddings(embedder.model_id, list(zip([r.id for r in cluster_rows], vecs_c, strict=True)))
    store.set_meta(key, sig)
    return n


def refresh_collection(store: Store, collection_id: int, embedder: Any, budgets: Budgets | None = None,
                       progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
    budgets = budgets or Budgets()
    embedded = embed_missing(store, collection_id, embedder, progress)
    clusters = rebuild_hierarchy(store, collection_id, embedder, budgets.branching)
    if embedded or clusters >= 0:
        bump_tree_version(store, collection_id)
    return {"embedded": embedded, "clusters": max(clusters, 0)}
