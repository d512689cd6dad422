"""Caches shared by every query of a process: collection snapshots and fitted decision models."""

from __future__ import annotations

import threading

from shelfwise.core.models.backend import DecisionBackend, Embedder
from shelfwise.core.navigation.decision import DecisionModel, meta_key
from shelfwise.core.store.db import Store
from shelfwise.core.store.snapshot import Snapshot, SnapshotData, load_or_build, tree_version

_lock = threading.Lock()
_snapshots: dict[tuple[str, int, str], SnapshotData] = {}


def snapshot_for(store: Store, collection_id: int, embed_model: str | None) -> Snapshot:
    """The collection's snapshot as seen through ``store`` (its nodes' words are read through it): the arrays are
    shared by the process (and mapped from the files beside the library, ``load_or_build``), made again when the
    tree version changed (after ingest or re-clustering, and while an index run adds vectors)."""
    key = (str(store.path) if store.path else f"memory:{id(store)}", collection_id, embed_model or "")
    version = tree_version(store, collection_id)
    with _lock:
        data = _snapshots.get(key)
    if data is None or data.version != version:
        data = load_or_build(store, collection_id, embed_model)
        with _lock:
            _snapshots[key] = data
            if len(_snapshots) > 8:
                _snapshots.pop(next(iter(_snapshots)))
    return Snapshot(data, store)


def model_set(embedder: Embedder, backend: DecisionBackend | None) -> str:
    """Identifies the models a calibration was fitted with (each one's ``model_id``): it is redone when either
    changes."""
    gen = backend.model_id if backend is not None else "none"
    return f"{embedder.model_id}|{gen}"


def load_decision(store: Store, collection_id: int, embedder: Embedder,
                  backend: DecisionBackend | None) -> DecisionModel:
    """The calibration fitted for these models (under the backend's ``model_id``, else one of its
    ``legacy_ids``); else one fitted without a generative model (the generative model's readout is then simply not
    used); else the prior."""
    sets = [] if backend is None else \
        [model_set(embedder, backend), *(f"{embedder.model_id}|{legacy}" for legacy in backend.legacy_ids)]
    for key in sets:
        text = store.get_meta(meta_key(collection_id, key), None)
        if text:
            return DecisionModel.from_json(text)
    text = store.get_meta(meta_key(collection_id, model_set(embedder, None)), None)
    if text:
        model = DecisionModel.from_json(text)
        model.lm_levels = ()
        return model
    return DecisionModel()


def save_decision(store: Store, collection_id: int, embedder: Embedder, backend: DecisionBackend | None,
                  model: DecisionModel) -> None:
    model.key = meta_key(collection_id, model_set(embedder, backend))
    store.set_meta(model.key, model.to_json())
