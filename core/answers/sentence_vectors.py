"""The extractive answer's reading of the sentence vectors made at indexing
(:func:`shelfwise.core.indexing.sentences.embed_sentences`): their cache key (:func:`sentence_model`) and the
scorer that reads them (:func:`cached_scorer`), embedding only any sentence the cache lacks (the question's vector is
the one the walk made, kept by ``Embedder.embed_query``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from shelfwise.core.answers.extractive import Scorer
from shelfwise.core.models.backend import Embedder, text_sha
from shelfwise.core.store.db import Store


def sentence_model(embedder: Embedder) -> str:
    """The cache key of sentence vectors: the embedder's, tagged (node and sentence vectors are pruned apart)."""
    return f"{embedder.model_id}#sentences"


def cached_scorer(embedder: Embedder, store: Store | None) -> Scorer:
    """Cosine of the question with each text: the texts' vectors from the sentence cache when there, else from
    the embedder; the question's from ``embed_query`` (kept from the walk when it embedded the same text)."""

    def score(question: str, texts: Sequence[str]) -> np.ndarray:
        shas = [text_sha(embedder, t) for t in texts]
        have = store.cached_vectors(sentence_model(embedder), shas, touch=False) if store is not None else {}
        missing = [t for t, h in zip(texts, shas, strict=True) if h not in have]
        # the walk embedded this question already: embed_query gives its kept vector without running the encoder
        q = np.asarray(embedder.embed_query(question), dtype=np.float32)
        fresh = dict(zip(missing, np.asarray(embedder.embed(missing), dtype=np.float32), strict=True)) \
            if missing else {}
        vecs = np.stack([have[h] if h in have else fresh[t] for t, h in zip(texts, shas, strict=True)]) \
            if texts else np.zeros((0, q.shape[0]), dtype=np.float32)
        return vecs @ q

    return score
