"""The sentence encoder a library is built with: EmbeddingGemma for a new library, its own for an existing one,
another only when its owner switches (``core/indexing/encoder.py``); what ``models`` and ``status`` say about it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from shelfwise.app.cli.main import main
from shelfwise.core.indexing.encoder import (
    META_KEY,
    canonical,
    encoder_for,
    library_encoder,
    name_of_model_id,
    record_encoder,
    switch_estimate,
)
from shelfwise.core.settings import DEFAULT_EMBEDDER, Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store.db import Store
from tests.fakes import HashEmbedder

MINILM_ID = "all-MiniLM-L6-v2-q8_0.gguf:c7f63c5300b1fb60"
EG_ID = "embeddinggemma-300m-q8_0.gguf:e6ae6854673ad6ed"


def _library(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cats.md").write_text("# Cats\n\nCats sleep sixteen hours a day.\n\n## Food\n\nCats eat fish.\n")
    (docs / "hunde.md").write_text("# Hunde\n\nHunde schlafen zwölf Stunden am Tag.\n")
    return docs


def test_names_and_model_ids() -> None:
    assert DEFAULT_EMBEDDER == "embeddinggemma" and canonical(None) == "embeddinggemma"
    assert canonical("MiniLM") == "minilm" and canonical("/x/embeddinggemma-300m-q8_0.gguf") == "embeddinggemma"
    assert canonical("/x/mine.gguf") == "/x/mine.gguf"
    assert name_of_model_id(MINILM_ID) == "minilm" and name_of_model_id(EG_ID) == "embeddinggemma"
    assert name_of_model_id("mine.gguf:0123") is None


def test_a_library_keeps_its_encoder_until_switched(tmp_path: Path) -> None:
    """A new library gets the default; one made before the record is read from its vectors; a recorded one keeps
    it; asking for another (a switch) wins and, once recorded, is the library's own."""
    with Store(tmp_path / "lib.db") as store:
        assert library_encoder(store) is None and encoder_for(store, None) == DEFAULT_EMBEDDER
    with Shelf(Settings(db_path=tmp_path / "lib.db"), embedder=HashEmbedder()) as shelf:
        shelf.ingest([_library(tmp_path)], "default")
        nodes = [n.id for n in shelf.store.iter_nodes(("passage",))]
        # vectors an older Shelfwise made with MiniLM, and no record of it
        shelf.store.set_embeddings(MINILM_ID, [(n, np.ones(4, np.float32)) for n in nodes])
        assert shelf.store.get_meta(META_KEY) is None  # a test double's vectors are not recorded as an encoder
        assert library_encoder(shelf.store) == "minilm" and encoder_for(shelf.store, None) == "minilm"
        assert encoder_for(shelf.store, "embeddinggemma") == "embeddinggemma"
        record_encoder(shelf.store, "embeddinggemma")
        assert library_encoder(shelf.store) == "embeddinggemma"  # the record wins over the old vectors
    with Shelf(Settings(db_path=tmp_path / "lib.db", embedder_path=None), embedder=HashEmbedder()) as shelf:
        assert shelf.settings.embedder_path == "embeddinggemma"


def test_switch_estimate_counts_what_the_encoder_lacks(tmp_path: Path) -> None:
    emb = HashEmbedder()
    with Shelf(Settings(db_path=tmp_path / "lib.db", use_calibration=False), embedder=emb) as shelf:
        shelf.ingest([_library(tmp_path)], "default", index=False, embed=False)
        before = switch_estimate(shelf.store, emb)
        shelf.refresh("default")
        after = switch_estimate(shelf.store, emb)
    assert before.texts > 0 and before.tokens > before.texts and before.seconds > 0
    assert after.texts == 0 and after.seconds == 0


@pytest.mark.model
def test_ingest_without_a_flag_keeps_the_librarys_encoder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         embeddinggemma_model: Path) -> None:
    """Through the CLI with no encoder named: a library built with MiniLM stays on MiniLM (new files, a new
    question); ``--embedder embeddinggemma index`` switches it, and it stays switched."""
    monkeypatch.delenv("SHELFWISE_EMBEDDER", raising=False)
    docs, db = _library(tmp_path), tmp_path / "lib.db"
    runner = CliRunner()
    r = runner.invoke(main, ["--db", str(db), "--embedder", "minilm", "ingest", str(docs)])
    assert r.exit_code == 0, r.output
    (docs / "birds.md").write_text("# Birds\n\nBirds sing at dawn.\n")
    r = runner.invoke(main, ["--db", str(db), "ingest", str(docs)])
    assert r.exit_code == 0, r.output
    with Store(db) as store:
        models = {name_of_model_id(m) for m in store.stats().embeddings_by_model}
        assert models == {"minilm"} and store.get_meta(META_KEY) == "minilm"
    r = runner.invoke(main, ["--db", str(db), "status"])
    assert "Sentence encoder: all-MiniLM-L6-v2 (faster, English only)" in r.output
    r = runner.invoke(main, ["--db", str(db), "--embedder", "embeddinggemma", "index"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["--db", str(db), "ingest", str(docs), "--force"])
    assert r.exit_code == 0, r.output
    with Store(db) as store:
        assert store.get_meta(META_KEY) == "embeddinggemma"
        counts = store.stats().embeddings_by_model
        eg = sum(n for m, n in counts.items() if name_of_model_id(m) == "embeddinggemma")
        assert eg >= len(list(store.iter_nodes(("passage",))))  # every passage re-read has its EmbeddingGemma vector


@pytest.mark.model
def test_models_names_the_encoder_for_new_libraries(tmp_path: Path, embeddinggemma_model: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SHELFWISE_EMBEDDER"}
    exe = Path(sys.executable).parent / "shelfwise"
    r = subprocess.run([str(exe), "--db", str(tmp_path / "none.db"), "models"], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert lines[0].split()[:3] == ["role", "model", "what"]
    row = next(line for line in lines if line.startswith("encoder, new libraries"))
    assert "EmbeddingGemma-300M" in row and "768-d" in row and "{" not in r.stdout
    assert not (tmp_path / "none.db").exists()  # showing the models makes no library
