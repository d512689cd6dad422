"""The snapshot kept beside the library: a new process maps it instead of rebuilding it, a change rebuilds it, and
the walk finds the same passages either way."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from shelfwise.core.indexing.vectors import refresh_collection
from shelfwise.core.navigation import snapshots
from shelfwise.core.navigation.navigator import Navigator
from shelfwise.core.navigation.request import SearchRequest
from shelfwise.core.navigation.snapshots import snapshot_for
from shelfwise.core.settings import Budgets, Settings
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.core.store.snapshot import build_data, folder
from shelfwise.core.store.vectors import dequantize, quantize, scores
from tests.fakes import HashEmbedder
from tests.test_navigation import TOPICS, _doc


def _library(path: Path) -> tuple[Store, int, HashEmbedder]:
    store = Store(path)
    cid = store.collection("default").id
    for t, (topic, words) in enumerate(TOPICS):
        for n in range(3):
            store.write_document(cid, f"/docs/{topic}-{n}.pdf", FileMeta(1, 1.0, f"{t}{n}"),
                                 _doc(topic, words, t * 10 + n))
    emb = HashEmbedder()
    refresh_collection(store, cid, emb, Budgets(branching=4))
    return store, cid, emb


def _walk(store: Store, emb: HashEmbedder, question: str) -> list[int]:
    nav = Navigator(store, None, emb, Settings(readout="embedding", budgets=Budgets(branching=4)))
    return [h.node_id for h in nav.navigate(SearchRequest(question, "default")).hits]


def _new_process() -> None:
    """What a new process starts with: no snapshot in memory."""
    snapshots._snapshots.clear()


def test_a_new_process_maps_the_snapshot_written_beside_the_library(tmp_path: Path) -> None:
    store, cid, emb = _library(tmp_path / "lib.db")
    _new_process()
    first = snapshot_for(store, cid, emb.model_id)
    files = sorted(p.name for p in (folder(store) or tmp_path).rglob("*.npy"))
    assert "passage_q.npy" in files and "child_ids.npy" in files  # written beside the library
    hits = _walk(store, emb, "telescope galaxy z1x1x1")
    _new_process()
    again = snapshot_for(store, cid, emb.model_id)
    assert again.data.passage_map is not None  # mapped from the file, not built
    fresh = build_data(store, cid, emb.model_id)
    for key in ("ids", "parent", "span", "child_ids", "passage_ids", "passage_q", "node_q"):
        assert np.array_equal(getattr(again.data, key), getattr(fresh, key)), key
    assert again.version == first.version
    assert _walk(store, emb, "telescope galaxy z1x1x1") == hits and hits
    store.close()


def test_a_change_or_another_library_at_the_same_path_rebuilds_it(tmp_path: Path) -> None:
    store, cid, emb = _library(tmp_path / "lib.db")
    _new_process()
    before = snapshot_for(store, cid, emb.model_id)
    store.write_document(cid, "/docs/extra.pdf", FileMeta(1, 1.0, "x"), _doc("astronomy", TOPICS[0][1], 99))
    refresh_collection(store, cid, emb, Budgets(branching=4))
    _new_process()
    after = snapshot_for(store, cid, emb.model_id)
    assert after.version != before.version and len(after.passage_ids) == len(before.passage_ids) + 9
    assert "z99x0x0" in " ".join(n.text for n in after.nodes.many(after.passage_ids.tolist()))
    store.close()
    # a library made again at the same path (rebuilt, restored from a copy) may reach the same tree version:
    # the files beside it carry a stamp its own meta does not name, so they are not read
    side = folder(Store(tmp_path / "lib.db")) or tmp_path
    for p in (tmp_path / "lib.db", tmp_path / "lib.db-wal", tmp_path / "lib.db-shm"):
        p.unlink(missing_ok=True)
    store, cid, emb = _library(tmp_path / "lib.db")
    assert side.exists()
    _new_process()
    snap = snapshot_for(store, cid, emb.model_id)
    assert np.array_equal(snap.data.passage_ids, build_data(store, cid, emb.model_id).passage_ids)
    store.close()


def test_a_read_only_library_keeps_its_snapshot_in_memory(tmp_path: Path) -> None:
    store, cid, emb = _library(tmp_path / "lib.db")
    store.close()
    ro = Store(tmp_path / "lib.db", read_only=True)
    _new_process()
    snap = snapshot_for(ro, cid, emb.model_id)
    assert len(snap.passage_ids) == 4 * 3 * 9 and snap.data.passage_map is None
    assert not (tmp_path / "lib.db.snapshots").exists()
    ro.close()


def test_int8_scores_are_the_float_cosines_of_the_int8_vectors() -> None:
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((1000, 32)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    q, s = quantize(vecs)
    x = vecs[5]
    got = scores(q, s, x, block=64)  # several blocks
    assert np.allclose(got, dequantize(q, s) @ x, atol=1e-5)
    assert np.abs(got - vecs @ x).max() < 0.02 and int(np.argmax(got)) == 5
    both = scores(q, s, np.stack([x, vecs[9]], axis=1), block=64)
    assert both.shape == (1000, 2) and np.allclose(both[:, 0], got, atol=1e-6)


def test_a_question_on_a_current_index_does_not_count_every_node(tmp_path: Path) -> None:
    from shelfwise.core.indexing.finish import finish_index
    from shelfwise.core.indexing.state import index_state

    store, cid, emb = _library(tmp_path / "lib.db")
    finish_index(store, cid, emb, Settings(use_calibration=False))
    seen: list[str] = []
    store.conn.set_trace_callback(seen.append)
    assert not index_state(store, cid, emb.model_id).unfinished
    assert not index_state(store, cid).unfinished  # any encoder's vectors: the window's start and `status` ask so
    assert finish_index(store, cid, emb, Settings(use_calibration=False)) == {"embedded": 0, "clusters": 0}
    assert not [s for s in seen if "FROM embeddings" in s]  # neither the count nor the list of missing vectors
    store.write_document(cid, "/docs/new.pdf", FileMeta(1, 1.0, "n"), _doc("cooking", TOPICS[1][1], 77))
    seen.clear()
    assert index_state(store, cid, emb.model_id).without_vectors > 0  # a write: counted again
    assert index_state(store, cid).without_vectors > 0
    assert finish_index(store, cid, emb, Settings(use_calibration=False))["embedded"] > 0
    assert [s for s in seen if "FROM embeddings" in s]
    store.conn.set_trace_callback(None)
    assert index_state(store, cid, emb.model_id).without_vectors == 0
    store.close()


def test_a_scan_gives_the_mapped_vectors_pages_back(tmp_path: Path) -> None:
    store, cid, emb = _library(tmp_path / "lib.db")
    _new_process()
    snap = snapshot_for(store, cid, emb.model_id)
    assert snap.data.passage_map is not None
    given: list[tuple[int, int]] = []
    snap.data.passage_map.release = lambda a, b: given.append((a, b))  # type: ignore[method-assign]
    x = emb.embed_query("telescope")
    assert np.allclose(snap.passage_cos(x), build_data(store, cid, emb.model_id).passage_q.astype(np.float32) @ x
                       * snap.data.passage_scale, atol=1e-5)
    assert given == [(0, len(snap.passage_ids))]  # every row read was given back (one block here)
    store.close()
