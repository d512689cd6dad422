"""The int8 cosine scan's block size: CPU seconds of one scan of every row, for several blocks, in one run.

    python benchmarks/research/scan_block.py --rows 100000 --blocks 512,1024,2048,16384
    OPENBLAS_NUM_THREADS=1 python benchmarks/research/scan_block.py      # the BLAS held to one thread

``core/store/vectors.py``'s ``scores`` on random int8 rows of 768 dimensions (EmbeddingGemma's) and one float32
query; per block, the median CPU and wall seconds of ``--repeat`` scans. Why the block is what it is:
docs/scale.md ("Session 20").
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from shelfwise.core.store.vectors import scores


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--blocks", default="512,1024,2048,16384")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    q = rng.integers(-127, 128, (args.rows, args.dim), dtype=np.int8)
    scale = rng.random(args.rows).astype(np.float32)
    x = rng.standard_normal(args.dim).astype(np.float32)
    out: dict[str, dict[str, float]] = {}
    for block in (int(b) for b in args.blocks.split(",")):
        cpu, wall = [], []
        for _ in range(args.repeat):
            c, w = time.process_time(), time.perf_counter()
            scores(q, scale, x, block=block)
            cpu.append(time.process_time() - c)
            wall.append(time.perf_counter() - w)
        out[str(block)] = {"cpu_s": round(statistics.median(cpu), 4), "wall_s": round(statistics.median(wall), 4)}
    print(json.dumps({"rows": args.rows, "dim": args.dim, "blocks": out}))


if __name__ == "__main__":
    main()
