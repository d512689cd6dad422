"""EmbeddingGemma-300M as Shelfwise converts and runs it: vectors agree with sentence-transformers' (cosine >= 0.999).

``tests/fixtures/embeddinggemma_reference.npz`` holds 57 texts in 15 languages (questions with the query prompt,
passages with the document prompt, with and without a title, a table, two one-word texts and an 800-token text)
and their vectors from sentence-transformers, made once by ``scripts/embeddinggemma_reference.py``. The GGUF is
the one ``packaging/setup.sh`` installed (assembled from the pinned chunks, converted by
``core/models/encoders/gemma_convert.py``)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from shelfwise.core.models.encoders.embedder import EMBEDDINGGEMMA, Embedder

pytestmark = pytest.mark.model

FIXTURE = Path(__file__).parent / "fixtures" / "embeddinggemma_reference.npz"


@pytest.fixture(scope="module")
def reference() -> tuple[list[str], list[str], np.ndarray]:
    data = np.load(FIXTURE)
    meta = json.loads(str(data["meta"]))
    return meta["prompts"], meta["texts"], data["vectors"]


@pytest.fixture(scope="module")
def gemma(embeddinggemma_model: Path) -> Iterator[Embedder]:
    with Embedder(embeddinggemma_model, window=1024, batch_tokens=1024) as emb:
        yield emb


def test_the_fixture_is_what_the_test_claims(reference: tuple[list[str], list[str], np.ndarray]) -> None:
    prompts, texts, vecs = reference
    assert len(texts) >= 50 and vecs.shape == (len(texts), 768)
    assert sum(p == EMBEDDINGGEMMA.query_prompt for p in prompts) >= 20
    assert sum(p.startswith("title: ") and p != "title: none | text: " for p in prompts) >= 10
    assert any("\u4e00" <= ch <= "\u9fff" for t in texts for ch in t)  # Chinese among them


def test_vectors_agree_with_sentence_transformers(gemma: Embedder,
                                                  reference: tuple[list[str], list[str], np.ndarray]) -> None:
    prompts, texts, ref = reference
    assert gemma.profile is EMBEDDINGGEMMA and gemma.architecture == "gemma-embedding" and gemma.dim == 768
    got = gemma._embed(texts, prompts)  # several texts per llama.cpp batch, as indexing packs them
    cos = np.sum(got * ref, axis=1)
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.999, f"cosine {cos.min():.5f} for {texts[worst][:60]!r}"
    one = gemma._embed([texts[0]], [prompts[0]])[0]  # alone in its batch: packing changes the float order only
    assert float(one @ got[0]) > 0.999


def test_prompts_are_the_ones_shelfwise_sends(gemma: Embedder,
                                              reference: tuple[list[str], list[str], np.ndarray]) -> None:
    prompts, texts, ref = reference
    q = next(i for i, p in enumerate(prompts) if p == EMBEDDINGGEMMA.query_prompt)
    d = next(i for i, p in enumerate(prompts) if p == "title: none | text: ")
    assert float(gemma.embed_query(texts[q]) @ ref[q]) >= 0.999
    assert float(gemma.embed([texts[d]])[0] @ ref[d]) >= 0.999
    assert float(gemma.embed_query(texts[d]) @ ref[d]) < 0.99  # the prompt matters: a query is embedded otherwise


def test_a_question_finds_its_passage_across_languages(gemma: Embedder,
                                                      reference: tuple[list[str], list[str], np.ndarray]) -> None:
    prompts, texts, ref = reference
    docs = [i for i, p in enumerate(prompts) if p.startswith("title: ")]
    queries = [i for i, p in enumerate(prompts) if p == EMBEDDINGGEMMA.query_prompt]
    hits = sum(int(np.argmax(ref[docs] @ gemma.embed_query(texts[q]))) == k for k, q in enumerate(queries))
    assert hits >= 0.9 * len(queries)  # the i-th question was written for the i-th passage


def test_a_damaged_gguf_is_refused_with_a_message(tmp_path: Path, embeddinggemma_model: Path) -> None:
    from shelfwise.core.models.backend import BackendError

    bad = tmp_path / "embeddinggemma-damaged.gguf"
    with open(embeddinggemma_model, "rb") as src, open(bad, "wb") as out:
        out.write(src.read(4 << 20))  # the header and part of the tensors: a download cut short
    with pytest.raises(BackendError, match="could not load"):
        Embedder(bad)
    assert os.path.getsize(embeddinggemma_model) > 300e6
