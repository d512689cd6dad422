"""Sentence vectors made at indexing time (core/indexing/sentences.py), with the real embedder and SQLite."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shelfwise.core.answers.extractive import embedder_scorer
from shelfwise.core.answers.sentence_vectors import cached_scorer, sentence_model
from shelfwise.core.indexing.sentences import embed_sentences, passage_contexts
from shelfwise.core.models.backend import text_sha

pytestmark = pytest.mark.model


class Counting:
    """The real embedder, counting the texts it embeds."""

    def __init__(self, embedder: Any) -> None:
        self._e = embedder
        self.texts: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._e, name)

    def embed(self, texts: Any) -> np.ndarray:
        self.texts.extend(texts)
        return self._e.embed(texts)

    def embed_query_and_documents(self, query: str, texts: Any) -> np.ndarray:
        self.texts.extend([query, *texts])
        return self._e.embed_query_and_documents(query, texts)


def test_indexing_embeds_every_sentence_once_and_questions_read_them(sample_copy) -> None:
    from shelfwise.core.settings import Settings
    from shelfwise.core.shelf import Shelf

    # the sample as `shelfwise ingest` indexed it (a copy of the session's: tests/conftest.py)
    with Shelf(Settings(db_path=sample_copy("sentences").db, embedder_path="minilm")) as shelf:
        store, emb = shelf.store, shelf.embedder
        cid = store.collection("default").id
        contexts = list(dict.fromkeys(c for p in store.passages(collection_id=cid)
                                      for c in passage_contexts(p.text, p.heading_path)))
        assert len(contexts) > 100
        shas = [text_sha(emb, t) for t in contexts]
        assert set(store.cached_vectors(sentence_model(emb), shas)) == set(shas)  # all made when indexing
        assert embed_sentences(store, cid, emb) == 0  # nothing changed: nothing redone

        counting = Counting(emb)
        question = "How much is the daily allowance for a business trip to London?"
        emb.embed_query(question)  # as the walk does before the answer is extracted
        emb.timing.reset()
        got = cached_scorer(counting, store)(question, contexts[:20])
        # nothing is encoded while the user waits: the sentences are cached, the question's vector is the walk's
        assert counting.texts == [] and emb.timing.texts == 0
        want = embedder_scorer(emb)(question, contexts[:20])
        assert np.allclose(got, want, atol=0.01)  # ~0.002 apart: batches of other sizes sum in another order

        counting.texts.clear()  # a sentence the cache lacks is embedded on the spot
        got = cached_scorer(counting, store)(question, ["| Oslo | Norway | EUR 80 |", contexts[0]])
        assert counting.texts == ["| Oslo | Norway | EUR 80 |"] and got.shape == (2,)
