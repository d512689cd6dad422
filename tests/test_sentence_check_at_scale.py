"""An index run that checks which sentences the cache lacks reads which texts it holds, not their vectors (at 10^6
passages every cached vector as float32 is 3 GB): core/indexing/sentences.py with ``Store.cached_shas``. Real
SQLite; the hashing encoder of tests/fakes.py (the check is logic, not model behaviour)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shelfwise.core.answers.sentence_vectors import sentence_model
from shelfwise.core.indexing import sentences
from shelfwise.core.indexing.sentences import embed_sentences, passage_contexts
from shelfwise.core.models.backend import text_sha
from shelfwise.core.store import db as store_db
from shelfwise.core.store.db import Store
from tests.fakes import HashEmbedder


def _library(path: Path) -> tuple[Store, int]:
    store = Store(path)
    coll = store.collection("c")
    rows = [(k + 10, coll.id, None, coll.root_node_id, "passage", k, 1, "", "",
             f"Passage {k} says the allowance is {k} euros. It is paid monthly to staff number {k}.", "{}", None,
             "[]", "") for k in range(300)]
    with store.transaction():
        store.conn.executemany(
            "INSERT INTO nodes(id, collection_id, document_id, parent_id, kind, ordinal, depth, title, description, "
            "text, location, page, heading_path, heading_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return store, coll.id


def test_a_second_check_reads_no_cached_vector(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store, cid = _library(tmp_path / "lib.db")
    emb = HashEmbedder()
    try:
        made = embed_sentences(store, cid, emb)
        texts = list(dict.fromkeys(c for p in store.passages(collection_id=cid)
                                   for c in passage_contexts(p.text, p.heading_path)))
        assert made == len(texts) > 300
        assert store.cached_shas(sentence_model(emb), [text_sha(emb, t) for t in texts]) == \
            {text_sha(emb, t) for t in texts}
        assert store.count_passages(cid) == store.count_passages() == 300

        store.set_meta(f"sentences:{cid}", "changed")  # as after a document was added: every sentence checked again

        def no_vectors(*_: object) -> object:
            raise AssertionError("a cached vector was read to learn whether it is cached")

        monkeypatch.setattr(store_db, "decode_float", no_vectors)
        monkeypatch.setattr(sentences, "decode_float", no_vectors, raising=False)
        assert embed_sentences(store, cid, emb) == 0  # all cached: nothing embedded, no vector read
    finally:
        store.close()
