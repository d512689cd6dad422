"""A long unspaced CJK line against ASCII of the same size, parsed side by side in one run (issue 27's weak case:
"a 10 MB CJK line 20x slower to parse than ASCII").

    python benchmarks/product/cjk_line.py                 # 10 MB each, 3 repeats
    python benchmarks/product/cjk_line.py --mb 1 10 --repeats 1 --json

Each file is one line of text written to a temporary folder and parsed by the real text parser in this process
(:func:`shelfwise.ingest.registry.parse`, the same call the parse worker makes). Kinds:

- ``cjk``: unspaced Japanese (no space anywhere: every piece comes from the character split);
- ``ascii``: English words with spaces (the word split);
- ``ascii-unspaced``: one giant identifier of ASCII letters (the character split on non-CJK text).

Reported per kind and size: the best of ``--repeats`` CPU times of this process (``time.process_time``: on a
shared machine the wall clock mostly measures the other jobs) and wall-clock times, passages, and the CPU-time
ratio to ``ascii``. One file is parsed at a time and the repeats interleave the kinds.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from shelfwise.ingest import registry
from shelfwise.ingest.model import Limits

MB = 1_000_000
CJK_UNIT = "年次休暇申請書類提出期限上司承認必要"  # 18 characters, 54 bytes of UTF-8
ASCII_UNIT = "annual leave request form due "  # 30 bytes
ASCII_RUN = "annualleaverequestformdue"


def make(folder: Path, kind: str, n_bytes: int) -> Path:
    unit = {"cjk": CJK_UNIT, "ascii": ASCII_UNIT, "ascii-unspaced": ASCII_RUN}[kind]
    size = len(unit.encode("utf-8"))
    path = folder / f"{kind}-{n_bytes // MB}mb.txt"
    path.write_text(unit * (n_bytes // size) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, nargs="+", default=[10], help="file sizes in MB (default 10)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--kinds", nargs="+", default=["cjk", "ascii", "ascii-unspaced"])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    limits = Limits()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="shelfwise-cjk-") as tmp:
        for size in args.mb:
            files = {k: make(Path(tmp), k, size * MB) for k in args.kinds}
            best: dict[str, float] = {}
            wall: dict[str, float] = {}
            passages: dict[str, int] = {}
            warnings: dict[str, list[str]] = {}
            for _ in range(args.repeats):
                for kind, path in files.items():
                    t0, c0 = time.perf_counter(), time.process_time()
                    doc = registry.parse(path, limits)
                    dt, dc = time.perf_counter() - t0, time.process_time() - c0
                    best[kind] = min(best.get(kind, dc), dc)
                    wall[kind] = min(wall.get(kind, dt), dt)
                    passages[kind] = doc.count("passage")
                    warnings[kind] = list(doc.warnings)
            for kind in args.kinds:
                rows.append({"mb": size, "kind": kind, "cpu_seconds": round(best[kind], 2),
                             "wall_seconds": round(wall[kind], 2), "passages": passages[kind],
                             "vs_ascii": round(best[kind] / best["ascii"], 2) if "ascii" in best else None,
                             "warnings": warnings[kind][:2]})
            for p in files.values():
                p.unlink()
    if args.json:
        print(json.dumps({"repeats": args.repeats, "rows": rows}, indent=1, ensure_ascii=False))
    else:
        print(f"{'MB':>4} {'kind':<15} {'CPU s':>8} {'wall s':>8} {'passages':>9} {'vs ascii':>9}")
        for r in rows:
            print(f"{r['mb']:>4} {r['kind']:<15} {r['cpu_seconds']:>8} {r['wall_seconds']:>8} {r['passages']:>9} "
                  f"{r['vs_ascii']!s:>9}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
