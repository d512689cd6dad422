"""The passage combiner's weights side by side in one run: ``shelfwise eval``'s pipeline (the collection's own
calibration, bm25 / dense / navigation, the MiniLM embedder, no generative readout) once with the weights before
docs/eval/combiner.md and once with the weights in core/navigation/decision.py now, on evaluation data only.

    nice -n 10 .venv/bin/python benchmarks/combiner_compare.py --out docs/eval/combiner-compare.json

Each weight set recalibrates the collection (the stored calibration names the prior it scaled), which changes the
upper levels' scale only, never their order; so both rows walk the same tree with the same budgets.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from shelfwise.core.evaluation.run import run_eval
from shelfwise.core.models.llama.openmp import tune_openmp
from shelfwise.core.navigation import decision
from shelfwise.core.settings import Budgets, Settings
from shelfwise.core.shelf import Shelf

ROOT = Path(__file__).resolve().parents[1]
BEFORE = {"g_cos_max": 1.0, "g_lex_max": 0.25, "g_cos_nb": 0.2, "z_lm": 0.3, "z_judge": 1.0}
SETS = {"cqa-test": ("conditionalqa", "test", None), "squad": ("squad", "all", 200),
        "cqa-tune": ("conditionalqa", "tune", None)}
KEYS = ("document_hit1", "section_hit1", "passage_hit1", "passage_mrr", "passage_recall10", "median_seconds")


def main() -> None:
    tune_openmp()  # before llama.cpp loads (the embedder is made in Shelf), as the CLI does
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "eval" / "combiner-compare.json")
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    after = dict(decision._PRIOR_BY_KIND["passage"])
    settings = Settings(budgets=Budgets(passages=10), n_threads=1)
    out: dict = {"weights": {"before": BEFORE, "after": after}, "sets": {}}
    with Shelf(settings) as shelf:
        for name in args.only or list(SETS):
            dataset, split, limit = SETS[name]
            rows: dict = {}
            for label, weights in (("before", BEFORE), ("after", after)):
                decision._PRIOR_BY_KIND["passage"] = weights
                t0 = time.perf_counter()
                rep = run_eval(dataset, limit=limit, methods=["bm25", "dense", "navigation"], embedder=shelf.embedder,
                               backend=None, settings=settings, sweep=False, log=print, split=split)
                for method, res in rep.methods.items():
                    if method != "navigation" and label == "after":
                        continue  # the baselines do not read the combiner
                    key = method if method != "navigation" else f"navigation ({label})"
                    rows[key] = {k: res.metrics.get(k) for k in KEYS}
                print(name, label, {k: v for k, v in rows.items()}, f"{time.perf_counter() - t0:.0f} s", flush=True)
            decision._PRIOR_BY_KIND["passage"] = after
            out["sets"][name] = {"dataset": dataset, "split": split, "limit": limit, "questions": rep.questions,
                                 "methods": rows}
            args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
