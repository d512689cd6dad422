"""``shelfwise ask QUESTION --no-generate`` as a process: wall time and peak memory (max RSS), this tree against a
baseline checkout, runs alternated in one session so both see the same machine.

    git worktree add --detach ../before <commit>      # the baseline
    .venv/bin/python benchmarks/product/ask_no_generate.py --before ../before --runs 7 [--after TREE] [--db LIBRARY]

The baseline (and ``--after``, else this tree) is imported through a ``.pyroot`` folder the script makes in it
(``shelfwise/{core,app,...}`` linked to the checkout, put first on ``PYTHONPATH``), with this tree's virtual
environment. Without ``--db`` the bundled
sample is ingested once into a scratch folder first (by this tree). Prints one JSON object: per side the median and
each run's seconds and max RSS (MiB), and after/before ratios of the medians. Each run is also checked to print the
same answer lines on both sides (timings masked).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHELFWISE = Path(sys.executable).parent / "shelfwise"
QUESTION = "How many days of annual leave do employees get?"
PACKAGES = ("core", "app", "ingest", "resources", "evaluation")


def pyroot(tree: Path) -> Path:
    """``tree/.pyroot`` with ``shelfwise/<package>`` linked to the tree's folders."""
    root = tree / ".pyroot" / "shelfwise"
    root.mkdir(parents=True, exist_ok=True)
    for name in PACKAGES:
        link = root / name
        if not link.exists() and (tree / name).is_dir():
            link.symlink_to(tree / name)
    return tree / ".pyroot"


def one_run(db: Path, path: Path | None) -> tuple[float, float, str]:
    """Seconds, max RSS in MiB and the masked output of one ``ask --no-generate`` process."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if path is not None:
        env["PYTHONPATH"] = str(path)
    else:
        env.pop("PYTHONPATH", None)
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(SHELFWISE), "--db", str(db), "ask", QUESTION, "--no-generate"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    assert proc.stdout is not None
    out = proc.stdout.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"ask failed ({proc.returncode}):\n{out[-2000:]}")
    masked = re.sub(r"\d+(\.\d+)? s\)", "N s)", out)
    return seconds, usage.ru_maxrss / 1024, masked


def sample_library(work: Path) -> Path:
    from shelfwise.resources import path as resource_path

    shutil.copytree(resource_path("sample"), work / "sample")
    db = work / "library.db"
    subprocess.run([str(SHELFWISE), "--db", str(db), "ingest", str(work / "sample")], check=True,
                   stdout=subprocess.DEVNULL)
    return db


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", type=Path, required=True, help="a checkout of the baseline commit")
    ap.add_argument("--after", type=Path, help="a checkout of the commit measured (default: this tree)")
    ap.add_argument("--db", type=Path, help="the library to ask (default: the sample, ingested first)")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ask-no-generate-"))
    try:
        db = args.db or sample_library(work)
        sides = {"before": pyroot(args.before.resolve()), "after": pyroot(args.after.resolve()) if args.after else None}
        # each side asks its own copy: a side may rename what the library stores (an identity rule) or add to it
        dbs = {name: work / f"{name}.db" for name in sides}
        for name, path in sides.items():
            shutil.copyfile(db, dbs[name])
            one_run(dbs[name], path)  # warm the page cache (the model files, the library); the side's first use
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in sides}
        for _ in range(args.runs):
            outputs = []
            for name, path in sides.items():
                seconds, rss, out = one_run(dbs[name], path)
                runs[name].append((seconds, rss))
                outputs.append(out)
            if outputs[0] != outputs[1]:
                raise SystemExit(f"the answers differ:\n--- before\n{outputs[0]}\n--- after\n{outputs[1]}")
        report: dict[str, object] = {"question": QUESTION, "runs": args.runs, "library": str(db),
                                     "before_tree": str(args.before),
                                     "after_tree": str(args.after or ROOT)}
        for name, values in runs.items():
            report[name] = {"median_s": round(statistics.median(v[0] for v in values), 3),
                            "median_max_rss_mib": round(statistics.median(v[1] for v in values), 1),
                            "seconds": [round(v[0], 3) for v in values],
                            "max_rss_mib": [round(v[1], 1) for v in values]}
        b, a = report["before"], report["after"]
        assert isinstance(b, dict) and isinstance(a, dict)
        report["after_over_before"] = {"seconds": round(a["median_s"] / b["median_s"], 3),
                                       "max_rss": round(a["median_max_rss_mib"] / b["median_max_rss_mib"], 3)}
        print(json.dumps(report, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
