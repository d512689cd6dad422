"""Fit the not-found rule's second part on the walks ``not_found_walks.py`` kept, and report its curve (session 27).

Per walk, the evidence of :mod:`shelfwise.core.answers.answerable` (the walk's certainty of its top passage and
document, the key terms and the *rarest* key terms the top passages hold) and session 20's rule (the encoder's old
rule and the absent-subject rule, :mod:`shelfwise.core.answers.coverage`), read against the library the walk saw
(an unanswerable walk's library is the collection without the gold's documents). A logistic regression is fitted on
the tune sets' walks that session 20's rule still calls found (unanswerable = 1), each set weighted alike; the
threshold is chosen on the tune sets with out-of-fold probabilities (5 folds by question): the most "not found" on
their unanswerable walks (the mean over the sets) while each set's answerable walks are found at most ``MAX_DROP``
less than with the old rule. The other sets are reported with the weights and threshold chosen, beside session 20's
rule, in the same run.

    .venv/bin/python benchmarks/research/not_found_fit.py walks-*.jsonl --out docs/eval/not-found-s27.json

Session 28 added ``--document-margin`` (a seventh feature, not in the product: the walk's P(relevant) of its best
document less that of the next, read off the walk's level of documents), ``--against all`` (each tune set with at
least ``ALL_FOUND_MIN_SET`` answerable walks must also find at least 1 - ``MAX_DROP`` of them, the issue's bar, not
only ``MAX_DROP`` less than the old rule, whose floor on P(relevant) hides some), ``--tune`` (the sets fitted and
chosen on: a training set walked the same way, ``traindata-orsharc``, may join them) and, in every set's report,
the product's rule (``core/answers/tuning.py``'s weights and threshold) on the same walks (``product_rule``);
``--leave-one-out`` fits on all tune sets but one and reads the one left out, in turn.
"""

from __future__ import annotations

import argparse
import json
import zlib
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from shelfwise.core.answers.answerable import FEATURES, evidence, rarity, reads
from shelfwise.core.answers.coverage import absent_terms, keep_cosine
from shelfwise.core.answers.tuning import EMBEDDINGGEMMA, Logistic
from shelfwise.core.navigation.navigator import LABELS
from shelfwise.core.navigation.trace import Hit
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store.db import Store
from shelfwise.ingest.model import Location

TUNE_SETS = ("conditionalqa-tune", "xquad-en", "sample")
MAX_DROP = 0.03
# what the fitted part is added to: "s20" (session 20's whole rule: it is fitted where that rule says found) or
# "absent" (the absent-subject rule alone: the fitted part replaces the old rule's P(relevant) and cosine floors)
BESIDE = "s20"
AGAINST = "old"  # "old": MAX_DROP less than the old rule; "all": and 1 - MAX_DROP where a set is large enough
ALL_FOUND_MIN_SET = 60
DOCUMENT_MARGIN = False  # --document-margin: the walk's document margin as a seventh feature
THRESHOLDS = tuple(round(t, 3) for t in np.arange(0.3, 0.991, 0.01))


def hits_of(row: dict[str, Any]) -> tuple[list[Hit], dict[int, float]]:
    hits = [Hit(h["node"], h["doc"], h["text"], h["p"], "", h["title"], h["heads"], Location()) for h in row["hits"]]
    return hits, {h["node"]: h["cos"] for h in row["hits"]}


def document_margin(row: dict[str, Any]) -> float:
    """The walk's P(relevant) of its best document less that of the next (the best itself where it judged one; 1.0
    where the walk had no level of documents), from the best candidates of each level the walk's row keeps."""
    levels = [lv for lv in row.get("levels", []) if lv["label"] == LABELS["document"]]
    best = sorted((c["p"] for c in levels[0]["top"]), reverse=True)[:2] if levels else []
    return best[0] - (best[1] if len(best) > 1 else 0.0) if best else 1.0


def read_rows(paths: Iterable[Path], embedder: Any, earlier: dict[tuple[str, str, str], dict[str, Any]]
              ) -> list[dict[str, Any]]:
    """Every walk with its evidence: ``x`` (:data:`FEATURES`), ``old`` (the old rule), ``s20`` (session 20's).
    The vocabulary evidence of session 20's rule (absent terms, the share of words held, the keep cosine) depends on
    the question and the library only, not on the walk: taken from ``earlier`` (docs/eval/not-found.json's rows, by
    set, question id and kind) where it is there, computed otherwise."""
    stores: dict[str, Store] = {}
    nodes: dict[str, list[tuple[int, int | None]]] = {}
    t = EMBEDDINGGEMMA
    out = []
    for path in paths:
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if row["db"] not in stores:
                stores[row["db"]] = Store(Path(row["db"]))
                nodes[row["db"]] = [(int(i), d) for i, d in stores[row["db"]].conn.execute(
                    "SELECT id, document_id FROM nodes WHERE collection_id = ?", (row["collection"],))]
            store = stores[row["db"]]
            left_out = set(row.get("without", []))
            scope = [d.id for d in store.documents(row["collection"]) if d.id not in left_out] if left_out else None
            allowed = {i for i, d in nodes[row["db"]] if d not in left_out}
            hits, cos = hits_of(row)
            q = row["question"]
            rare = rarity(store, q, allowed)
            ev = evidence(q, hits, cos, rare) if hits and reads(store, q, allowed) else None
            ev_whole = evidence(q, hits, cos, rarity(store, q, allowed, whole=True)) if hits else None
            extra = (document_margin(row),) if DOCUMENT_MARGIN else ()
            best = ev.cos if ev else 0.0
            old = not hits or best < t.found_min_cosine or hits[0].score < t.abstain_max_p
            vocab = earlier.get((row["set"], row["qid"], row["kind"]))
            if vocab is None:
                a = absent_terms(store, q, row["collection"], scope)
                vocab = {"absent": list(a.keys), "present": a.present,
                         "keep": keep_cosine(embedder, q, a.keys) if a.keys else 1.0}
            absent = (bool(vocab["absent"]) and vocab["present"] >= t.absent_min_present
                      and best < t.absent_max_cosine and vocab["keep"] < t.absent_max_keep)
            s20 = old or absent
            out.append({"set": row["set"], "qid": row["qid"], "kind": row["kind"], "question": q[-200:],
                        "unanswerable": row["kind"] != "answerable", "old": old, "s20": s20, "absent": absent,
                        "x": [*ev.vector(), *extra] if ev else None,
                        "x_whole": list(ev_whole.vector()) if ev_whole else None,
                        "top": hits[0].text[:160] if hits else ""})
    for s in stores.values():
        s.close()
    return out


def earlier_vocabulary(path: Path | None) -> dict[tuple[str, str, str], dict[str, Any]]:
    if path is None:
        return {}
    sets = json.loads(path.read_text())["sets"]
    return {(name, r["qid"], r["kind"]): r for name, s in sets.items() for r in s["rows"] if "absent" in r}


def fit(rows: list[dict[str, Any]]) -> Logistic:
    """L2 logistic regression on the rows session 20's rule calls found, each set's rows weighted to the same
    total, the classes balanced within a set; features standardised, the weights given back unscaled."""
    from sklearn.linear_model import LogisticRegression

    rows = [r for r in rows if not r[BESIDE] and r["x"] is not None]
    x = np.array([r["x"] for r in rows], dtype=np.float64)
    y = np.array([r["unanswerable"] for r in rows], dtype=np.int64)
    w = np.ones(len(rows))
    groups: dict[tuple[str, bool], list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        groups[(r["set"], r["unanswerable"])].append(i)
    for idx in groups.values():
        w[idx] = 1.0 / len(idx)
    mu, sd = x.mean(0), x.std(0) + 1e-9
    m = LogisticRegression(C=1.0, max_iter=1000).fit((x - mu) / sd, y, sample_weight=w * len(rows) / w.sum())
    coef = m.coef_[0] / sd
    return Logistic(tuple(round(float(c), 4) for c in coef), round(float(m.intercept_[0] - coef @ mu), 4))


def prob(model: Logistic, x: list[float]) -> float:
    return model.probability(x)


def says(r: dict[str, Any], p: float | None, threshold: float) -> bool:
    """The rule: what the fitted part is beside, or the fitted part where it reads the question (else the old
    rule's floors)."""
    if r[BESIDE]:
        return True
    return bool(r["old"]) if r["x"] is None or p is None else p >= threshold


def rates(rows: list[dict[str, Any]], probs: list[float | None], threshold: float, rule: str = "new") -> dict[str, Any]:
    ans = [(r, p) for r, p in zip(rows, probs, strict=True) if not r["unanswerable"]]
    un = [(r, p) for r, p in zip(rows, probs, strict=True) if r["unanswerable"]]

    def nf(r: dict[str, Any], p: float | None) -> bool:
        return bool(r[rule]) if rule in ("old", "s20") else says(r, p, threshold)

    return {"found_answerable": round(sum(not nf(r, p) for r, p in ans) / max(len(ans), 1), 4),
            "not_found_unanswerable": round(sum(nf(r, p) for r, p in un) / max(len(un), 1), 4),
            "answerable": len(ans), "unanswerable": len(un)}


def out_of_fold(rows: list[dict[str, Any]], folds: int = 5) -> list[float | None]:
    """Each tune row's probability from a model fitted without its question (folds by question id)."""
    probs: list[float | None] = [None] * len(rows)
    fold = [zlib.crc32(r["qid"].encode()) % folds for r in rows]
    for k in range(folds):
        model = fit([r for r, f in zip(rows, fold, strict=True) if f != k])
        for i, r in enumerate(rows):
            if fold[i] == k and r["x"] is not None:
                probs[i] = prob(model, r["x"])
    return probs


def choose(by_set: dict[str, list[dict[str, Any]]], probs: dict[str, list[float | None]]) -> tuple[float, list[Any]]:
    curve = []
    best = (-1.0, 1.0)
    for th in THRESHOLDS:
        r = {n: rates(by_set[n], probs[n], th) for n in by_set}
        old = {n: rates(by_set[n], probs[n], th, "old")["found_answerable"] for n in by_set}
        ok = all(r[n]["found_answerable"] >= old[n] - MAX_DROP - 1e-9 for n in by_set)
        if AGAINST == "all":
            ok = ok and all(r[n]["found_answerable"] >= 1 - MAX_DROP - 1e-9 for n in by_set
                            if r[n]["answerable"] >= ALL_FOUND_MIN_SET)
        mean = sum(r[n]["not_found_unanswerable"] for n in by_set) / len(by_set)
        curve.append({"threshold": th, "ok": ok, "mean_not_found": round(mean, 4), **{n: r[n] for n in by_set}})
        if ok and mean > best[0]:
            best = (mean, th)
    return best[1], curve


def leave_one_out(by_set: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Each tune set held out in turn: fitted and its threshold chosen (out-of-fold) on the others, the held-out set
    read with that model and threshold: how the rule carries to a library it was not fitted on."""
    out = {}
    for held in TUNE_SETS:
        rest = [n for n in TUNE_SETS if n != held]
        rows = [r for n in rest for r in by_set[n]]
        probs: dict[str, list[float | None]] = defaultdict(list)
        for r, p in zip(rows, out_of_fold(rows), strict=True):
            probs[r["set"]].append(p)
        threshold, _ = choose({n: by_set[n] for n in rest}, probs)
        model = fit(rows)
        held_probs = [prob(model, r["x"]) if r["x"] is not None else None for r in by_set[held]]
        out[held] = {"threshold": threshold, **rates(by_set[held], held_probs, threshold)}
        print(f"held out {held}: threshold {threshold} (chosen on {', '.join(rest)}): found "
              f"{out[held]['found_answerable']} / not found {out[held]['not_found_unanswerable']}", flush=True)
    return out


def main() -> None:
    global BESIDE, AGAINST, TUNE_SETS, DOCUMENT_MARGIN
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("walks", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rows", type=Path, default=None, help="read the evidence from an earlier --out")
    ap.add_argument("--vocabulary", type=Path, default=None,
                    help="session 20's rows (docs/eval/not-found.json): their vocabulary evidence reused")
    ap.add_argument("--beside", choices=("s20", "absent"), default="s20")
    ap.add_argument("--against", choices=("old", "all"), default="old")
    ap.add_argument("--tune", default=",".join(TUNE_SETS),
                    help="the sets fitted and chosen on (comma-separated; e.g. add traindata-orsharc)")
    ap.add_argument("--document-margin", action="store_true", help="the walk's document margin as a seventh feature")
    ap.add_argument("--leave-one-out", action="store_true",
                    help="also fit on all tune sets but one and read the one left out, in turn")
    args = ap.parse_args()
    BESIDE, AGAINST, TUNE_SETS = args.beside, args.against, tuple(args.tune.split(","))
    DOCUMENT_MARGIN = args.document_margin
    if args.rows:
        rows = json.loads(args.rows.read_text())["rows"]
    else:
        with Shelf(Settings(db_path=Path("/tmp/unused-shelf.db"))) as shelf:
            rows = read_rows(args.walks, shelf.models.embedder, earlier_vocabulary(args.vocabulary))
    by_set: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_set[r["set"]].append(r)
    tune_rows = [r for n in TUNE_SETS for r in by_set.get(n, [])]
    oof = out_of_fold(tune_rows)
    tune_probs: dict[str, list[float | None]] = defaultdict(list)
    for r, p in zip(tune_rows, oof, strict=True):
        tune_probs[r["set"]].append(p)
    threshold, curve = choose({n: by_set[n] for n in TUNE_SETS if n in by_set}, tune_probs)
    held_out = leave_one_out(by_set) if args.leave_one_out else None
    model = fit(tune_rows)
    features = [*FEATURES, *(("doc_margin",) if DOCUMENT_MARGIN else ())]
    report: dict[str, Any] = {"beside": BESIDE, "against": AGAINST, "features": features, "weights": model.weights,
                              "intercept": model.intercept,
                              "threshold": threshold, "chosen_on": [n for n in TUNE_SETS if n in by_set],
                              "max_drop": MAX_DROP, "tune_curve_out_of_fold": curve, "leave_one_out": held_out,
                              "sets": {}}
    for name, srows in by_set.items():
        probs = [prob(model, r["x"]) if r["x"] is not None else None for r in srows]
        shipped = EMBEDDINGGEMMA.unanswered
        assert shipped is not None
        before = [shipped.probability(r["x"][:len(shipped.weights)]) if r["x"] is not None else None for r in srows]
        report["sets"][name] = {"old": rates(srows, probs, threshold, "old"),
                                "session20": rates(srows, probs, threshold, "s20"),
                                "product_rule": rates(srows, before, EMBEDDINGGEMMA.unanswered_min),
                                "fitted": rates(srows, probs, threshold),
                                "fitted_out_of_fold": rates(srows, tune_probs[name], threshold)
                                if name in tune_probs else None,
                                "curve": [{"threshold": th, **rates(srows, probs, th)} for th in THRESHOLDS]}
        s = report["sets"][name]
        print(f"{name}: old {s['old']['found_answerable']}/{s['old']['not_found_unanswerable']}  "
              f"s20 {s['session20']['found_answerable']}/{s['session20']['not_found_unanswerable']}  "
              f"product {s['product_rule']['found_answerable']}/{s['product_rule']['not_found_unanswerable']}  "
              f"fitted {s['fitted']['found_answerable']}/{s['fitted']['not_found_unanswerable']}  "
              f"({s['old']['answerable']} answerable, {s['old']['unanswerable']} unanswerable walks)")
    print(f"weights {dict(zip(features, model.weights, strict=True))} intercept {model.intercept} "
          f"threshold {threshold}")
    for r, p in zip(rows, [prob(model, r["x"]) if r["x"] else None for r in rows], strict=True):
        r["p_unanswered"] = None if p is None else round(p, 4)
    # the evaluation and training sets' texts stay out of the repository: their rows keep the question id only
    report["rows"] = [r if r["set"].startswith("sample")
                      else {k: v for k, v in r.items() if k not in ("question", "top")} for r in rows]
    args.out.write_text(json.dumps(report, separators=(",", ":")))


if __name__ == "__main__":
    main()
