"""Sentence vectors made when a collection is indexed, so the extractive answer reads vectors instead of running
the embedder while the user waits (it reads them through :mod:`shelfwise.core.answers.sentence_vectors`).

Every passage's candidate sentences (:func:`~shelfwise.core.answers.extractive.candidates`: the sentence with its
table header or FAQ question, exactly what the ranker reads) are embedded once by :func:`embed_sentences`, after the
node vectors, and kept in the store's text-hash vector cache (``vector_cache``, no schema change) under their own
model key (:func:`~shelfwise.core.answers.sentence_vectors.sentence_model`); ``sentence_vectors.cached_scorer`` then
scores a question against them: the question is the only text embedded at question time; a sentence the cache lacks
(a collection indexed before this existed, an index still running) is embedded on the spot as before. What it
saves: docs/benchmarks.md, "Sentence vectors".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shelfwise.core.answers.extractive import CONTEXT_VERSION, candidates
from shelfwise.core.answers.sentence_vectors import sentence_model
from shelfwise.core.indexing.topics import signature
from shelfwise.core.models.backend import Embedder, text_sha
from shelfwise.core.navigation.trace import Hit
from shelfwise.core.store.db import Store

BATCH = 32


def passage_contexts(text: str, heading_path: Sequence[str]) -> list[str]:
    """What the ranker reads for each candidate sentence of one passage."""
    hit = Hit(0, 0, text, 0.0, "", "", list(heading_path), None)  # type: ignore[arg-type]
    return [c.context for c in candidates([hit])]


def embed_sentences(store: Store, collection_id: int, embedder: Embedder,
                    progress: Callable[[int, int], None] | None = None,
                    cancel: Callable[[], bool] | None = None) -> int:
    """Embed the candidate sentences of every passage of the collection that the cache lacks; returns how many
    were embedded. Skipped when the collection's documents, the embedder and the sentence cutting are what they
    were at the last complete run. ``cancel()`` stops between batches (what is stored stays)."""
    if store.read_only:
        return 0
    key = f"sentences:{collection_id}"
    sig = f"{signature(store, collection_id)}:{embedder.model_id}:{CONTEXT_VERSION}"
    if store.get_meta(key) == sig:
        return 0
    model = sentence_model(embedder)
    texts = list(dict.fromkeys(c for p in store.iter_nodes(("passage",), collection_id)
                               for c in passage_contexts(p.text, p.heading_path)))
    shas = [text_sha(embedder, t) for t in texts]
    have = store.cached_shas(model, shas)
    todo = [i for i, h in enumerate(shas) if h not in have]
    done = 0
    for start in range(0, len(todo), BATCH):
        if cancel is not None and cancel():
            return done
        chunk = todo[start:start + BATCH]
        vecs = embedder.embed([texts[i] for i in chunk])
        store.cache_vectors(model, [(shas[i], v) for i, v in zip(chunk, vecs, strict=True)])
        done += len(chunk)
        if progress is not None:
            progress(done, len(todo))
    store.set_meta(key, sig)
    # bound the cache: this collection's sentences, scaled to every collection's passages, twice over
    ratio = max(1.0, store.count_passages() / max(1, store.count_passages(collection_id)))
    store.prune_vector_cache(model, int(2 * len(texts) * ratio) + 1000)
    return done
