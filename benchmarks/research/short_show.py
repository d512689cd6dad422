"""Whether the value found is shown first (issue 48, session 22): the logistic model and the threshold of
``core/answers/short_confidence.py``, chosen on the TRAINING data only.

The cost, fixed before any evaluation set was looked at: a wrong value shown first costs :data:`WRONG_COST` (2) times
what a right one gains, and no value costs nothing (the sentence is shown first either way). A right value saves
the reader the sentence; a wrong one, shown large above it, is read first and may be taken, so it costs that
reading and the chance of acting on it; with the sentence beneath, most wrong values are caught, so the cost is
counted as twice, not ten times, a right value's gain. Shown where P(right) >= 2/3.

The data (``../shared/traindata``, as ``short_tune.py`` reads it): COVID-QA and ConditionalQA TRAIN, each question
asking for a value (not yes/no, how or why) whose gold has at most 5 words. Each is asked of three lists of
sentences, as a walk may show them:

* ``found``: the sentence holding the gold, then its nearest rival (below);
* ``second``: the rival first, the sentence holding the gold second (the walk's first sentence is wrong);
* ``missed``: the rival alone (the walk missed: whatever value is shown is wrong, unless it holds the gold).

The rival is the sentence of the same passage (COVID-QA: the same paper, within 5 sentences; ConditionalQA: the
same guide's other items) that does not hold the gold and holds most of the question's words: the sentence a walk
would show by mistake. "Right": the value holds the gold or lies within it (``short_tune.right``).

The weights are fitted by L2-regularised logistic regression on the values found (right or not); the threshold is
the point of a 0.05 grid with the highest net gain (+1 right, -2 wrong, 0 none) on out-of-fold probabilities (each
row's from a fit on the other documents' rows, 5 folds). The same choice on the even-numbered documents, graded on
the odd ones, says how well it carries. Writes the chosen weights and the grades to ``--out``:

    .venv/bin/python benchmarks/research/short_show.py --out docs/eval/short-show.json
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from short_tune import TRAIN, covidqa_items, cqa_span_questions, right

from shelfwise.core.answers.short import _lead_in_list, asked_kind, show_features, stems, value_candidates
from shelfwise.core.answers.short_confidence import NAMES, ShowWeights, confidence
from shelfwise.core.answers.short_confidence import SHOW_ALL as SHOW
from shelfwise.core.answers.types import Extracted

WRONG_COST = 2.0  # a wrong value shown first costs twice what a right one gains (see the module doc)
RIDGE = 1.0  # L2 penalty of the logistic fit (on standardised features; the bias is not penalised)


def _sentences(text: str) -> list[str]:
    bounds = [0, *(m.end() for m in re.finditer(r"(?<=[.!?])\s+(?=[A-Z0-9(\"])|\n+", text)), len(text)]
    return [text[a:b].strip() for a, b in itertools.pairwise(bounds) if text[a:b].strip()]


def _rival(question: str, pool: list[str], gold: str) -> str | None:
    """The sentence of ``pool`` without the gold that holds most of the question's words (the first on a tie)."""
    keys = stems(question)
    cands = [s for s in pool if gold.lower() not in s.lower() and 20 <= len(s) < 600]
    return max(cands, key=lambda s: len(keys & stems(s)), default=None)


def _neighbour(sents: list[str], at: int, gold: str) -> str | None:
    """The sentence after the ``at``-th (else the one before) when it does not hold the gold."""
    for i in (at + 1, at - 1):
        if 0 <= i < len(sents) and gold.lower() not in sents[i].lower() and 20 <= len(sents[i]) < 600:
            return sents[i]
    return None


Case = tuple[str, str, str, str, str, int]  # question, gold sentence, its neighbour, the rival, gold, document


def covidqa_cases() -> list[Case]:
    """(question, gold sentence, its neighbour, rival, gold, paper) for COVID-QA."""
    raw = json.loads((TRAIN / "covidqa" / "original" / "200423_covidQA.json").read_text(encoding="utf-8"))
    golds = {(q, g): (s, n) for q, s, g, n in covidqa_items()}
    out = []
    for number, article in enumerate(raw["data"]):
        for para in article["paragraphs"]:
            sents = _sentences(para["context"])
            for qa in para["qas"]:
                text = qa["answers"][0]["text"].strip()
                got = golds.get((qa["question"].strip(), text))
                if got is None:
                    continue
                at = next((i for i, s in enumerate(sents) if got[0] in s or s in got[0]), None)
                if at is None:
                    continue
                rival = _rival(qa["question"], sents[max(0, at - 5): at + 6], text)
                near = _neighbour(sents, at, text)
                if rival is not None and near is not None:
                    out.append((qa["question"].strip(), got[0], near, rival, text, number))
    return out


def cqa_cases() -> list[Case]:
    """(scenario and question, gold sentence, its neighbour, rival, gold, guide) for ConditionalQA TRAIN: the rival
    from the guide's other items (the derived pairs' negatives and the question's other evidence)."""
    pairs = {r["id"]: r for r in (json.loads(line) for line in gzip.open(
        TRAIN / "conditionalqa_train" / "derived" / "pairs.jsonl.gz", "rt", encoding="utf-8"))}
    guides: dict[str, int] = {}
    out = []
    for x, question, gold, texts in cqa_span_questions():
        holding = next((t for t in texts if gold.lower() in t.lower()), None)
        if holding is None:
            continue
        own = _sentences(holding)
        at = next((i for i, s in enumerate(own) if gold.lower() in s.lower()), None)
        if at is None:
            continue
        sentence = own[at]
        pair = pairs.get(x.get("id", ""), {})
        pool = [s for t in [*texts, *pair.get("negatives", [])] for s in _sentences(t) if s != sentence]
        rival = _rival(question, pool, gold)
        # the next sentence of its item, else of the next evidence item (ConditionalQA's items are often one
        # sentence long)
        following = [s for t in texts[texts.index(holding) + 1:] for s in _sentences(t)]
        near = _neighbour(own + following, at, gold)
        if rival is not None and near is not None:
            out.append((question, sentence, near, rival, gold, 1000 + guides.setdefault(x["url"], len(guides))))
    return out


def _extracted(texts: list[str]) -> list[Extracted]:
    return [Extracted(t, i + 1, 0, len(t), 1.0 - 0.01 * i) for i, t in enumerate(texts)]


WAYS = ("alone", "found", "second", "missed")
# how often a walk's first sentence holds the answer: 36 of 47 answerable questions in the issue's own trial of the
# sample (a tester's questions, not an evaluation set); the ways with the gold first (alone, found) share this, the
# ways with the rival first (second, missed) the rest, so the cost is counted over lists as a walk shows them
FIRST_RIGHT = 36 / 47
WAY_WEIGHT = {"alone": FIRST_RIGHT / 2, "found": FIRST_RIGHT / 2, "second": (1 - FIRST_RIGHT) / 2,
              "missed": (1 - FIRST_RIGHT) / 2}


def rows_of(cases: list[Case]) -> list[dict[str, Any]]:
    """Each case asked four ways (:data:`WAYS`): the value the ranker puts first (before any threshold), its
    features, and whether it is right."""
    rows = []
    for question, sentence, near, rival, gold, doc in cases:
        kind = asked_kind(question)
        if kind in ("yes_no", "span"):
            continue
        for way, texts in (("alone", [sentence]), ("found", [sentence, near]), ("second", [rival, sentence]),
                           ("missed", [rival])):
            sents = _extracted(texts)
            row: dict[str, Any] = {"way": way, "kind": kind, "doc": doc, "gold": gold}
            listed = _lead_in_list(question, sents) if kind == "list" else None
            cands = [] if listed else value_candidates(kind, question, sents)
            if listed is not None:
                row.update(value=listed.text, features=None)
            elif cands and not (cands[0].ranked and cands[0].score < 0) and cands[0].text:
                row.update(value=cands[0].text, features=show_features(question, cands))
            else:
                row.update(value="", features=None)
            row["right"] = bool(row["value"]) and right(row["value"], gold)
            rows.append(row)
    return rows


def fit(rows: list[dict[str, Any]]) -> np.ndarray:
    """Logistic regression of ``right`` on the features, each row weighted by its way (:data:`WAY_WEIGHT`; IRLS,
    L2 on the standardised non-bias weights); the weights on the raw features."""
    x = np.array([r["features"].vector() for r in rows], dtype=float)
    y = np.array([r["right"] for r in rows], dtype=float)
    sw = np.array([WAY_WEIGHT[r["way"]] for r in rows], dtype=float) * 4  # mean 1
    mu, sd = x.mean(0), x.std(0)
    mu[0], sd[0] = 0.0, 1.0
    sd[sd == 0] = 1.0
    z = (x - mu) / sd
    w = np.zeros(z.shape[1])
    pen = np.full(z.shape[1], RIDGE)
    pen[0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(z @ w, -30, 30)))
        grad = z.T @ (sw * (p - y)) + pen * w
        hess = (z * (sw * p * (1 - p))[:, None]).T @ z + np.diag(pen) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    raw = w / sd
    raw[0] = w[0] - (w[1:] * mu[1:] / sd[1:]).sum()
    return raw


def decide(rows: list[dict[str, Any]], show: ShowWeights) -> list[bool]:
    """Whether each row's value is shown (a lead-in list always is)."""
    return [bool(r["value"]) and (r["features"] is None or confidence(r["features"], show) >= show.threshold)
            for r in rows]


def grade(rows: list[dict[str, Any]], show: ShowWeights) -> dict[str, Any]:
    """Counts; ``net``: the gain per question (+1 right, -:data:`WRONG_COST` wrong) with the ways weighted as a
    walk shows them (:data:`WAY_WEIGHT`)."""
    shown = decide(rows, show)
    good = sum(s and r["right"] for s, r in zip(shown, rows, strict=True))
    n, k = len(rows), sum(shown)
    return {"asked": n, "shown": k, "right": good, "precision": round(good / max(k, 1), 4),
            "recall": round(good / max(n, 1), 4), "net": round(_net(rows, shown), 4)}


def _net(rows: list[dict[str, Any]], shown: list[bool]) -> float:
    gain = sum(WAY_WEIGHT[r["way"]] * (1.0 if r["right"] else -WRONG_COST)
               for s, r in zip(shown, rows, strict=True) if s)
    return gain / max(sum(WAY_WEIGHT[r["way"]] for r in rows), 1e-9)


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


def net_at(rows: list[dict[str, Any]], probs: list[float], t: float) -> float:
    return _net(rows, [bool(r["value"]) and p >= t for r, p in zip(rows, probs, strict=True)])


def choose(rows: list[dict[str, Any]]) -> tuple[ShowWeights, list[tuple[float, float]]]:
    """The fit on every row with a value, and the threshold with the highest net gain on the rows' out-of-fold
    probabilities (:func:`out_of_fold`: a threshold chosen on the probabilities of the rows it was fitted on would
    follow their noise), on a grid of 0.05; and the net gain at each point of the grid."""
    scored = [r for r in rows if r["features"] is not None]
    weights = tuple(round(float(v), 4) for v in fit(scored))
    probs = out_of_fold(rows)
    curve = [(round(float(t), 2), round(net_at(rows, probs, float(t)), 4)) for t in np.arange(0.0, 0.951, 0.05)]
    best = max(curve, key=lambda x: (x[1], -x[0]))[0]
    return ShowWeights(weights, best), curve


def report(rows: list[dict[str, Any]], show: ShowWeights) -> dict[str, Any]:
    parts: dict[str, Any] = {}
    for name, pick in (("all", lambda r: True), ("thing", lambda r: r["kind"] in ("name", "place", "list", "thing")),
                       ("value", lambda r: r["kind"] not in ("name", "place", "list", "thing"))):
        for way in ("all", *WAYS):
            part = [r for r in rows if pick(r) and (way == "all" or r["way"] == way)]
            parts[f"{name}/{way}"] = {"before (every value shown)": grade(part, SHOW), "after": grade(part, show)}
    return parts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/short-show.json"))
    args = ap.parse_args()
    rows = rows_of(covidqa_cases() + cqa_cases())
    print(f"{len(rows)} rows ({len(rows) // 4} questions x {'/'.join(WAYS)}), "
          f"{sum(r['features'] is not None for r in rows)} with a ranked value", flush=True)
    chosen, curve = choose(rows)
    even, _ = choose([r for r in rows if r["doc"] % 2 == 0])
    odd = [r for r in rows if r["doc"] % 2 == 1]
    out = {"data": "traindata/covidqa 200423_covidQA.json and traindata/conditionalqa_train (train.json, "
                   "derived/pairs.jsonl.gz): each question asked of [gold sentence, rival], [rival, gold sentence], "
                   "[rival]",
           "wrong_cost": WRONG_COST, "ridge": RIDGE, "features": NAMES,
           "chosen": {"weights": dict(zip(NAMES, chosen.weights, strict=True)), "threshold": chosen.threshold},
           "net_by_threshold_out_of_fold": curve,
           "train": report(rows, chosen),
           "held_out": {"chosen_on_even": {"weights": dict(zip(NAMES, even.weights, strict=True)),
                                           "threshold": even.threshold},
                        "odd_before": grade(odd, SHOW), "odd_after": grade(odd, even)},
           "code": f"ShowWeights(weights={chosen.weights}, threshold={chosen.threshold})"}
    args.out.write_text(json.dumps(out, indent=1))
    print(json.dumps({k: out[k] for k in ("chosen", "held_out", "code")}, indent=1))
    print("net gain by threshold (out of fold):", curve)
    for key in ("all/all", "thing/all", "value/all", *(f"all/{w}" for w in WAYS)):
        print(key, out["train"][key])


if __name__ == "__main__":
    main()
