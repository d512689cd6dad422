"""Whether the value found is shown first (issue 48, sessions 22 and 23): the logistic model and the thresholds of
``core/answers/short_confidence.py``, chosen on the TRAINING data only.

The costs, fixed before any evaluation set was looked at: a wrong value shown first costs :data:`WRONG_COST` (2)
times what a right one gains (session 22: a right value saves the reader the sentence; a wrong one, shown large
above it, is read first and may be taken; the sentence beneath catches most, so twice, not ten times: shown where
P(right) >= 2/3); a wrong yes or no costs :data:`YES_NO_WRONG_COST` (3; session 23): "No: <sentence>" over a
sentence that says yes tells the reader the opposite of what they then read, the worst thing an answer can show,
so it is shown where P(right) >= 3/4. No value costs nothing (the sentence is shown first either way).

The data: the items of ``short_walk.py`` (COVID-QA, ConditionalQA TRAIN and PubMedQA's yes/no questions; each
question asked of its document's passages through a stand-in of the walk, its sentences chosen by the product's
``extract_answer`` with the encoder, each carrying the walk's evidence). Each item gives one row: the value the
product's ranker puts first (before any threshold; a yes or no for a question read as yes/no), its
:class:`ShowFeatures`, and whether it is right ("right": holds the gold or lies within it, ``short_tune.right``; a
yes or no: the gold's).

The weights are fitted by L2-regularised logistic regression on every row with a value (one model: values and yes/no
apart only by an indicator); each threshold is the point of a 0.05 grid with the highest net gain on out-of-fold
probabilities (each row's from a fit on the other documents' rows, 5 folds), over the value rows (+1, -2) and over
the yes/no rows (+1, -3). The same choice on the even-numbered documents, graded on the odd ones, says how well it
carries. ``before``: session 22's model (main at 9d34dcb: the span features only, yes/no always shown), graded on
the same rows, beside every value shown (the ranker alone):

    .venv/bin/python benchmarks/research/short_show.py /work/s23/answers/walk-items.json --out docs/eval/short-show.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from short_tune import right

from shelfwise.core.answers.first_value import deciding_sentence, show_features, yes_no_features
from shelfwise.core.answers.polarity import polarity
from shelfwise.core.answers.short import _lead_in_list, asked_kind, value_candidates
from shelfwise.core.answers.short_confidence import NAMES, SHOW, SHOW_ALL, TYPICAL, ShowWeights, confidence
from shelfwise.core.answers.types import Extracted

WRONG_COST = 2.0  # a wrong value shown first costs twice what a right one gains (see the module doc)
YES_NO_WRONG_COST = 3.0  # a wrong yes or no, three times (see the module doc)
RIDGE = 1.0  # L2 penalty of the logistic fit (on standardised features; the bias is not penalised)
# session 22's model (main at 9d34dcb): its ten weights, none on the walk's evidence; a yes or no always shown
BEFORE = ShowWeights(weights=(0.3068, 0.2609, 0.2671, 0.3254, 0.3721, -0.3861, 0.6232, -0.0828, -0.563, -0.259,
                              30.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), threshold=0.7, yes_no_threshold=0.0)
# session 23's model (main at ca8a3c0): one model for values and yes/no, an indicator apart
SESSION_23 = ShowWeights(weights=(-3.2197, 0.3356, 0.8263, 0.012, 0.7659, 0.6019, 0.9917, -1.3356, -0.015, -0.1123,
                                  2.4879, -0.2888, 1.5401, 2.7491, -0.6749, -0.7922, 0.0, 0.0, 0.0),
                         threshold=0.55, yes_no_threshold=0.75)
THING = ("name", "place", "list", "thing")


def _extracted(item: dict[str, Any]) -> list[Extracted]:
    return [Extracted(s["text"], s["number"], s["start"], s["end"], s["score"], s.get("header", ""),
                      cosine=s.get("cosine"), lead=s.get("lead")) for s in item["sentences"]]


def rows_of(items: list[dict[str, Any]], model: Any = None) -> list[dict[str, Any]]:
    """One row per item whose question the product gives a value (see the module doc); ``model``: the answer model
    also weighs the phrases for a thing (``--read``, session 25)."""
    docs: dict[str, int] = {}
    rows = []
    for item in items:
        question, gold, sents = item["question"], item["gold"], _extracted(item)
        kind = asked_kind(question)
        if not sents or kind == "span":
            continue
        row: dict[str, Any] = {"kind": kind, "set": item["set"], "doc": docs.setdefault(item["doc"], len(docs)),
                               "gold": gold, "gold_yes_no": bool(item.get("yes_no"))}
        passages = item["passage_cos"]
        if kind == "yes_no":
            deciding = deciding_sentence(question, sents)
            says = polarity(question, deciding.text)
            row.update(value=says, features=yes_no_features(question, sents, deciding, says, passages),
                       right=says.lower() == gold.lower())
            rows.append(row)
            continue
        listed = _lead_in_list(question, sents) if kind == "list" else None
        cands = [] if listed else value_candidates(kind, question, sents, model=model)
        row["read"] = bool(cands) and cands[0].model is not None
        if listed is not None:
            row.update(value=listed.text, features=None)
        elif cands and not (cands[0].ranked and cands[0].score < 0) and cands[0].text:
            row.update(value=cands[0].text, features=show_features(question, cands, passages))
        else:
            row.update(value="", features=None)
        row["right"] = bool(row["value"]) and right(row["value"], gold)
        rows.append(row)
    return rows


def fit(rows: list[dict[str, Any]]) -> np.ndarray:
    """Logistic regression of ``right`` on the features (IRLS, L2 on the standardised non-bias weights); the weights
    on the raw features."""
    x = np.array([r["features"].vector() for r in rows], dtype=float)
    y = np.array([r["right"] for r in rows], dtype=float)
    mu, sd = x.mean(0), x.std(0)
    mu[0], sd[0] = 0.0, 1.0
    sd[sd == 0] = 1.0
    z = (x - mu) / sd
    w = np.zeros(z.shape[1])
    pen = np.full(z.shape[1], RIDGE)
    pen[0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(z @ w, -30, 30)))
        grad = z.T @ (p - y) + pen * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(pen) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    raw = w / sd
    raw[0] = w[0] - (w[1:] * mu[1:] / sd[1:]).sum()
    return raw


def _yes_no(r: dict[str, Any]) -> bool:
    return r["features"] is not None and r["features"].yes_no


def decide(rows: list[dict[str, Any]], show: ShowWeights) -> list[bool]:
    """Whether each row's value is shown (a lead-in list always is)."""
    return [bool(r["value"]) and (r["features"] is None or show.shows(r["features"])[0]) for r in rows]


def _net(rows: list[dict[str, Any]], shown: list[bool]) -> float:
    gain = sum(1.0 if r["right"] else -(YES_NO_WRONG_COST if _yes_no(r) else WRONG_COST)
               for s, r in zip(shown, rows, strict=True) if s)
    return gain / max(len(rows), 1)


def grade(rows: list[dict[str, Any]], show: ShowWeights) -> dict[str, Any]:
    """Counts; ``net``: the gain per question (+1 right, minus the cost of a wrong one)."""
    shown = decide(rows, show)
    good = sum(s and r["right"] for s, r in zip(shown, rows, strict=True))
    n, k = len(rows), sum(shown)
    return {"asked": n, "shown": k, "right": good, "precision": round(good / max(k, 1), 4),
            "recall": round(good / max(n, 1), 4), "net": round(_net(rows, shown), 4)}


FOLDS = 5


def out_of_fold(rows: list[dict[str, Any]]) -> list[float]:
    """Each row's P(right) from a fit on the other documents' rows (documents split in :data:`FOLDS` by number);
    1.0 for a row without features (a lead-in list, always shown)."""
    probs = [1.0] * len(rows)
    for k in range(FOLDS):
        train = [r for r in rows if r["features"] is not None and r["doc"] % FOLDS != k]
        show = ShowWeights(tuple(float(v) for v in fit(train)), 0.0)
        for i, r in enumerate(rows):
            if r["features"] is not None and r["doc"] % FOLDS == k:
                probs[i] = confidence(r["features"], show)
    return probs


GRID = [round(float(t), 2) for t in np.arange(0.0, 0.951, 0.05)]


def choose(rows: list[dict[str, Any]], yes_no_apart: bool = False,
           read_apart: bool = False) -> tuple[ShowWeights, dict[str, list[tuple[float, float]]]]:
    """The fit on every row with a value, and each threshold (values, yes/no) with the highest net gain on the rows'
    out-of-fold probabilities (:func:`out_of_fold`: a threshold chosen on the probabilities of the rows it was
    fitted on would follow their noise), on a grid of 0.05; and the net gain at each point of each grid.
    ``yes_no_apart`` (session 24): the values keep the chosen model's weights and threshold (``SHOW``); a yes or no
    gets a model of its own, fitted on the yes/no rows alone, and its threshold chosen the same way. ``read_apart``
    (session 25): a model for the values the answer model read, fitted on those rows alone (measured, not kept), its
    threshold chosen the same way; a yes or no keeps ``SHOW``'s."""
    if read_apart:
        part_rows = [r for r in rows if r["features"] is not None and r.get("read")]
        weights = tuple(round(float(v), 4) for v in fit(part_rows))
        probs = out_of_fold(part_rows)
        curve = [(t, round(_net(part_rows, [p >= t for p in probs]), 4)) for t in GRID]
        best_t = max(curve, key=lambda x: (x[1], -x[0]))[0]
        return ShowWeights(weights, best_t, SHOW.yes_no_threshold, SHOW.yes_no_weights), {"read": curve}
    if yes_no_apart:
        part_rows = [r for r in rows if _yes_no(r)]
        weights = tuple(round(float(v), 4) for v in fit(part_rows))
        probs = out_of_fold(part_rows)
        curve = [(t, round(_net(part_rows, [p >= t for p in probs]), 4)) for t in GRID]
        best_t = max(curve, key=lambda x: (x[1], -x[0]))[0]
        return ShowWeights(SHOW.weights, SHOW.threshold, best_t, yes_no_weights=weights), {"yes_no": curve}
    scored = [r for r in rows if r["features"] is not None]
    weights = tuple(round(float(v), 4) for v in fit(scored))
    probs = out_of_fold(rows)
    curves: dict[str, list[tuple[float, float]]] = {}
    best: dict[str, float] = {}
    for name, pick in (("value", lambda r: not _yes_no(r)), ("yes_no", _yes_no)):
        part = [(r, p) for r, p in zip(rows, probs, strict=True) if pick(r)]
        part_rows = [r for r, _ in part]
        curves[name] = [(t, round(_net(part_rows, [bool(r["value"]) and p >= t for r, p in part]), 4)) for t in GRID]
        best[name] = max(curves[name], key=lambda x: (x[1], -x[0]))[0]
    return ShowWeights(weights, best["value"], best["yes_no"]), curves


def report(rows: list[dict[str, Any]], show: ShowWeights) -> dict[str, Any]:
    parts: dict[str, Any] = {}
    for name, pick in (("all", lambda r: True), ("thing", lambda r: r["kind"] in THING),
                       ("value", lambda r: r["kind"] not in (*THING, "yes_no")), ("yes_no", _yes_no),
                       ("covidqa", lambda r: r["set"] == "covidqa"),
                       ("conditionalqa", lambda r: r["set"] == "conditionalqa" and not _yes_no(r)),
                       ("yes_no/conditionalqa", lambda r: _yes_no(r) and r["set"] == "conditionalqa"),
                       ("yes_no/pubmedqa", lambda r: _yes_no(r) and r["set"] == "pubmedqa"),
                       ("yes_no/covid_faq", lambda r: _yes_no(r) and r["set"] == "covid_faq")):
        part = [r for r in rows if pick(r)]
        parts[name] = {"every value shown": grade(part, SHOW_ALL), "before (session 22)": grade(part, BEFORE),
                       "session 23": grade(part, SESSION_23), "session 24 (SHOW)": grade(part, SHOW),
                       "after": grade(part, show)}
    return parts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("items", type=Path, nargs="+", help="short_walk.py's items (one file or more)")
    ap.add_argument("--out", type=Path, default=Path("/tmp/short-show.json"))
    ap.add_argument("--yes-no-apart", action="store_true",
                    help="keep the values' model; fit a yes or no's own (session 24; see choose)")
    ap.add_argument("--read", action="store_true", help="the answer model weighs the phrases for a thing; fit the "
                    "gate of the values it read (session 25; see choose)")
    args = ap.parse_args()
    model = None
    if args.read:
        from shelfwise.core.models.llama.backend import LlamaBackend
        from shelfwise.core.paths import models_dir

        model = LlamaBackend(str(models_dir() / "gemma-3-270m-q4_k_m.gguf"), n_threads=2)
    rows = rows_of([item for path in args.items for item in json.loads(path.read_text())], model)
    if args.read:  # the rows the model read; the others are gated by SHOW as before
        rows = [r for r in rows if r.get("read")]
    print(f"{len(rows)} rows, {sum(r['features'] is not None for r in rows)} with a ranked value or a yes/no",
          flush=True)
    apart = args.yes_no_apart
    chosen, curves = choose(rows, apart, args.read)
    even, _ = choose([r for r in rows if r["doc"] % 2 == 0], apart, args.read)
    odd = [r for r in rows if r["doc"] % 2 == 1]
    # the same choice without the walk's evidence (each read as typical): what the evidence adds, out of fold
    blind = [r | {"features": dataclasses.replace(r["features"], cosine=None, lead=None, passage=None,
                                                  passage_lead=None)} if r["features"] is not None else r
             for r in rows]
    _, blind_curves = choose(blind, apart, args.read)
    evidence = [r["features"] for r in rows if r["features"] is not None]
    typical = {k: round(float(np.median([getattr(f, k) for f in evidence if getattr(f, k) is not None])), 3)
               for k in TYPICAL}
    out = {"data": "traindata/covidqa derived/pairs.jsonl.gz (and faq_pairs.jsonl.gz with --sets faq), "
                   "traindata/conditionalqa_train (train.json, derived/pairs.jsonl.gz), traindata/pubmedqa_l, "
                   "through short_walk.py's stand-in of the walk: " + ", ".join(str(p) for p in args.items),
           "wrong_cost": WRONG_COST, "yes_no_wrong_cost": YES_NO_WRONG_COST, "ridge": RIDGE, "features": NAMES,
           "typical (medians of the walk's evidence)": typical,
           "chosen": {"weights": dict(zip(NAMES, chosen.weights, strict=True)), "threshold": chosen.threshold,
                      "yes_no_threshold": chosen.yes_no_threshold,
                      **({"yes_no_weights": dict(zip(NAMES, chosen.yes_no_weights, strict=True))}
                         if chosen.yes_no_weights else {})},
           "net_by_threshold_out_of_fold": curves,
           "net_by_threshold_out_of_fold_without_the_walks_evidence": blind_curves,
           "train": report(rows, chosen),
           "held_out": {"chosen_on_even": {"weights": dict(zip(NAMES, even.weights, strict=True)),
                                           "threshold": even.threshold, "yes_no_threshold": even.yes_no_threshold,
                                           **({"yes_no_weights": dict(zip(NAMES, even.yes_no_weights, strict=True))}
                                              if even.yes_no_weights else {})},
                        "odd": report(odd, even)},
           "code": f"ShowWeights(weights={chosen.weights}, threshold={chosen.threshold}, "
                   f"yes_no_threshold={chosen.yes_no_threshold}, yes_no_weights={chosen.yes_no_weights})"}
    args.out.write_text(json.dumps(out, indent=1))
    print(json.dumps({k: out[k] for k in ("typical (medians of the walk's evidence)", "chosen", "code")}, indent=1))
    print("net by threshold (out of fold):", json.dumps(curves))
    print("... without the walk's evidence:", json.dumps(blind_curves))
    for key, val in out["train"].items():
        print(key, val)
    print("held out (odd documents):", json.dumps(out["held_out"]["odd"]))


if __name__ == "__main__":
    main()
