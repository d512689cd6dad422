"""Navigation Hit@1 at every level with the node vectors in float32 and as int8 (one scale per vector), side by side.

    python benchmarks/research/vector_precision.py --json --out docs/eval/vector-precision.json
    python benchmarks/research/vector_precision.py --sets conditionalqa:test,xquad:en --limit 200

Each set's eval library is the one ``shelfwise eval`` builds (the user data dir's ``eval/`` folder; built and
calibrated once, with float32 vectors, with no generative model), walked with the default navigation (the
``navigation`` method of ``shelfwise eval``) twice: with the snapshot's vectors as stored, and with every passage and
node vector replaced by its int8 round trip (``core/store/vectors.py``: ``dequantize(*quantize(v))``, which is
exactly what a cosine over the int8 rows computes). The questions' vectors are the same float32 ones both times.
The calibration was fitted on the float32 vectors. It needs the float32 store, so it runs
on the code before migration 0011 (main at 531839d or earlier: ``PYTHONPATH`` naming a folder whose ``shelfwise/``
links to such a checkout's core, app, ingest, resources and evaluation); the store keeps
only the int8 vectors after it. Reported per set: document, section and passage Hit@1 (and the
passage Recall@10) both ways and their difference (int8 - float32). ``--partial 0.1,0.5``: the same walk with only
that share of the (int8) vectors made, as a question asked while an index run is part of the way has them.

On today's code (the int8 store: the library is migrated when it is opened, so point ``SHELFWISE_HOME`` at a copy
of the data dir whose ``eval/`` holds copies of the float32 libraries) there is no float32 to compare: it reports
the walk with the vectors as stored (int8), BM25 on the same questions, and ``--partial`` with the snapshot as an
index run part of the way leaves it (a passage without a vector a zero row, a node without one no row at all):

    SHELFWISE_HOME=COPY python benchmarks/research/vector_precision.py --sets xquad:en,conditionalqa:test \
        --partial 0.1,0.5 --json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from shelfwise.core.models.factory import make_embedder
from shelfwise.core.navigation.calibrate import ensure_calibrated
from shelfwise.core.navigation.snapshots import load_decision, snapshot_for
from shelfwise.core.paths import data_dir
from shelfwise.core.settings import Settings
from shelfwise.core.store.db import Store
from shelfwise.evaluation.retrieval import Methods, run_methods
from shelfwise.evaluation.run import EVAL_DB_VERSION, build_collection, load_dataset

XQUAD_LANGS = ("en", "de", "es", "ru", "tr", "vi", "ar", "hi", "zh")
KEYS = ("document_hit1", "section_hit1", "passage_hit1", "passage_recall10")


def round_trip(mat: np.ndarray) -> np.ndarray:
    """``dequantize(*quantize(mat))`` of ``core/store/vectors.py`` (each row's direction in int8, read back as a
    unit vector), written out here because this benchmark runs on the code from before it (see the module doc)."""
    if not mat.size:
        return mat
    peak = np.abs(mat).max(axis=1)
    q = np.clip(np.rint(mat * (127.0 / np.where(peak > 0, peak, 1.0))[:, None]), -127, 127).astype(np.float32)
    norm = np.linalg.norm(q, axis=1)
    return (q / np.where(norm > 0, norm, 1.0)[:, None]).astype(np.float32)


def one_set(spec: str, limit: int | None, embedder: object, settings: Settings,
            partial_shares: tuple[float, ...] = ()) -> dict[str, object]:
    name, _, part = spec.partition(":")
    split, lang = ("all", part or "en") if name == "xquad" else (part or "all", None)
    ds = load_dataset(name, limit, split=split, lang=lang)
    store = Store(data_dir() / "eval" / f"{ds.store_name}-v{EVAL_DB_VERSION}.db")
    t0 = time.perf_counter()
    try:
        cid = build_collection(store, ds, embedder, settings)  # type: ignore[arg-type]
        ensure_calibrated(store, cid, embedder, None, settings)  # type: ignore[arg-type]
        snap = snapshot_for(store, cid, embedder.model_id)  # type: ignore[attr-defined]
        decision = load_decision(store, cid, embedder, None)  # type: ignore[arg-type]
        m = Methods(store, cid, snap, embedder, None, settings, decision)  # type: ignore[arg-type]
        q_vecs = np.asarray(embedder.embed_queries([q.query for q in ds.questions]), np.float32)  # type: ignore
        built = time.perf_counter() - t0
        if not hasattr(snap, "passage_vecs"):  # today's code: the store keeps int8 only
            return int8_store(m, ds.questions, q_vecs, partial_shares) | {"build_s": round(built, 1)}
        as_stored = run_methods(m, ds.questions, ["navigation"], q_vecs)["navigation"].metrics
        full_p, full_n = snap.passage_vecs, snap.node_vecs
        snap.passage_vecs = round_trip(full_p)
        snap.node_vecs = round_trip(full_n)
        as_int8 = run_methods(m, ds.questions, ["navigation"], q_vecs)["navigation"].metrics
        partial = {}
        for share in partial_shares:  # the vectors an index run has made so far: the first share of the nodes
            snap.passage_vecs, snap.node_vecs = so_far(snap, round_trip(full_p), round_trip(full_n), share)
            got = run_methods(m, ds.questions, ["navigation"], q_vecs)["navigation"].metrics
            partial[f"{round(share * 100)}%"] = {k: got.get(k) for k in KEYS}
        snap.passage_vecs, snap.node_vecs = full_p, full_n
    finally:
        store.close()
    out = {"questions": len(ds.questions), "passages": len(snap.passage_ids), "build_s": round(built, 1),
           "float32": {k: as_stored.get(k) for k in KEYS}, "int8": {k: as_int8.get(k) for k in KEYS},
           "int8_minus_float32": {k: round(float(as_int8.get(k, 0)) - float(as_stored.get(k, 0)), 4)
                                  for k in KEYS}}
    if partial:
        out["int8_vectors_so_far"] = partial
    return out


def int8_store(m: Methods, questions: list, q_vecs: np.ndarray, shares: tuple[float, ...]) -> dict[str, object]:
    """On today's code: the walk with the vectors as stored (int8) and BM25, and with only ``shares`` of the
    vectors made (:func:`so_far_int8`)."""
    full = m.snap
    got = run_methods(m, questions, ["navigation", "bm25"], q_vecs)
    out: dict[str, object] = {"questions": len(questions), "passages": len(full.passage_ids),
                              "int8": {k: got["navigation"].metrics.get(k) for k in KEYS},
                              "bm25": {k: got["bm25"].metrics.get(k) for k in KEYS}}
    partial = {}
    for share in shares:
        m.snap = so_far_int8(full, share)
        metrics = run_methods(m, questions, ["navigation"], q_vecs)["navigation"].metrics
        partial[f"{round(share * 100)}%"] = {k: metrics.get(k) for k in KEYS}
    m.snap = full
    if partial:
        out["int8_vectors_so_far"] = partial
    return out


def so_far_int8(snap: object, share: float) -> object:
    """The snapshot (today's columnar one) as an index run leaves it after embedding ``share`` of the nodes, in the
    order :func:`so_far` says: a passage without a vector is a zero row (scale 0), a document, section or cluster
    without one has no vector row (``vec_row`` -1), as ``core/store/snapshot.py`` builds them from such a store."""
    from shelfwise.core.store.snapshot import KINDS, Snapshot

    data = snap.data  # type: ignore[attr-defined]
    kinds = np.asarray(data.kind)
    own = np.sort(np.asarray(data.ids)[np.isin(kinds, [KINDS.index("passage"), KINDS.index("document")])])
    have = own[: int(len(own) * share)]
    passage_q = np.array(data.passage_q)
    passage_scale = np.array(data.passage_scale)
    missing = ~np.isin(np.asarray(data.passage_ids), have)
    passage_q[missing] = 0
    passage_scale[missing] = 0
    vec_row = np.array(data.vec_row)
    vec_row[~np.isin(np.asarray(data.ids), have)] = -1
    changed = replace(data, passage_q=passage_q, passage_scale=passage_scale, vec_row=vec_row, passage_map=None)
    return Snapshot(changed, snap.store)  # type: ignore[attr-defined]


def so_far(snap: object, passage_vecs: np.ndarray, node_vecs: np.ndarray, share: float,
           ) -> tuple[np.ndarray, np.ndarray]:
    """The vectors as an index run leaves them after embedding ``share`` of the nodes: it embeds passages and
    documents in node id order (``nodes_missing_embedding``), sections (the mean of their passages) and topic
    clusters only at the end; the rest are zeros, as in the snapshot of a library being indexed."""
    nodes = snap.nodes  # type: ignore[attr-defined]
    own = sorted(n for n, info in nodes.items() if info.kind in ("passage", "document"))
    have = set(own[: int(len(own) * share)])
    p = passage_vecs.copy()
    p[[i for i, nid in enumerate(snap.passage_ids.tolist()) if nid not in have]] = 0  # type: ignore[attr-defined]
    n = node_vecs.copy()
    n[[info.vec_row for nid, info in nodes.items() if info.vec_row >= 0 and nid not in have]] = 0
    return p, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="conditionalqa:test," + ",".join(f"xquad:{lang}" for lang in XQUAD_LANGS))
    ap.add_argument("--partial", default="", help="also walk with only these shares of the int8 vectors made "
                    "(e.g. 0.1,0.5: an index run part of the way), on the sets named by --partial-sets")
    ap.add_argument("--partial-sets", default="xquad:en,conditionalqa:test")
    ap.add_argument("--limit", type=int, default=None, help="questions per set (default: all)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, default=None, help="write the JSON here too (after every set)")
    args = ap.parse_args()
    settings = Settings()
    embedder = make_embedder("embeddinggemma")
    out: dict[str, object] = {"command": "benchmarks/research/vector_precision.py " + " ".join(sys.argv[1:]),
                              "embedder": embedder.model_id, "sets": {}}
    sets: dict[str, object] = out["sets"]  # type: ignore[assignment]
    for spec in args.sets.split(","):
        shares = tuple(float(x) for x in args.partial.split(",") if x) if spec in args.partial_sets.split(",") else ()
        sets[spec] = one_set(spec, args.limit, embedder, settings, shares)
        print(json.dumps({spec: sets[spec]}), file=sys.stderr, flush=True)
        if args.out is not None:
            args.out.write_text(json.dumps(out, indent=1) + "\n")
    diffs = [s["int8_minus_float32"] for s in sets.values() if "int8_minus_float32" in s]  # type: ignore[operator]
    worst = {k: max(abs(float(d[k])) for d in diffs) for k in KEYS} if diffs else None  # type: ignore[index]
    out["worst_abs_difference"] = worst
    if args.out is not None:
        args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1) if args.json else json.dumps(worst))


if __name__ == "__main__":
    main()
