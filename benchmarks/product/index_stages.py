"""Where indexing time goes, by stage, for each sentence encoder side by side in one run (issue 35).

A fresh library per encoder: the documents are parsed and stored (not timed against the encoder), then the stages
``finish_index`` runs, each timed on its own (wall seconds, CPU seconds of this process, texts and tokens the
encoder read):

* ``nodes``: a vector for every document, section and passage (``embed_missing``);
* ``topics``: topic clusters and their descriptions' vectors (``rebuild_hierarchy``);
* ``sentences``: the extractive answer's sentence vectors (``embed_sentences``);
* ``calibration``: the probe questions and the decision model's fit (``ensure_calibrated``).

    .venv/bin/python benchmarks/product/index_stages.py --source sample --json
    .venv/bin/python benchmarks/product/index_stages.py --source corpus --passages 1000 --json

``--source sample`` is ``resources/sample``; ``--source corpus`` the files of ``../shared/corpus`` (smallest first)
until ``--passages`` passages. Run with ``SHELFWISE_THREADS`` set on a shared machine; the ratios between the
encoders (same texts, same run) are what holds there.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from shelfwise.core.indexing.sentences import embed_sentences
from shelfwise.core.indexing.vectors import embed_missing, rebuild_hierarchy
from shelfwise.core.ingestion.runner import ingest
from shelfwise.core.models.encoders.embedder import Embedder
from shelfwise.core.navigation.calibrate import ensure_calibrated
from shelfwise.core.settings import Budgets, Settings
from shelfwise.core.store.db import Store

sys.path.insert(0, str(Path(__file__).resolve().parent))

from index import CORPUS, ROOT, cpu, passages_in  # the same clock and count as benchmarks/product/index.py


def build(store: Store, source: str, passages: int) -> dict[str, Any]:
    cid = store.collection("bench").id
    t0, c0 = time.perf_counter(), cpu()
    if source == "sample":
        ingest(store, [ROOT / "resources" / "sample"], "bench")
    else:
        files = sorted((p for p in CORPUS.iterdir() if p.is_file() and p.suffix.lower() != ".md"),
                       key=lambda p: (p.stat().st_size, p.name))
        ingest(store, files, "bench", cancel=lambda: passages_in(store, cid) >= passages)
    return {"passages": passages_in(store, cid), "parse_seconds": round(time.perf_counter() - t0, 2),
            "parse_cpu": round(cpu() - c0, 2)}


def stages(store: Store, emb: Embedder) -> dict[str, dict[str, float]]:
    cid = store.collection("bench").id
    settings = Settings()
    steps = {
        "nodes": lambda: embed_missing(store, cid, emb),
        "topics": lambda: rebuild_hierarchy(store, cid, emb, Budgets().branching),
        "sentences": lambda: embed_sentences(store, cid, emb),
        "calibration": lambda: ensure_calibrated(store, cid, emb, None, settings),
    }
    out: dict[str, dict[str, float]] = {}
    for name, step in steps.items():
        emb.timing.reset()
        t0, c0 = time.perf_counter(), cpu()
        step()
        out[name] = {"seconds": round(time.perf_counter() - t0, 2), "cpu": round(cpu() - c0, 2),
                     "texts": emb.timing.texts, "tokens": emb.timing.tokens,
                     "encode_seconds": round(emb.timing.encode_seconds, 2)}
    total = {k: round(sum(s[k] for s in out.values()), 2) for k in ("seconds", "cpu", "texts", "tokens",
                                                                       "encode_seconds")}
    out["total"] = total
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--source", choices=["sample", "corpus"], default="sample")
    p.add_argument("--passages", type=int, default=1000, help="corpus: stop parsing at this many passages")
    p.add_argument("--embedders", nargs="+", default=["minilm", "embeddinggemma"])
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    result: dict[str, Any] = {"source": args.source, "encoders": {}}
    for name in args.embedders:
        with tempfile.TemporaryDirectory(prefix="shelfwise-stages-") as tmp, \
                Embedder(name, n_threads=args.threads) as emb:
            store = Store(Path(tmp) / "lib.db")
            built = build(store, args.source, args.passages)
            result["encoders"][name] = {"model_id": emb.model_id, "threads": emb.n_threads, **built,
                                        "stages": stages(store, emb)}
            store.close()
        print(json.dumps({name: result["encoders"][name]}), file=sys.stderr, flush=True)
    names = list(result["encoders"])
    if len(names) == 2:
        a, b = (result["encoders"][n]["stages"] for n in names)
        result["ratio"] = {f"{names[1]}/{names[0]}": {k: round(b[k]["cpu"] / max(a[k]["cpu"], 1e-9), 2)
                                                      for k in a}}
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for n, r in result["encoders"].items():
            print(n, {k: (v["seconds"], v["cpu"], v["tokens"]) for k, v in r["stages"].items()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
