"""Does cutting passages to fewer embedder tokens lose retrieval quality? Measured on TRAINING data only.

    python benchmarks/research/token_cap.py --windows 128 256 --json

For each question of ``../shared/traindata/covidqa`` (CORD-19 papers in ~150-word chunks; the candidates are the
gold chunk(s) and up to 20 other chunks of the same paper) the passages are embedded as the indexer embeds them
(``title: text``) with the embedder's window set to each value (``[CLS]`` + ``window - 2`` tokens + ``[SEP]``),
ranked by cosine to the question, and scored: Hit@1 (a gold chunk first) and MRR. ``--medquad N`` adds N seeded
MedQuAD questions (NIH answers, other answers of the same disease document as negatives). Each distinct text is
embedded once per window. The evaluation sets are not touched (this is the tuning the rules allow).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from shelfwise.core.models.encoders.embedder import Embedder

TRAIN = Path(__file__).resolve().parents[3] / "shared" / "traindata"


def load(name: str, limit: int | None, seed: int = 16) -> list[dict[str, Any]]:
    path = TRAIN / name / "derived" / "pairs.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        recs = [json.loads(line) for line in f]
    recs = [r for r in recs if r["positives"] and r["negatives"]]
    if limit is not None and limit < len(recs):
        recs = random.Random(seed).sample(recs, limit)
    return recs


def passage_text(rec: dict[str, Any], text: str) -> str:
    title = (rec.get("doc_title") or "").strip()
    return f"{title}: {text}" if title else text


def score(recs: list[dict[str, Any]], emb: Embedder) -> dict[str, Any]:
    texts = sorted({passage_text(r, t) for r in recs for t in [*r["positives"], *r["negatives"]]})
    index = {t: i for i, t in enumerate(texts)}
    t0 = time.perf_counter()
    vecs = np.concatenate([emb.embed(texts[i:i + 64]) for i in range(0, len(texts), 64)])
    seconds = time.perf_counter() - t0
    tokens = sum(len(emb.tokenize(t)) for t in texts)
    qv = np.concatenate([emb.embed([r["question"] for r in recs[i:i + 64]]) for i in range(0, len(recs), 64)])
    hits, rr = [], []
    for r, q in zip(recs, qv, strict=True):
        cands = [passage_text(r, t) for t in r["positives"]] + [passage_text(r, t) for t in r["negatives"]]
        gold = set(range(len(r["positives"])))
        sims = vecs[[index[c] for c in cands]] @ q
        order = np.argsort(-sims, kind="stable")
        first = next(k for k, j in enumerate(order) if int(j) in gold)
        hits.append(first == 0)
        rr.append(1.0 / (first + 1))
    return {"questions": len(recs), "passages": len(texts), "passage_tokens": tokens,
            "tokens_per_passage": round(tokens / len(texts), 1), "embed_seconds": round(seconds, 1),
            "hit1": round(float(np.mean(hits)), 4), "mrr": round(float(np.mean(rr)), 4)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--windows", type=int, nargs="+", default=[128, 256])
    p.add_argument("--covidqa", type=int, default=None, help="questions (default: all)")
    p.add_argument("--medquad", type=int, default=0, help="seeded MedQuAD questions to add as a second set")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    sets = {"covidqa": load("covidqa", args.covidqa)}
    if args.medquad:
        sets["medquad"] = load("medquad", args.medquad)
    out: dict[str, Any] = {"what": "question -> passage ranking by embedder cosine among the gold and same-document "
                                   "chunks, passages cut to each window (training data only)", "results": {}}
    for w in args.windows:
        with Embedder(n_threads=args.threads, window=w, batch_tokens=max(256, w)) as emb:
            for name, recs in sets.items():
                r = score(recs, emb)
                out["results"].setdefault(name, {})[str(w)] = r
                print(json.dumps({name: {w: r}}), file=sys.stderr, flush=True)
    print(json.dumps(out, indent=1) if args.json else out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
