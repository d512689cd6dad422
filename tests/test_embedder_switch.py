"""Switching the sentence encoder: the new one re-embeds everything (it counts as unfinished until then), the
ranking reads only its own vectors (never two models' in one snapshot, even half-way), and switching back reuses
the first model's vectors. Real SQLite; two hashed bag-of-words encoders of different sizes stand in for MiniLM
and EmbeddingGemma (logic only: the real models' behaviour is in test_embeddinggemma.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shelfwise.core.indexing.state import index_state
from shelfwise.core.indexing.vectors import embed_missing, refresh_collection
from shelfwise.core.models.identity import model_identity
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.core.store.snapshot import build_snapshot
from shelfwise.ingest.model import Location, ParsedDocument, ParsedNode
from tests.fakes import HashEmbedder


class Small(HashEmbedder):
    """A second encoder: other id, other size (64)."""

    model_id = "small-hash-test"
    dim = 64
    window = 128

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen.extend(texts)
        return super().embed(texts)  # hashed into self.dim = 64 dimensions


class Big(HashEmbedder):
    window = 128


def _doc(texts: list[str]) -> ParsedDocument:
    passages = [ParsedNode(kind="passage", title="", text=t, location=Location(page=1)) for t in texts]
    return ParsedDocument(title="Handbook", format="md", pages=1,
                          children=[ParsedNode(kind="section", title="Rules", children=passages)])


def test_switching_reembeds_and_never_mixes_two_models(tmp_path: Path) -> None:
    store = Store(tmp_path / "lib.db")
    cid = store.collection("default").id
    texts = [f"rule {i} about {w}" for i, w in enumerate(["zeppelins", "balloons", "kites", "gliders"] * 10)]
    store.write_document(cid, "/a.md", FileMeta(1, 1.0, "v1"), _doc(texts))
    big, small = Big(), Small()
    refresh_collection(store, cid, big)
    assert index_state(store, cid, big.model_id).without_vectors == 0
    assert index_state(store, cid, small.model_id).without_vectors == 42  # the other model has none yet
    assert index_state(store, cid).without_vectors == 0  # (counting any model's vectors would hide that)

    # half-way: the new model has embedded only some passages
    half = store.nodes_missing_embedding(small.model_id, cid, kinds=["passage"])[:15]
    store.set_embeddings(small.model_id, list(zip([n.id for n in half], small.embed([n.text for n in half]),
                                                  strict=True)))
    snap = build_snapshot(store, cid, small.model_id)
    assert snap.dim == 64  # only the new model's vectors, at its size
    vecs = snap.passage_vectors(np.arange(len(snap.passage_ids)))
    have = {int(p) for p, v in zip(snap.passage_ids, vecs, strict=True) if np.any(v)}
    assert have == {n.id for n in half}  # the others are found by their words until embedded
    assert build_snapshot(store, cid, big.model_id).dim == 2048  # the old one untouched

    small.seen.clear()
    embed_missing(store, cid, small)
    assert index_state(store, cid, small.model_id).without_vectors == 0 and len(small.seen) == 40 - 15 + 1
    snap = build_snapshot(store, cid, small.model_id)
    vecs = snap.passage_vectors(np.arange(len(snap.passage_ids)))
    assert vecs.shape == (40, 64) and np.all(np.linalg.norm(vecs, axis=1) > 0.99)

    # and back: the first model's vectors are all still there, nothing is re-embedded
    big_seen: list[str] = []
    big.embed = lambda t, _e=big.embed: (big_seen.extend(t), _e(t))[1]  # type: ignore[method-assign]
    refresh_collection(store, cid, big)
    assert big_seen == [] and index_state(store, cid, big.model_id).without_vectors == 0
    store.close()


@pytest.mark.model
def test_the_cli_embeds_with_the_encoder_it_is_given(tmp_path: Path) -> None:
    """``--embedder GGUF`` reaches ingest's indexing: the vectors are keyed by that file's model id, its content's
    identity whatever its name. (A renamed copy of the bundled MiniLM keeps this fast: its vectors are real.)"""
    import shutil

    from click.testing import CliRunner

    from shelfwise.app.cli.main import main
    from shelfwise.core.models.encoders.embedder import bundled_embedder_path

    other = tmp_path / "my-encoder.gguf"
    shutil.copyfile(bundled_embedder_path(), other)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cats.md").write_text("# Cats\n\nCats sleep sixteen hours a day.\n\n## Food\n\nCats eat fish.\n")
    db = tmp_path / "lib.db"
    runner = CliRunner()
    result = runner.invoke(main, ["--db", str(db), "--embedder", str(other), "ingest", str(docs)])
    assert result.exit_code == 0, result.output
    with Store(db) as store:
        models = store.stats().embeddings_by_model
    assert list(models) == [model_identity(other)] and sum(models.values())  # the copy's content names it
    bad = runner.invoke(main, ["--db", str(db), "--embedder", "gemma-the-unknown", "search", "cats"])
    assert bad.exit_code == 2 and "neither minilm nor embeddinggemma nor a GGUF file" in bad.output
    nothing = runner.invoke(main, ["--embedder", "embeddinggemma", "models", "--json"], env={"SHELFWISE_HOME":
                                                                                          str(tmp_path / "h")})
    assert nothing.exit_code != 0 and "install it with: bash packaging/setup.sh" in nothing.output
