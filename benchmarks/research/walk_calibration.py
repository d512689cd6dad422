"""How well the walk's P(relevant) says whether its first passage and its first document are right (session 28).

Each question of an evaluation or training collection (built and calibrated as ``shelfwise eval`` builds it) is
walked as the product walks it, with the collection's stored calibration (its probes' Platt scale and offset per
level), or with ``--prior`` with the prior weights alone (no calibration: the walk's ranking is the same, only the
level of P differs); the first passage and document are judged as ``shelfwise eval`` judges them (Hit@1). Printed:
by question length, the mean P(relevant) of the first passage against passage Hit@1, and the same for documents,
with the log loss of the passage P. ``--keep-words K`` first recalibrates the collection with probes that keep K of
their sentence's words (``core/navigation/calibrate.py``'s ``make_probes``; the default 0.6): use a copy of the
library (``SHELFWISE_HOME``), it is stored.

    SHELFWISE_HOME=<home with eval/> nice -n 19 .venv/bin/python benchmarks/research/walk_calibration.py \\
        traindata:orsharc --out calib-orsharc.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from not_found_tune import load_cqa_all

from shelfwise.core.navigation.calibrate import calibrate
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.navigator import LABELS, Navigator
from shelfwise.core.navigation.request import clipped_request
from shelfwise.core.navigation.snapshots import load_decision, snapshot_for
from shelfwise.core.paths import data_dir
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store.db import Store
from shelfwise.evaluation.datasets import EvalSet
from shelfwise.evaluation.retrieval import judge
from shelfwise.evaluation.run import EVAL_DB_VERSION, load_dataset

LENGTHS = ((0, 15), (15, 30), (30, 60), (60, 10_000))  # question words


def dataset(name: str, limit: int | None) -> EvalSet:
    if name == "conditionalqa-tune":
        ds = load_dataset("conditionalqa", split="tune")
        ds.questions = [q for q in load_cqa_all("tune") if q.answers]
    elif name.startswith("xquad-"):
        ds = load_dataset("xquad", limit or 60, lang=name.split("-", 1)[1])
    else:
        ds = load_dataset(name, None, split="all")
    ds.questions = [q for q in ds.questions if q.gold][: limit or None]
    return ds


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def part(rs: list[dict[str, Any]]) -> dict[str, Any]:
        p = [r["p"] for r in rs]
        y = [r["passage_hit1"] for r in rs]
        loss = -statistics.mean(t * math.log(max(q, 1e-4)) + (1 - t) * math.log(max(1 - q, 1e-4))
                                for q, t in zip(p, y, strict=True))
        return {"n": len(rs), "mean_p": round(statistics.mean(p), 3), "median_p": round(statistics.median(p), 3),
                "passage_hit1": round(statistics.mean(y), 3),
                "section_hit1": round(statistics.mean(r["section_hit1"] for r in rs), 3),
                "mean_doc_p": round(statistics.mean(r["doc_p"] for r in rs), 3),
                "document_hit1": round(statistics.mean(r["document_hit1"] for r in rs), 3),
                "log_loss": round(loss, 3)}

    out = {"all": part(rows)}
    for lo, hi in LENGTHS:
        rs = [r for r in rows if lo <= r["words"] < hi]
        if rs:
            out[f"{lo}-{hi} words"] = part(rs)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dataset", help="conditionalqa-tune, xquad-LANG or traindata:SET")
    ap.add_argument("--out", type=Path, required=True, help="one JSON line per question, then the summary")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--prior", action="store_true", help="walk with the prior weights, not the stored calibration")
    ap.add_argument("--keep-words", type=float, default=None, help="recalibrate first with these probes (stored)")
    args = ap.parse_args()
    ds = dataset(args.dataset, args.limit)
    with Shelf(Settings(db_path=Path("/tmp/unused-shelf.db"))) as shelf, args.out.open("w") as f:
        store = Store(data_dir() / "eval" / f"{ds.store_name}-v{EVAL_DB_VERSION}.db")
        coll = store.find_collection(ds.store_name)
        if coll is None:
            raise SystemExit(f"no collection {ds.store_name} in {data_dir()}: run shelfwise eval for it first")
        embedder = shelf.models.embedder
        if args.keep_words is not None:
            calibrate(store, coll.id, embedder, None, Settings(), log=print, keep_words=args.keep_words)
        decision = DecisionModel() if args.prior else load_decision(store, coll.id, embedder, shelf.models.backend)
        nav = Navigator(store, shelf.models.backend, embedder, shelf.models.settings, decision=decision,
                        judge=shelf.models.judge)
        snap = snapshot_for(store, coll.id, embedder.model_id)
        paths = {d.id: d.path for d in store.documents(coll.id)}
        rows = []
        for q in ds.questions:
            r = nav.navigate(clipped_request(q.query, ds.store_name, shelf.models.backend))
            hit = judge(snap, paths, q, [h.node_id for h in r.hits])
            docs = [lv for lv in r.trace.levels if lv.label == LABELS["document"]]
            row = {"qid": q.qid, "words": len(q.query.split()), "p": r.hits[0].score if r.hits else 0.0,
                   "doc_p": max((c.score for c in docs[0].candidates), default=0.0) if docs else 1.0,
                   "cos": max((c.features.get("cos_max", 0.0) for c in r.trace.levels[-1].candidates[:5]),
                              default=0.0) if r.trace.levels else 0.0,
                   **{k: hit[k] for k in ("passage_hit1", "section_hit1", "document_hit1")}}
            rows.append(row)
            f.write(json.dumps(row) + "\n")
        store.close()
        result = {"dataset": args.dataset, "prior": args.prior, "keep_words": args.keep_words,
                  "calibration": decision.report.get("levels", {}), "summary": summary(rows)}
        f.write(json.dumps(result) + "\n")
    print(json.dumps(result["summary"], indent=1))


if __name__ == "__main__":
    main()
