"""Keeps a collection's derived index current: node embeddings (incremental) and the topic hierarchy.

Called after every ingest. Only nodes without a vector for the current embedder get one; clusters are rebuilt only
when the set of documents changed. What is embedded (why: docs/benchmarks.md, "Section vectors"):

* passages and documents: their own text (title and heading path in front), through the embedder;
* sections: the L2-normalised mean of the vectors of the passages beneath them, no embedder call (it saves the
  embedder's section tokens and ranks no worse). A section with no passage beneath it is embedded from its text.
* every embedded text is cached by its hash (``Store.cache_vectors``), so a re-ingested file's unchanged passages
  are not embedded again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np

from shelfwise.core.indexing.languages import detect_document_languages
from shelfwise.core.indexing.topics import (
    ClusterPlan,
    document_vectors,
    plan_clusters,
    signature,
    write_clusters,
)
from shelfwise.core.models.backend import Embedder, text_sha
from shelfwise.core.settings import Budgets
from shelfwise.core.store.db import NodeRow, Store
from shelfwise.core.store.snapshot import bump_tree_version

log = logging.getLogger(__name__)
EMBED_BATCH = 32
#: Node kinds that get a vector of their own. A node without one is judged by its passages' vectors (the features'
#: cos_desc falls back to cos_max), so a kind whose vector adds nothing measurable can be left out here.
EMBED_KINDS: tuple[str, ...] = ("passage", "section", "document")
#: Sections take the mean of their passages' vectors instead of an embedder call (measured: see the module doc).
SECTIONS_FROM_PASSAGES = True


#: The most of a title or a heading a passage's or section's embedded text carries in front of it: the encoder reads
#: only its window, and a title of megabytes (a DOCX's Title paragraph) filled it, so the passage itself was never
#: read and its question answered "Not found" while word search found it.
HEAD_CHARS = 200


def _head(text: str) -> str:
    return text if len(text) <= HEAD_CHARS else text[:HEAD_CHARS].rstrip() + "…"


def embedding_text(node: NodeRow, doc_title: str) -> str:
    """What the embedder reads for a node: passages and sections carry their document title and heading path
    (each cut to :data:`HEAD_CHARS`), which measured better than bare text for both the embedder and BM25."""
    parts = [_head(h) for h in ([doc_title] if doc_title else []) + list(node.heading_path)]
    heads = " > ".join(parts)
    if node.kind == "passage":
        return f"{heads}: {node.text}" if heads else node.text
    if node.kind == "section":
        title = _head(node.title)
        return f"{heads} > {title}. {node.description}" if heads else f"{title}. {node.description}"
    return node.description or node.title


def section_vectors(store: Store, collection_id: int, model: str,
                    sections: Sequence[NodeRow]) -> list[tuple[int, np.ndarray]]:
    """For each section, the L2-normalised mean of the vectors of the passages beneath it (nested sections
    included); sections with no embedded passage beneath them are left out."""
    out = []
    by_doc: dict[int, list[NodeRow]] = {}
    for sec in sections:
        if sec.document_id is not None:
            by_doc.setdefault(sec.document_id, []).append(sec)
    for doc_id, secs in by_doc.items():  # only these documents' passages are read (not the whole collection's)
        ids, mat = store.embeddings(model, kinds=["passage"], collection_id=collection_id, document_id=doc_id)
        row = {int(i): k for k, i in enumerate(ids.tolist())}
        kids: dict[int, list[NodeRow]] = {}
        for n in store.iter_nodes(document_id=doc_id):
            if n.parent_id is not None:
                kids.setdefault(n.parent_id, []).append(n)
        for sec in secs:
            rows: list[int] = []
            stack = [sec.id]
            while stack:
                for child in kids.get(stack.pop(), []):
                    if child.kind == "passage" and child.id in row:
                        rows.append(row[child.id])
                    elif child.kind == "section":
                        stack.append(child.id)
            if rows:
                mean = mat[rows].mean(axis=0)
                out.append((sec.id, (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)))
    return out


def _embed_texts(store: Store, embedder: Embedder, nodes: Sequence[NodeRow], texts: Sequence[str],
                 step: Callable[[int], None], cancel: Callable[[], bool] | None) -> int:
    """Vectors for ``nodes`` from the text-hash cache, else the embedder in batches; returns how many got one."""
    shas = [text_sha(embedder, t) for t in texts]
    cached = store.cached_vectors(embedder.model_id, shas)
    reuse = [(n.id, cached[h]) for n, h in zip(nodes, shas, strict=True) if h in cached]
    if reuse:
        store.set_embeddings(embedder.model_id, reuse)
    done = len(reuse)
    step(len(reuse))
    todo = [i for i, h in enumerate(shas) if h not in cached]
    for start in range(0, len(todo), EMBED_BATCH):
        if cancel is not None and cancel():
            break
        chunk = todo[start:start + EMBED_BATCH]
        vecs = embedder.embed([texts[i] for i in chunk])
        with store.transaction():  # the node's vector and its cache entry in one write
            store.set_embeddings(embedder.model_id, [(nodes[i].id, v) for i, v in zip(chunk, vecs, strict=True)])
            store.cache_vectors(embedder.model_id, [(shas[i], v) for i, v in zip(chunk, vecs, strict=True)])
        done += len(chunk)
        step(len(chunk))
    return done


def embed_missing(store: Store, collection_id: int, embedder: Embedder,
                  progress: Callable[[int, int], None] | None = None,
                  cancel: Callable[[], bool] | None = None) -> int:
    """Give every document, section and passage without a vector one (see the module doc for how). Returns the
    number of nodes that got a vector; ``progress(done, total)`` after each batch; ``cancel()`` stops between
    batches (what is stored stays)."""
    missing = [n for n in store.nodes_missing_embedding(embedder.model_id, collection_id)
               if n.kind in EMBED_KINDS]
    if not missing:
        return 0
    titles = {d.id: d.title for d in store.documents(collection_id)}
    total = len(missing)
    done = [0]

    def step(n: int) -> None:
        done[0] += n
        if progress:
            progress(done[0], total)

    own = [n for n in missing if n.kind != "section" or not SECTIONS_FROM_PASSAGES]
    count = _embed_texts(store, embedder, own, [embedding_text(n, titles.get(n.document_id or -1, "")) for n in own],
                         step, cancel)
    if len(own) == len(missing) or (cancel is not None and cancel()):
        return count
    sections = [n for n in missing if n.kind == "section"]
    derived = section_vectors(store, collection_id, embedder.model_id, sections)
    if derived:
        store.set_embeddings(embedder.model_id, derived)
        count += len(derived)
        step(len(derived))
    have = {nid for nid, _ in derived}
    rest = [n for n in sections if n.id not in have]  # no passage beneath: embedded from its own text
    count += _embed_texts(store, embedder, rest, [embedding_text(n, titles.get(n.document_id or -1, ""))
                                                  for n in rest], step, cancel)
    return count


def rebuild_hierarchy(store: Store, collection_id: int, embedder: Embedder, branching: int, force: bool = False) -> int:
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


def refresh_collection(store: Store, collection_id: int, embedder: Embedder, budgets: Budgets | None = None,
                       progress: Callable[[int, int], None] | None = None,
                       cancel: Callable[[], bool] | None = None) -> dict[str, int]:
    """Embed what has no vector, then rebuild the topic clusters if the documents changed. While embedding, the
    tree version is bumped every quarter of the way, so questions asked meanwhile walk with the vectors that exist
    (their snapshot is rebuilt), not only with words."""
    budgets = budgets or Budgets()
    detect_document_languages(store, collection_id)  # cheap; the walk and `status` read them
    shown = [0]

    def step(done: int, total: int) -> None:
        quarter = 4 * done // max(1, total)
        if 0 < quarter < 4 and quarter > shown[0]:
            shown[0] = quarter
            bump_tree_version(store, collection_id)
        if progress is not None:
            progress(done, total)

    embedded = embed_missing(store, collection_id, embedder, step, cancel)
    if cancel is not None and cancel():
        if embedded:
            bump_tree_version(store, collection_id)
        return {"embedded": embedded, "clusters": 0}
    log.debug("stage: topics")
    clusters = rebuild_hierarchy(store, collection_id, embedder, budgets.branching)
    if embedded or clusters >= 0:
        bump_tree_version(store, collection_id)
    if embedded:
        have = store.stats().embeddings_by_model.get(embedder.model_id, 0)
        store.prune_vector_cache(embedder.model_id, 2 * have + 1000)
    return {"embedded": embedded, "clusters": max(clusters, 0)}
