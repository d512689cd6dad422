"""Choose when an answer says "Not found in your documents" on data built for it, and report the trade-off.

Unanswerable questions are made from answerable ones: each question is walked twice, once over the whole collection
(answerable) and once with its gold document left out of the walk's scope (unanswerable: a ConditionalQA question
asked of the library without its guide; an XQuAD question, which is SQuAD v1.1 dev's, asked of the collection
without its article's paragraphs). ConditionalQA's own ``not_answerable`` questions count as unanswerable too. Per
walk it records the evidence the not-found rule reads: the best shown passage's query cosine (``cos``), the walk's
P(relevant) of its top passage (``p``), and the share of the question's key terms the top passages hold
(``cov``, ``core/answers/coverage.py``).

The rule: not found when the encoder's old rule says so (``cos < found_min_cosine`` or ``p < abstain_max_p``), or
when ``cov < covered_min`` and ``cos < covered_max_cosine``. The curve over (covered_min, covered_max_cosine) is
printed for each set: not found on the unanswerable walks against found on the answerable ones. The point is chosen
on ConditionalQA's TUNE half only (most not-found on unanswerable walks while the answerable found drop by at most
0.03 against the old rule); the other sets are reported with it.

    .venv/bin/python benchmarks/research/not_found_tune.py --out docs/eval/not-found.json
    (the default encoder's evaluation collections: shelfwise eval conditionalqa / shelfwise eval xquad --lang en
    build them; ``--xquad LANG,...`` and ``--limit N`` choose the XQuAD sets)
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from shelfwise.core.answers.answer import passage_cosines
from shelfwise.core.answers.coverage import key_coverage
from shelfwise.core.answers.tuning import tuning_for
from shelfwise.core.navigation.request import clipped_request
from shelfwise.core.navigation.scope import ResolvedScope, Scope
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.paths import data_dir
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store.db import Store
from shelfwise.evaluation.datasets import EvalQuestion, EvalSet
from shelfwise.evaluation.run import EVAL_DB_VERSION, load_dataset

COVERED_MIN = (0.0, 0.2, 0.34, 0.4, 0.5, 0.6, 0.67, 0.75)
COVERED_MAX_COSINE = (0.0, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 1.01)
MAX_DROP = 0.03


def features(walk: LibraryWalk, q: EvalQuestion, scope: ResolvedScope | None) -> dict[str, float]:
    request = replace(clipped_request(q.query, None, walk.backend), scope=scope)
    r = walk.search(request)
    hits = r.hits[:5]
    cos = passage_cosines(r, hits)
    return {"cos": round(max(cos.values(), default=0.0), 4), "p": round(hits[0].score if hits else 0.0, 4),
            "cov": round(key_coverage(q.query, hits), 4)}


def without(store: Store, collection_id: int, keep: set[int]) -> ResolvedScope:
    docs = frozenset(keep)
    total = len(store.documents(collection_id))
    return ResolvedScope(Scope(), docs, total)


def walk_set(shelf: Shelf, ds: EvalSet, group: Any, limit: int | None) -> list[dict[str, Any]]:
    """Every question with a gold answer walked over its collection and without its group's documents;
    ``group(path)`` names the group a document belongs to (a guide, an article)."""
    store = Store(data_dir() / "eval" / f"{ds.store_name}-v{EVAL_DB_VERSION}.db")
    walk = LibraryWalk(store, shelf.models, collection=ds.store_name)
    coll = store.find_collection(ds.store_name)
    if coll is None:
        raise SystemExit(f"no evaluation collection {ds.store_name}: run shelfwise eval for it first")
    docs = {d.path: d.id for d in store.documents(coll.id)}
    rows = []
    questions = [q for q in ds.questions if q.answers or q.not_answerable][: limit or None]
    t0 = time.perf_counter()
    for i, q in enumerate(questions):
        if q.not_answerable:
            rows.append({"qid": q.qid, "kind": "not_answerable", **features(walk, q, None)})
            continue
        rows.append({"qid": q.qid, "kind": "answerable", **features(walk, q, None)})
        gold = {group(g.path) for g in q.gold}
        keep = {i for path, i in docs.items() if group(path) not in gold}
        rows.append({"qid": q.qid, "kind": "without_gold", **features(walk, q, without(store, coll.id, keep))})
        if i % 25 == 0:
            print(f"  {ds.name}: {i}/{len(questions)} ({time.perf_counter() - t0:.0f} s)", flush=True)
    store.close()
    return rows


def rates(rows: list[dict[str, Any]], base: tuple[float, float], covered_min: float,
          covered_max_cosine: float) -> dict[str, Any]:
    def not_found(r: dict[str, Any]) -> bool:
        return (r["cos"] < base[0] or r["p"] < base[1]
                or (r["cov"] < covered_min and r["cos"] < covered_max_cosine))

    ans = [r for r in rows if r["kind"] == "answerable"]
    un = [r for r in rows if r["kind"] != "answerable"]
    return {"found_answerable": round(sum(not not_found(r) for r in ans) / max(len(ans), 1), 4),
            "not_found_unanswerable": round(sum(not_found(r) for r in un) / max(len(un), 1), 4),
            "answerable": len(ans), "unanswerable": len(un)}


def curve(rows: list[dict[str, Any]], base: tuple[float, float]) -> list[dict[str, Any]]:
    return [{"covered_min": k, "covered_max_cosine": c, **rates(rows, base, k, c)}
            for k in COVERED_MIN for c in COVERED_MAX_COSINE]


def choose(points: list[dict[str, Any]]) -> dict[str, Any]:
    """The point that says not found most on unanswerable walks while finding answerable ones at most MAX_DROP
    less than the old rule (covered_min 0)."""
    old = next(p for p in points if p["covered_min"] == 0.0)
    ok = [p for p in points if p["found_answerable"] >= old["found_answerable"] - MAX_DROP - 1e-9]
    return max(ok, key=lambda p: (p["not_found_unanswerable"], p["found_answerable"], -p["covered_min"]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/not-found.json"))
    ap.add_argument("--xquad", default="en", help="XQuAD languages (comma-separated; '' for none)")
    ap.add_argument("--limit", type=int, default=None, help="questions per XQuAD set")
    ap.add_argument("--splits", default="tune,test", help="ConditionalQA halves to walk ('' for none)")
    ap.add_argument("--rows", type=Path, nargs="*", default=[],
                    help="no walking: read the rows other runs wrote (their --out) and report")
    args = ap.parse_args()
    out: dict[str, Any] = {"sets": {}}
    sets: dict[str, list[dict[str, Any]]] = {}
    if args.rows:
        for path in args.rows:
            done = json.loads(path.read_text())
            out["encoder"], out["old_rule"] = done["encoder"], done["old_rule"]
            sets.update({name: s["rows"] for name, s in done["sets"].items()})
        base = (out["old_rule"]["found_min_cosine"], out["old_rule"]["abstain_max_p"])
    else:
        with Shelf(Settings(db_path=Path("/tmp/unused-shelf.db"))) as shelf:
            tuning = tuning_for(shelf.models.embedder)
            base = (tuning.found_min_cosine, tuning.abstain_max_p)
            out["encoder"] = shelf.models.embedder.model_id
            out["old_rule"] = {"found_min_cosine": base[0], "abstain_max_p": base[1]}
            for split in [x for x in args.splits.split(",") if x]:
                ds = load_dataset("conditionalqa", split=split)
                ds.questions = [q for q in load_cqa_all(split)]
                sets[f"conditionalqa-{split}"] = walk_set(shelf, ds, lambda path: path, None)
                dump(args.out, out, sets)
            for lang in [x for x in args.xquad.split(",") if x]:
                ds = load_dataset("xquad", args.limit, lang=lang)
                sets[f"xquad-{lang}"] = walk_set(shelf, ds, lambda path: path.rsplit("/", 1)[0], None)
                dump(args.out, out, sets)
        if "conditionalqa-tune" not in sets:
            return  # rows only: reported by a --rows run with the tune half
    tune = curve(sets["conditionalqa-tune"], base)
    chosen = choose(tune)
    out["chosen_on"] = "conditionalqa-tune"
    out["chosen"] = {"covered_min": chosen["covered_min"], "covered_max_cosine": chosen["covered_max_cosine"]}
    for name, rows in sets.items():
        points = tune if name == "conditionalqa-tune" else curve(rows, base)
        out["sets"][name] = {"old": rates(rows, base, 0.0, 0.0),
                             "chosen": rates(rows, base, chosen["covered_min"], chosen["covered_max_cosine"]),
                             "curve": points, "rows": rows}
        o, c = out["sets"][name]["old"], out["sets"][name]["chosen"]
        print(f"{name}: old rule found {o['found_answerable']} / not found {o['not_found_unanswerable']}; chosen "
              f"found {c['found_answerable']} / not found {c['not_found_unanswerable']} "
              f"({c['answerable']} answerable, {c['unanswerable']} unanswerable walks)")
    print(f"chosen on the tune half: {out['chosen']}")
    args.out.write_text(json.dumps(out, indent=1))


def dump(path: Path, out: dict[str, Any], sets: dict[str, list[dict[str, Any]]]) -> None:
    """The rows walked so far (read back with --rows)."""
    path.write_text(json.dumps({**out, "sets": {name: {"rows": rows} for name, rows in sets.items()}}, indent=1))


def load_cqa_all(split: str) -> list[EvalQuestion]:
    from shelfwise.evaluation.datasets import load_conditionalqa
    from shelfwise.evaluation.run import shared_dir

    return load_conditionalqa(shared_dir() / "evaldata" / "conditionalqa_dev", answerable_only=False,
                              split=split).questions


if __name__ == "__main__":
    main()
