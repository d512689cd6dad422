"""One identity for the answer model wherever it runs (``core/models/identity.py``): the bundled GGUF in process and
the same file served by a real ``llama-server`` (started as ``packaging/server.sh`` starts it, and by hand without
an alias) are one model, so a calibration and an adaptive threshold stored with either are found by the other; a
server's name that no file on this machine answers to stays the server's own (never another model's)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from shelfwise.core.answers.adaptive import get_threshold, set_threshold
from shelfwise.core.models.backend import DecisionBackend
from shelfwise.core.models.identity import file_sha_id, model_identity, served_identity
from shelfwise.core.models.llama.on_demand import OnDemandLlama
from shelfwise.core.models.remote.backend import RemoteBackend
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.snapshots import load_decision, save_decision
from shelfwise.core.store.db import Store
from tests.fakes import HashEmbedder
from tests.test_server import llama_server

ROOT = Path(__file__).resolve().parents[1]


def test_a_served_model_is_named_by_what_the_server_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "answer.gguf"
    model.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    mine = model_identity(model)
    assert served_identity(mine, "") == mine  # declared by server.sh
    assert served_identity("anything", str(model)) == mine  # llama-server's /props model_path, on this machine
    assert served_identity(str(model), "") == mine  # llama-cpp-python's server lists the file's path
    assert served_identity("answer.gguf:0123456789abcdef", "/elsewhere/answer.gguf") == \
        "answer.gguf:0123456789abcdef"  # an encoder's or judge's name as server.sh declares it
    assert served_identity("gemma3:270m", "/srv/models/gemma.gguf") is None  # another machine's file
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copyfile(model, folder / "mine.gguf")  # a model found on this machine (a folder of GGUFs)
    monkeypatch.setenv("SHELFWISE_MODEL_DIRS", str(folder))
    assert served_identity("mine.gguf", "") == mine


def _calibration(store: Store, cid: int, emb: HashEmbedder, made_with: DecisionBackend, used_with: DecisionBackend,
                 mark: str) -> DecisionModel:
    model = DecisionModel()
    model.report = {"made": mark}
    save_decision(store, cid, emb, made_with, model)
    return load_decision(store, cid, emb, used_with)


@pytest.mark.model
@pytest.mark.parametrize("declared", [True, False], ids=["server.sh-alias", "no-alias"])
def test_calibration_carries_over_between_in_process_and_served(bundled_model: Path, tmp_path: Path,
                                                                declared: bool) -> None:
    alias = None
    if declared:
        done = subprocess.run(["bash", str(ROOT / "packaging" / "server.sh"), "alias", "answer", str(bundled_model)],
                              capture_output=True, text=True, cwd=ROOT, check=True)
        alias = done.stdout.strip()
    store = Store(tmp_path / "lib.db")
    cid = store.collection("default").id
    emb = HashEmbedder()
    with llama_server(bundled_model, "-c", "2048", alias=alias) as url, \
            RemoteBackend(url, timeout=60) as served, OnDemandLlama(bundled_model) as local:
        assert served.model_id == local.model_id == model_identity(bundled_model)
        assert served.api.model_id == (alias or str(bundled_model))  # requests still name it as the server does
        assert _calibration(store, cid, emb, local, served, "in process").report == {"made": "in process"}
        assert _calibration(store, cid, emb, served, local, "served").report == {"made": "served"}
        set_threshold(store, local, 0.37)
        assert get_threshold(store, served) == 0.37
        set_threshold(store, served, 0.61)
        assert get_threshold(store, local) == 0.61
        assert not local.is_loaded  # the identity is the file's: nothing was loaded to compare
    store.close()


@pytest.mark.model
def test_a_served_model_this_machine_cannot_see_is_not_the_local_one(bundled_model: Path, tmp_path: Path) -> None:
    """A server that names its model by a name no file here answers to keeps its own id: a calibration made with
    the local file is not used for it (it may be another model)."""
    store = Store(tmp_path / "lib.db")
    cid = store.collection("default").id
    emb = HashEmbedder()
    elsewhere = tmp_path / "elsewhere" / bundled_model.name
    elsewhere.parent.mkdir()
    shutil.copyfile(bundled_model, elsewhere)
    with llama_server(elsewhere, "-c", "2048", alias="team-model") as url, \
            RemoteBackend(url, timeout=60) as served, OnDemandLlama(bundled_model) as local:
        elsewhere.unlink()  # the server holds the file it loaded; its path is no file here (another machine's)
        assert served.model_id == "team-model" != local.model_id
        assert _calibration(store, cid, emb, local, served, "in process").key == "prior"
    assert file_sha_id(bundled_model).startswith(bundled_model.name + ":")
    store.close()
