"""Navigation Hit@1 at every level with the node vectors in float32 and as int8 (one scale per vector), side by side.

    python benchmarks/vector_precision.py --json --out docs/eval/vector-precision.json
    python benchmarks/vector_precision.py --sets conditionalqa:test,xquad:en --limit 200

Each set's eval library is the one ``shelfwise eval`` builds (the user data dir's ``eval/`` folder; built and
calibrated once, with float32 vectors, with no generative model), walked with the default navigation (the
``navigation`` method of ``shelfwise eval``) twice: with the snapshot's vectors as stored, and with every passage and
node vector replaced by its int8 round trip (``core/store/vectors.py``: ``dequantize(*quantize(v))``, which is
exactly what a cosine over the int8 rows computes). The questions' vectors are the same float32 ones both times.
The calibration was fitted on the float32 vectors. It needs the float32 store, so it runs on the code before
migration 0011 (main at a682462 or earlier: ``python`` of such a checkout, this file given by path); the store keeps
only the int8 vectors after it. Reported per set: document, section and passage Hit@1 (and the
passage Recall@10) both ways and their difference (int8 - float32).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from shelfwise.core.evaluation.retrieval import Methods, run_methods
from shelfwise.core.evaluation.run import EVAL_DB_VERSION, build_collection, load_dataset
from shelfwise.core.models.factory import make_embedder
from shelfwise.core.navigation.calibrate import ensure_calibrated
from shelfwise.core.navigation.snapshots import load_decision, snapshot_for
from shelfwise.core.paths import data_dir
from shelfwise.core.settings import Settings
from shelfwise.core.store.db import Store

XQUAD_LANGS = ("en", "de", "es", "ru", "tr", "vi", "ar", "hi", "zh")
KEYS = ("document_hit1", "section_hit1", "passage_hit1", "passage_recall10")


def round_trip(mat: np.ndarray) -> np.ndarray:
    """``dequantize(*quantize(mat))`` of ``core/store/vectors.py``, written out here because this benchmark runs on
    the code from before it (the float32 store: see the module doc)."""
    if not mat.size:
        return mat
    peak = np.abs(mat).max(axis=1)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(mat / scale[:, None]), -127, 127).astype(np.int8)
    return (q.astype(np.float32) * scale[:, None]).astype(np.float32)


def one_set(spec: str, limit: int | None, embedder: object, settings: Settings) -> dict[str, object]:
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
        as_stored = run_methods(m, ds.questions, ["navigation"], q_vecs)["navigation"].metrics
        snap.passage_vecs = round_trip(snap.passage_vecs)
        snap.node_vecs = round_trip(snap.node_vecs)
        as_int8 = run_methods(m, ds.questions, ["navigation"], q_vecs)["navigation"].metrics
    finally:
        store.close()
    return {"questions": len(ds.questions), "passages": len(snap.passage_ids), "build_s": round(built, 1),
            "float32": {k: as_stored.get(k) for k in KEYS}, "int8": {k: as_int8.get(k) for k in KEYS},
            "int8_minus_float32": {k: round(float(as_int8.get(k, 0)) - float(as_stored.get(k, 0)), 4)
                                   for k in KEYS}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="conditionalqa:test," + ",".join(f"xquad:{lang}" for lang in XQUAD_LANGS))
    ap.add_argument("--limit", type=int, default=None, help="questions per set (default: all)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, default=None, help="write the JSON here too (after every set)")
    args = ap.parse_args()
    settings = Settings()
    embedder = make_embedder("embeddinggemma")
    out: dict[str, object] = {"command": "benchmarks/vector_precision.py " + " ".join(sys.argv[1:]),
                              "embedder": embedder.model_id, "sets": {}}
    sets: dict[str, object] = out["sets"]  # type: ignore[assignment]
    for spec in args.sets.split(","):
        sets[spec] = one_set(spec, args.limit, embedder, settings)
        print(json.dumps({spec: sets[spec]}), file=sys.stderr, flush=True)
        if args.out is not None:
            args.out.write_text(json.dumps(out, indent=1) + "\n")
    worst = {k: max(abs(float(s["int8_minus_float32"][k])) for s in sets.values())  # type: ignore[index]
             for k in KEYS}
    out["worst_abs_difference"] = worst
    if args.out is not None:
        args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1) if args.json else json.dumps(worst))


if __name__ == "__main__":
    main()
