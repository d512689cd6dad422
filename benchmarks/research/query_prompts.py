"""EmbeddingGemma's task prompts before a question, side by side: dense passage / section / document Hit@1.

EmbeddingGemma was trained with a task prompt before each query; Shelfwise sends its retrieval one ("task: search
result | query: "). The model card lists others that could suit a question over documents: "task: question
answering | query: " and "task: fact checking | query: ". This embeds each collection's questions with every
prompt and ranks its passages by cosine alone (dense retrieval: the walk's main evidence), on an evaluation library
that ``shelfwise --embedder embeddinggemma eval`` or ``benchmarks/research/combiner_loco.py collect --embedder
embeddinggemma`` already embedded (stored texts keep their document prompt, so nothing is embedded again but the
questions). Run it on the tuning collections to choose; the evaluation sets are for reporting only.

    SHELFWISE_HOME=H .venv/bin/python benchmarks/research/query_prompts.py --json docs/eval/query-prompts.json \\
        cqa-tune orsharc pubmedqa covidqa medquad
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from shelfwise.core.models.encoders.embedder import Embedder
from shelfwise.core.navigation.snapshots import snapshot_for
from shelfwise.core.paths import data_dir
from shelfwise.core.store.db import Store
from shelfwise.evaluation.datasets import EvalSet
from shelfwise.evaluation.retrieval import judge
from shelfwise.evaluation.run import EVAL_DB_VERSION, load_dataset

sys.path.insert(0, str(Path(__file__).resolve().parent))
from combiner_loco import EVALUATION, TUNING  # the same collections and question caps

PROMPTS = {"search result": "task: search result | query: ", "question answering": "task: question answering | query: ",
           "fact checking": "task: fact checking | query: "}
GRANULARITIES = ("passage", "section", "document")


def dense_hit1(name: str, embedder: Embedder) -> dict[str, dict[str, float]]:
    dataset, split, limit = {**TUNING, **EVALUATION}[name]
    ds = load_dataset(dataset, limit, split=split)
    path = data_dir() / "eval" / f"{ds.store_name}-v{EVAL_DB_VERSION}.db"
    if not path.exists():
        raise SystemExit(f"{name}: no evaluation library at {path} (embed it first, see the module doc)")
    store = Store(path, read_only=True)
    try:
        return _prompts_on(store, ds, name, embedder)
    finally:
        store.close()


def _prompts_on(store: Store, ds: EvalSet, name: str, embedder: Embedder) -> dict[str, dict[str, float]]:
    coll = store.find_collection(ds.store_name)
    if coll is None:
        raise SystemExit(f"{name}: no collection {ds.store_name!r} in {store.path}")
    snap = snapshot_for(store, coll.id, embedder.model_id)
    if not len(snap.passage_ids) or snap.dim != embedder.dim:
        raise SystemExit(f"{name}: the library holds no vectors of {embedder.model_id}")
    doc_path = {d.id: d.path for d in store.documents(coll.id)}
    out: dict[str, dict[str, float]] = {}
    for label, prompt in PROMPTS.items():
        embedder.profile = replace(embedder.profile, query_prompt=prompt)
        vecs = np.asarray(embedder.embed_queries([q.query for q in ds.questions]), np.float32)
        hits = []
        for q, vec in zip(ds.questions, vecs, strict=True):
            ranked = [int(snap.passage_ids[i]) for i in np.argsort(-snap.passage_cos(vec), kind="stable")[:10]]
            j = judge(snap, doc_path, q, ranked)
            hits.append([j[f"{g}_hit1"] for g in GRANULARITIES])
        out[label] = dict(zip(GRANULARITIES, np.array(hits).mean(0).round(4).tolist(), strict=True))
        out[label]["questions"] = len(ds.questions)
        print(f"{name:9s} {label:18s} " + " / ".join(f"{out[label][g]:.3f}" for g in GRANULARITIES), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("collections", nargs="+", help=f"of {', '.join([*TUNING, *EVALUATION])}")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    embedder = Embedder("embeddinggemma", n_threads=args.threads)
    report: dict = {"embedder": embedder.model_id, "prompts": PROMPTS, "collections": {}}
    for name in args.collections:
        report["collections"][name] = dense_hit1(name, embedder)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
