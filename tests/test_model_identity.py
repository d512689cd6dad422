"""One rule for a model's identity (``model_id``): the in-process backend's is its GGUF's content
(:func:`~shelfwise.core.models.identity.model_identity`), and calibration and the adaptive threshold are both keyed
by it, so loading another GGUF redoes calibration while a copy of the same file does not."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from shelfwise.core.answers.adaptive import DEFAULT_THRESHOLD, get_threshold, set_threshold, threshold_key
from shelfwise.core.indexing.vectors import refresh_collection
from shelfwise.core.models.backend import DecisionBackend
from shelfwise.core.models.fake import FakeBackend
from shelfwise.core.models.identity import IDENTITY_HEAD
from shelfwise.core.models.identity import model_identity as gguf_identity
from shelfwise.core.navigation import calibrate as calibrate_mod
from shelfwise.core.navigation.calibrate import ensure_calibrated
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.snapshots import load_decision, model_set, save_decision
from shelfwise.core.settings import Budgets, Settings
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.ingest.model import Location, ParsedDocument, ParsedNode
from tests.fakes import HashEmbedder


def _flip(path: Path, offset: int) -> None:
    with path.open("r+b") as fh:
        fh.seek(offset)
        b = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([b[0] ^ 1]))


def test_the_identity_is_the_content_not_the_name(tmp_path: Path) -> None:
    model = tmp_path / "a.gguf"
    model.write_bytes(bytes(range(256)) * (3 * IDENTITY_HEAD // 256))  # 12 MiB: a head and sampled weights
    copy = tmp_path / "renamed.gguf"
    shutil.copyfile(model, copy)
    assert gguf_identity(copy) == gguf_identity(model)
    for offset in (100, model.stat().st_size - 1):  # the metadata, the last weights
        changed = tmp_path / f"changed-{offset}.gguf"
        shutil.copyfile(model, changed)
        _flip(changed, offset)
        assert gguf_identity(changed) != gguf_identity(model)
    small = tmp_path / "small.gguf"
    small.write_bytes(b"GGUF" + bytes(10))
    assert gguf_identity(small).startswith("gguf:") and gguf_identity(small) != gguf_identity(model)


class _Named(FakeBackend):
    def __init__(self, model_id: str, legacy_ids: tuple[str, ...] = ()) -> None:
        super().__init__()
        self._id = model_id
        self.legacy_ids = legacy_ids

    @property
    def model_id(self) -> str:
        return self._id


def _library(tmp_path: Path) -> tuple[Store, int, HashEmbedder]:
    store = Store(tmp_path / "lib.db")
    coll = store.collection("default")
    for n, topic in enumerate(["telescope galaxy orbit", "oven flour garlic", "ledger audit invoice"]):
        passages = [ParsedNode(kind="passage", title="", location=Location(page=1),
                               text=f"{topic} note {n}-{p}: unique token z{n}x{p} appears once.") for p in range(4)]
        doc = ParsedDocument(title=f"Handbook {n}", format="pdf", pages=1, children=[
            ParsedNode(kind="section", title=f"Part {n}", children=passages, location=Location(page=1))])
        store.write_document(coll.id, f"/docs/{n}.pdf", FileMeta(1, 1.0, str(n)), doc)
    emb = HashEmbedder()
    refresh_collection(store, coll.id, emb, Budgets(branching=6))
    return store, coll.id, emb


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Replace the fit itself (not what decides to run it) by one that records the model it was asked for."""
    fitted: list[str] = []

    def fake_calibrate(store: Store, collection_id: int, embedder: HashEmbedder, backend: DecisionBackend | None,
                       settings: Settings, **_: object) -> DecisionModel:
        fitted.append(model_set(embedder, backend))
        model = DecisionModel()
        model.report = {"fit_ranking": settings.rank_fit}
        save_decision(store, collection_id, embedder, backend, model)
        return model

    monkeypatch.setattr(calibrate_mod, "calibrate", fake_calibrate)
    return fitted


def _calibrate_with(store: Store, cid: int, emb: HashEmbedder, backend: DecisionBackend) -> None:
    ensure_calibrated(store, cid, emb, backend, Settings(readout="embedding", budgets=Budgets(branching=6)))


def test_another_model_redoes_calibration_and_has_its_own_threshold(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    fitted = _counting(monkeypatch)
    store, cid, emb = _library(tmp_path)
    first, second = _Named("gguf:aaaa"), _Named("gguf:bbbb")
    _calibrate_with(store, cid, emb, first)
    _calibrate_with(store, cid, emb, first)  # the same model: the stored calibration serves
    assert fitted == [f"{emb.model_id}|gguf:aaaa"]
    assert load_decision(store, cid, emb, second).key != load_decision(store, cid, emb, first).key
    _calibrate_with(store, cid, emb, second)  # another model: fitted again
    assert fitted == [f"{emb.model_id}|gguf:aaaa", f"{emb.model_id}|gguf:bbbb"]
    assert threshold_key(first) != threshold_key(second)
    store.close()


def test_a_library_written_before_the_rule_keeps_its_calibration_and_threshold(tmp_path: Path) -> None:
    """Calibrations were keyed by the in-process backend's name ("llama.cpp", whatever file) and thresholds by the
    file name: the bundled model (whose legacy ids name them) still reads them until it is calibrated again."""
    store, cid, emb = _library(tmp_path)
    old = DecisionModel()
    old.report = {"made": "before the content identity"}
    store.set_meta(f"decision:{cid}:{emb.model_id}|llama.cpp", old.to_json())
    store.set_meta("adaptive_threshold:gemma-3-270m-q4_k_m.gguf", 0.3)
    bundled = _Named("gguf:aaaa", legacy_ids=("gemma-3-270m-q4_k_m.gguf", "llama.cpp"))
    other = _Named("gguf:bbbb", legacy_ids=("mine.gguf",))
    assert load_decision(store, cid, emb, bundled).report == {"made": "before the content identity"}
    assert load_decision(store, cid, emb, other).key == "prior" and get_threshold(store, other) == DEFAULT_THRESHOLD
    assert get_threshold(store, bundled) == 0.3
    set_threshold(store, bundled, 0.6)  # written under the identity, which is read first from now on
    assert get_threshold(store, bundled) == 0.6
    store.close()


def _renamed_model(source: Path, target: Path) -> Path:
    """A copy of the GGUF at ``source`` whose ``general.name`` differs by one letter (same length: the file stays
    valid)."""
    shutil.copyfile(source, target)
    head = target.read_bytes()[:IDENTITY_HEAD]
    key = head.index(b"general.name")
    vtype, = struct.unpack_from("<I", head, key + len(b"general.name"))
    assert vtype == 8  # a string
    length, = struct.unpack_from("<Q", head, key + len(b"general.name") + 4)
    assert length >= 1
    _flip(target, key + len(b"general.name") + 12 + length - 1)  # the name's last letter
    return target


@pytest.mark.model
def test_loading_another_gguf_redoes_calibration(bundled_model: Path, llama_backend: DecisionBackend,
                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from shelfwise.core.models.llama.backend import LlamaBackend

    fitted = _counting(monkeypatch)
    store, cid, emb = _library(tmp_path)
    _calibrate_with(store, cid, emb, llama_backend)
    with LlamaBackend(shutil.copyfile(bundled_model, tmp_path / "same-weights-other-name.gguf"), n_ctx=512) as copy:
        assert copy.model_id == llama_backend.model_id  # a copy is the same model: no new calibration
        _calibrate_with(store, cid, emb, copy)
    assert len(fitted) == 1
    with LlamaBackend(_renamed_model(bundled_model, tmp_path / "other.gguf"), n_ctx=512) as other:
        assert other.meta("general.name") != llama_backend.meta("general.name")
        assert other.model_id != llama_backend.model_id
        assert "llama.cpp" in llama_backend.legacy_ids and "llama.cpp" not in other.legacy_ids
        _calibrate_with(store, cid, emb, other)
        assert threshold_key(other) != threshold_key(llama_backend)
    assert fitted == [f"{emb.model_id}|{llama_backend.model_id}", f"{emb.model_id}|{other.model_id}"]
    store.close()
