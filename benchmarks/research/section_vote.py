"""Usage: .venv/bin/python benchmarks/research/section_vote.py POOLS NAME...   (docs/eval/combiner.md, session 18)

Offline: the walk's last-level pick (argmax of the passage combiner) against a section vote (the softmax mass of
the pool's passages summed per section, then the best passage of the winning section). POOLS from
``benchmarks/research/combiner_loco.py collect`` (which records each candidate's section); writes POOLS/vote.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from shelfwise.core.navigation.decision import prior_model

TEMPERATURES = (0.25, 0.5, 1.0, 2.0)


def main() -> None:
    w = prior_model("passage").weights
    pools = Path(sys.argv[1])
    rules = ["argmax"] + [f"vote T={t}" for t in TEMPERATURES]
    res = {}
    for name in sys.argv[2:]:
        d = np.load(pools / f"{name}.npz")
        ends = np.cumsum(d["sizes"])
        starts = ends - d["sizes"]
        out: dict[str, list] = {r: [] for r in rules}
        for a, b in zip(starts, ends, strict=True):
            x, g, sec = d["x"][a:b], d["gold"][a:b], d["section"][a:b]
            if b == a:
                for r in rules:
                    out[r].append([0, 0, 0])
                continue
            s = x @ w
            out["argmax"].append(g[int(np.argmax(s))])
            secs = np.unique(sec)
            for t in TEMPERATURES:
                p = np.exp((s - s.max()) / t)
                mass = np.array([p[sec == k].sum() for k in secs])
                idx = np.flatnonzero(sec == secs[int(np.argmax(mass))])
                out[f"vote T={t}"].append(g[idx[int(np.argmax(s[idx]))]])
        res[name] = {r: np.mean(v, 0).round(4).tolist() for r, v in out.items()}
        print(name, "walk", d["walk"].mean(0).round(4).tolist())
        for r in rules:
            print(f"  {r:12s} P/S/D {res[name][r]}")
    (pools / "vote.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
