"""The passage combiner's weights side by side in one run: ``shelfwise eval``'s pipeline (the collection's own
calibration, bm25 / dense / navigation, the MiniLM embedder, no generative readout) once with the weights in
core/navigation/decision.py and once with another set from docs/eval/combiner-loco.json (``--other mean_rule``: the
best-mean-held-out choice, which the worst-case rule did not pick), on evaluation data only.

    nice -n 10 .venv/bin/python benchmarks/research/combiner_compare.py --other mean_rule \\
        --out docs/eval/combiner-compare.json

Each weight set recalibrates the collection (the stored calibration names the prior it scaled), which changes the
upper levels' scale only, never their order; so both rows walk the same tree with the same budgets.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from shelfwise.core.models.llama.openmp import tune_openmp
from shelfwise.core.navigation import decision
from shelfwise.core.settings import Budgets, Settings
from shelfwise.core.shelf import Shelf
from shelfwise.evaluation.run import run_eval

ROOT = Path(__file__).resolve().parents[2]
UNFITTED = ("z_lm", "z_judge")  # zero in these runs (no generative readout, no judge): kept at decision.py's values
SETS = {"cqa-test": ("conditionalqa", "test", None), "squad": ("squad", "all", 200),
        "cqa-tune": ("conditionalqa", "tune", None)}
KEYS = ("document_hit1", "section_hit1", "passage_hit1", "passage_mrr", "passage_recall10", "median_seconds")


def main() -> None:
    tune_openmp()  # before llama.cpp loads (the embedder is made in Shelf), as the CLI does
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "eval" / "combiner-compare.json")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--other", default="mean_rule", help="the key in combiner-loco.json whose weights to compare")
    ap.add_argument("--loco", type=Path, default=ROOT / "docs" / "eval" / "combiner-loco.json")
    args = ap.parse_args()
    shipped = dict(decision._PRIOR_BY_KIND["passage"])
    fitted = json.loads(args.loco.read_text())[args.other]["weights_per_unit_cos"]
    other = {k: round(v, 3) for k, v in fitted.items() if k not in UNFITTED} | {k: shipped[k] for k in UNFITTED}
    after = other
    settings = Settings(budgets=Budgets(passages=10), n_threads=1)
    out: dict = {"weights": {"shipped": shipped, args.other: after}, "sets": {}}
    with Shelf(settings) as shelf:
        for name in args.only or list(SETS):
            dataset, split, limit = SETS[name]
            rows: dict = {}
            for label, weights in (("shipped", shipped), (args.other, after)):
                decision._PRIOR_BY_KIND["passage"] = weights
                t0 = time.perf_counter()
                rep = run_eval(dataset, limit=limit, methods=["bm25", "dense", "navigation"], embedder=shelf.embedder,
                               backend=None, settings=settings, sweep=False, log=print, split=split)
                for method, res in rep.methods.items():
                    if method != "navigation" and label != "shipped":
                        continue  # the baselines do not read the combiner
                    key = method if method != "navigation" else f"navigation ({label})"
                    rows[key] = {k: res.metrics.get(k) for k in KEYS}
                print(name, label, {k: v for k, v in rows.items()}, f"{time.perf_counter() - t0:.0f} s", flush=True)
            decision._PRIOR_BY_KIND["passage"] = shipped
            out["sets"][name] = {"dataset": dataset, "split": split, "limit": limit, "questions": rep.questions,
                                 "methods": rows}
            args.out.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
