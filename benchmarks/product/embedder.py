"""Throughput and latency of the bundled sentence embedder (llama.cpp, q8_0 GGUF).

    python benchmarks/product/embedder.py                 # human-readable
    python benchmarks/product/embedder.py --json          # one JSON object
    python benchmarks/product/embedder.py --batch-tokens 1024 --max-seqs 64 --threads 2

Measures items/s for short (~35-token) and passage-length (~150-token) texts, and the latency of one query.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from shelfwise.core.models.encoders.embedder import Embedder, bundled_embedder_path

_SENTENCES = [
    "Employees may claim the cost of meals while travelling on company business",
    "receipts must be attached to every expense claim submitted after the trip",
    "The quarterly report shows revenue growth in the northern region",
    "Slides from the onboarding session describe the benefits available to new staff",
    "Sheet two lists the budget for each department and the variance against plan",
    "Remote workers should use the virtual private network when connecting from home",
    "The safety manual explains how to report an incident in the warehouse",
    "Annual leave requests need approval from a line manager two weeks in advance",
    "The data retention policy requires deleting customer records after seven years",
    "Invoices are paid within thirty days of receipt unless a dispute is raised",
    "A fire drill takes place every spring and all staff must leave the building",
    "Parental leave is available to every employee after six months of service",
]


def make_texts(emb: Embedder, n: int, target_tokens: int) -> list[str]:
    """``n`` distinct texts of about ``target_tokens`` tokens (specials included), built from the sentences."""
    texts: list[str] = []
    k = 0
    while len(texts) < n:
        words: list[str] = []
        text = ""
        while emb.count_tokens(text) < target_tokens:
            words.extend(_SENTENCES[k % len(_SENTENCES)].split())
            k += 1
            text = " ".join(words)
        while emb.count_tokens(text) > target_tokens and len(words) > 1:
            words.pop()
            text = " ".join(words)
        texts.append(f"{len(texts)} {text}")
    return texts


def items_per_second(emb: Embedder, texts: list[str], repeats: int) -> tuple[float, float]:
    """Best-of-``repeats`` items per wall second, and per CPU second of this process (robust on a busy machine)."""
    emb.embed(texts[:4])  # warm-up
    best, best_cpu = float("inf"), float("inf")
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        emb.embed(texts)
        best = min(best, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return len(texts) / best, len(texts) / best_cpu


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, default=None, help="GGUF file (default: the bundled q8_0 embedder)")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--batch-tokens", type=int, default=None)
    p.add_argument("--max-seqs", type=int, default=None)
    p.add_argument("--n", type=int, default=64, help="texts per throughput run")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)

    kwargs: dict[str, int] = {}
    if args.batch_tokens:
        kwargs["batch_tokens"] = args.batch_tokens
    if args.max_seqs:
        kwargs["max_seqs"] = args.max_seqs
    t0 = time.perf_counter()
    path = args.model or bundled_embedder_path()
    emb = Embedder(path, n_threads=args.threads, **kwargs)
    load_s = time.perf_counter() - t0

    short = make_texts(emb, args.n, 35)
    passages = make_texts(emb, args.n, 150)
    short_ips, short_cpu = items_per_second(emb, short, args.repeats)
    passage_ips, passage_cpu = items_per_second(emb, passages, args.repeats)
    query = "how do I claim meals on a business trip?"
    emb.embed_one(query)
    lat, lat_cpu = [], []
    for _ in range(20):
        t, c = time.perf_counter(), time.process_time()
        emb.embed_one(query)
        lat.append(time.perf_counter() - t)
        lat_cpu.append(time.process_time() - c)

    result = {
        "model": emb.model_id,
        "threads": emb.n_threads,
        "batch_tokens": emb.batch_tokens,
        "max_seqs": emb.max_seqs,
        "load_seconds": round(load_s, 3),
        "short_tokens": round(statistics.mean(len(emb.tokenize(t)) for t in short), 1),
        "short_items_per_s": round(short_ips, 1),
        "short_items_per_cpu_s": round(short_cpu, 1),
        "passage_tokens": round(statistics.mean(len(emb.tokenize(t)) for t in passages), 1),
        "passage_items_per_s": round(passage_ips, 1),
        "passage_items_per_cpu_s": round(passage_cpu, 1),
        "passage_tokens_per_s": round(passage_ips * statistics.mean(len(emb.tokenize(t)) for t in passages)),
        "query_latency_ms_median": round(1000 * statistics.median(lat), 2),
        "query_cpu_ms_median": round(1000 * statistics.median(lat_cpu), 2),
    }
    emb.close()
    if args.json:
        print(json.dumps(result))
    else:
        width = max(len(k) for k in result)
        for k, v in result.items():
            print(f"{k:<{width}}  {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
