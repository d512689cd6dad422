"""The encoder loaded while ``shelfwise ask`` starts (``core/models/encoders/preload.py``, ``app/cli/early.py``):
the guess of which file, the hand-over to the embedder only for the same file and GPU layers, the same vectors as a
model loaded the usual way, and the real command taking it. The tests' encoder is the bundled MiniLM (real
llama.cpp, real GGUF)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from shelfwise.app.cli.early import group_options
from shelfwise.core.indexing import encoder as library_encoders
from shelfwise.core.models.encoders import preload
from shelfwise.core.models.encoders.embedder import Embedder, bundled_embedder_path
from shelfwise.core.models.llama.bindings import gpu_layers, llama_cpp
from shelfwise.core.store.db import Store
from tests.cli_sample import SampleLibrary

TAKEN = "loaded while the program started is used"
TEXTS = ["How many days of annual leave do employees get?", "Visitors park in bay 4.", "Quarterly revenue grew 12%"]


def test_only_the_groups_options_before_ask_start_a_preload() -> None:
    assert group_options(["--db", "lib.db", "ask", "q"]) == ("ask", {"--db": "lib.db"})
    assert group_options(["--db=lib.db", "-v", "--embedder", "minilm", "ask"]) == \
        ("ask", {"--db": "lib.db", "--embedder": "minilm"})
    assert group_options(["search", "ask"])[0] == "search"
    assert group_options(["-k", "ask"])[0] is None  # another program's options (pytest's)
    assert group_options(["--db"])[0] is None


def test_the_file_names_agree_with_the_librarys_record() -> None:
    # one definition: the library's record and the preload read the same names
    assert preload.FILES is library_encoders.FILES and preload.META_KEY is library_encoders.META_KEY


def test_the_library_record_names_the_file_to_preload(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    with Store(db) as store:
        store.set_meta(library_encoders.META_KEY, "minilm")
    assert preload.recorded_encoder(db) == "minilm"
    assert not Path(str(db) + "-wal").exists()  # read without making a WAL (the next open would scan)
    assert preload.encoder_file("minilm", tmp_path) == tmp_path / "all-MiniLM-L6-v2-q8_0.gguf"
    assert preload.encoder_file("http://127.0.0.1:8181", tmp_path) is None
    assert preload.recorded_encoder(tmp_path / "none.db") is None


@pytest.mark.model
def test_a_preloaded_encoder_is_taken_and_gives_the_same_vectors(caplog: pytest.LogCaptureFixture) -> None:
    path = bundled_embedder_path()
    with Embedder(path) as loaded:  # loaded the usual way
        before = loaded.embed(TEXTS)
    preload.start(path)
    with caplog.at_level(logging.DEBUG, logger=preload.__name__), Embedder(path) as taken:
        after = taken.embed(TEXTS)
    assert TAKEN in caplog.text
    assert np.array_equal(before, after)


@pytest.mark.model
def test_a_preload_with_other_gpu_layers_is_not_taken(caplog: pytest.LogCaptureFixture) -> None:
    path = bundled_embedder_path()
    preload.start(path, n_gpu_layers=gpu_layers(-1) + 1)  # not what the embedder asks for
    with caplog.at_level(logging.DEBUG, logger=preload.__name__), Embedder(path) as emb:
        assert emb.embed(TEXTS[:1]).shape[0] == 1
    assert TAKEN not in caplog.text and preload.take(path, gpu_layers(-1)) is None  # freed, not left behind


@pytest.mark.model
def test_the_guess_follows_the_librarys_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = bundled_embedder_path()
    db = tmp_path / "lib.db"
    with Store(db) as store:
        store.set_meta(library_encoders.META_KEY, "minilm")
    monkeypatch.delenv("SHELFWISE_EMBEDDER", raising=False)
    preload.preload_library_encoder(db, None).join(timeout=120)
    model = preload.take(path, gpu_layers(-1))
    assert model is not None
    llama_cpp.llama_model_free(model)


@pytest.mark.model
def test_shelfwise_ask_takes_the_encoder_loaded_while_it_started(sample_library: SampleLibrary) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([str(Path(sys.executable).parent / "shelfwise"), "-v", "--db", str(sample_library.db),
                           "ask", "How many days of annual leave do employees get?", "--no-generate"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert TAKEN in done.stderr and "annual leave" in done.stdout.lower()


@pytest.mark.model
def test_a_question_stopped_at_the_door_exits_cleanly_while_the_encoder_loads(sample_library: SampleLibrary) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([str(Path(sys.executable).parent / "shelfwise"), "--db", str(sample_library.db), "ask",
                           "How many days of annual leave?", "--collection", "nope", "--no-generate"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 2 and "has no documents" in done.stderr and "Traceback" not in done.stderr
