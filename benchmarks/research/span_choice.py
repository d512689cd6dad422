"""Which phrase of the sentence that holds the gold answers a question asking for a thing (issue 48, session 25):
the phrase ranker (``short.SpanWeights``), the bundled base model's likelihood of each candidate phrase, and their
combination, measured on the TRAINING data only, with the candidates' coverage (how often a right one is offered).

The items: ``short_tune.py``'s (COVID-QA and ConditionalQA TRAIN, each question asking for a value whose gold has at
most 5 words, asked of the one sentence that holds its gold, as found: this grades the phrase chosen from the right
sentence, not the walk), the kinds the ranker ranks (``thing``, ``name``, ``place``, ``list``). Each candidate of
``short.nominal_features`` is scored by the ranker and by Gemma 3 270M (the bundled answer model, through the
product's backend) as the log-probability of " <phrase>" after "<sentence>\\nQuestion: <question>\\nAnswer:"
(summed and per token). Writes every candidate's scores (``--rows``, outside the repository: the training data's
text) and prints how often each pick holds the gold; ``--fit ROWS`` then fits the combination on the even documents
and grades it on the odd ones, and the reverse.

    nice -n 19 .venv/bin/python benchmarks/research/span_choice.py --rows /work/s25/answers/span-rows.json
    .venv/bin/python benchmarks/research/span_choice.py --fit /work/s25/answers/span-rows.json --out SUMMARY.json
    nice -n 19 .venv/bin/python benchmarks/research/span_choice.py --encoder /work/s25/answers/span-rows.json \
        --out ENCODER.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from short_tune import covidqa_items, cqa_items, right

from shelfwise.core.answers.matching import answer_matches
from shelfwise.core.answers.short import WEIGHTS, asked_kind, nominal_features

NOMINAL = ("thing", "name", "place", "list")


SHOT_DOCS = 3  # the documents left out of the graded items: those of the first three examples


def shots(items: list[tuple[str, str, str, int]], k: int) -> tuple[str, set[int]]:
    """A prefix of ``k`` worked examples in the prompt's layout, taken in turn from the two sets' items (a gold of
    one to three words, a sentence of at most 200 characters, one a document), and the documents they come from
    (left out of the graded items)."""
    from shelfwise.core.answers.span_model import PROMPT

    picked: list[tuple[str, str, str, int]] = []
    for question, sentence, gold, doc in items:
        if len(picked) == k:
            break
        if 1 <= len(gold.split()) <= 3 and len(sentence) <= 200 and len(question) <= 300 \
                and doc not in {p[3] for p in picked} and (doc >= 1000) == (len(picked) % 2 == 1):
            picked.append((question, sentence, gold, doc))
    text = "".join(PROMPT.format(sentence=" ".join(s.split()), question=" ".join(q.split())) + " " + g + "\n\n"
                   for q, s, g, _ in picked)
    return text, {p[3] for p in picked}


def score_rows(out: Path, limit: int | None, threads: int, k_shots: int = 0) -> None:
    from shelfwise.core.answers.span_model import FEW_SHOT, phrase_likelihoods
    from shelfwise.core.models.llama.backend import LlamaBackend
    from shelfwise.core.paths import models_dir

    backend = LlamaBackend(str(models_dir() / "gemma-3-270m-q4_k_m.gguf"), n_threads=threads)
    w = WEIGHTS.vector()
    covid, cqa = ([i for i in f() if asked_kind(i[0]) in NOMINAL] for f in (covidqa_items, cqa_items))
    # the two sets mixed (what is written so far is a sample of both)
    items = [i for pair in itertools.zip_longest(covid, cqa) for i in pair if i is not None]
    # the examples' documents are left out with or without the examples, so that both grade the same items
    drawn, shot_docs = shots(items, max(k_shots, SHOT_DOCS))
    prefix = FEW_SHOT if k_shots < 0 else drawn if k_shots else ""  # -1: the product's own (span_model.py)
    print(prefix)
    items = [i for i in items if i[3] not in shot_docs]
    if limit:
        items = items[:limit]
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    for n, (question, sentence, gold, doc) in enumerate(items):
        kind = asked_kind(question)
        feats = nominal_features(kind, sentence, question)
        if not feats:
            rows.append({"question": question, "gold": gold, "doc": doc, "kind": kind, "candidates": []})
            continue
        spans = [" ".join(sentence[s.start:s.end].split()).strip(" ,;:|") for s, _ in feats]
        lps = phrase_likelihoods(backend, sentence, question, spans, prefix=prefix)
        assert lps is not None
        rows.append({"question": question, "gold": gold, "doc": doc, "kind": kind, "sentence": sentence,
                     "candidates": [{"span": sp, "features": list(f),
                                     "ranker": sum(a * b for a, b in zip(w, f, strict=True)),
                                     "lm_sum": lp[0], "lm_mean": lp[1], "holds": answer_matches(sp, [gold]),
                                     "right": right(sp, gold)}
                                    for sp, (_, f), lp in zip(spans, feats, lps, strict=True)]})
        if n % 25 == 0:
            print(n, len(items), round(time.time() - t0, 1), flush=True)
            out.write_text(json.dumps(rows))
    out.write_text(json.dumps(rows))
    print("seconds", round(time.time() - t0, 1))


def pick(row: dict[str, Any], key: Any) -> dict[str, Any] | None:
    """The candidate ``key`` scores highest (the earlier on a tie), None when there is none."""
    best = None
    for c in row["candidates"]:
        if best is None or key(c) > key(best):
            best = c
    return best


def count(rows: list[dict[str, Any]], key: Any, field: str = "holds") -> int:
    return sum(1 for r in rows if (b := pick(r, key)) is not None and b[field])


def keys(lam: float, mu: float) -> Any:
    return lambda c: c["ranker"] + lam * c["lm_mean"] + mu * c["lm_sum"]


GRID = [(lam, mu) for lam in (0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0, 15.0, 25.0, 50.0)
        for mu in (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)]


def fit(rows: list[dict[str, Any]]) -> tuple[float, float]:
    """The (per-token, summed) log-probability weights beside the ranker's score that pick the most candidates
    holding the gold on ``rows`` (a tie keeps the smaller weights)."""
    return max(GRID, key=lambda g: (count(rows, keys(*g)), -g[0] - g[1]))


FEATURES = ("close", "typed", "capitals", "length", "after", "before", "lone", "model_mean", "model_sum")
RIDGE = 1.0


def _x(c: dict[str, Any]) -> list[float]:
    return [*c["features"], c["lm_mean"], c["lm_sum"]]


def fit_logit(rows: list[dict[str, Any]]) -> np.ndarray:
    """Every weight of the ranker and the model's two readings at once: a conditional logit over each item's
    candidates (the log of the chance given to those holding the gold, maximised; L2 ``RIDGE``), by gradient
    ascent from the ranker's weights with the per-token reading at 1."""
    data = [(np.array([_x(c) for c in r["candidates"]]), np.array([c["holds"] for c in r["candidates"]]))
            for r in rows if any(c["holds"] for c in r["candidates"])]
    w = np.array([*WEIGHTS.vector(), 1.0, 0.0])
    m, v = np.zeros_like(w), np.zeros_like(w)
    for step in range(1, 1501):
        grad = -RIDGE * w / max(len(data), 1)
        for x, y in data:
            z = x @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            q = p * y / (p * y).sum()
            grad += (q - p) @ x / len(data)
        m = 0.9 * m + 0.1 * grad
        v = 0.999 * v + 0.001 * grad**2
        w += 0.02 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return w


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    rows = [r for r in rows if r["candidates"]]
    out: dict[str, Any] = {"items": len(rows), "documents": len({r["doc"] for r in rows}),
                           "a_candidate_holds": sum(any(c["holds"] for c in r["candidates"]) for r in rows),
                           "a_candidate_right": sum(any(c["right"] for c in r["candidates"]) for r in rows),
                           "mean_candidates": round(sum(len(r["candidates"]) for r in rows) / max(len(rows), 1), 2)}
    for name, key in (("ranker", keys(0, 0)), ("lm_mean", lambda c: c["lm_mean"]), ("lm_sum", lambda c: c["lm_sum"])):
        out[name] = {"holds": count(rows, key), "right": count(rows, key, "right")}
    folds = {}
    for part in (0, 1):
        train = [r for r in rows if r["doc"] % 2 == part]
        test = [r for r in rows if r["doc"] % 2 != part]
        lam, mu = fit(train)
        folds[f"fit_on_{'even' if part == 0 else 'odd'}"] = {
            "lm_mean_weight": lam, "lm_sum_weight": mu, "test_items": len(test),
            "test_ranker": count(test, keys(0, 0)), "test_combined": count(test, keys(lam, mu)),
            "test_lm_mean": count(test, lambda c: c["lm_mean"]),
            "test_ranker_right": count(test, keys(0, 0), "right"),
            "test_combined_right": count(test, keys(lam, mu), "right")}
        w = fit_logit(train)
        folds[f"fit_on_{'even' if part == 0 else 'odd'}"].update(
            logit_weights=dict(zip(FEATURES, np.round(w, 3).tolist(), strict=True)),
            test_logit=count(test, lambda c, w=w: float(np.dot(w, _x(c)))),
            test_logit_right=count(test, lambda c, w=w: float(np.dot(w, _x(c))), "right"))
    out["held_out"] = folds
    out["held_out_total"] = {k: sum(f[k] for f in folds.values()) for k in
                             ("test_items", "test_ranker", "test_combined", "test_lm_mean", "test_ranker_right",
                              "test_combined_right", "test_logit", "test_logit_right")}
    out["fit_on_all"] = fit(rows)
    out["logit_on_all"] = dict(zip(FEATURES, np.round(fit_logit(rows), 3).tolist(), strict=True))
    return out


def encoder_readings(path: Path) -> dict[str, Any]:
    """Whether the encoder (EmbeddingGemma, the default) reading each candidate phrase picks the one holding the gold:
    the cosine of the question (``embed_query``) with the phrase alone, by itself, beside the ranker and beside the
    ranker with the model's reading (weight 3), its own weight chosen on one half of the documents and graded on the
    other (a grid; the smaller on a tie)."""
    from shelfwise.core.models.encoders.embedder import Embedder

    rows = [r for r in json.loads(path.read_text()) if r["candidates"]]
    encoder = Embedder(None, batch_tokens=256)
    t0 = time.time()
    texts = sorted({c["span"] for r in rows for c in r["candidates"]})
    vectors = dict(zip(texts, np.asarray(encoder.embed(texts), np.float32), strict=True))
    seconds = time.time() - t0
    for r in rows:
        q = np.asarray(encoder.embed_query(r["question"]), np.float32)
        for c in r["candidates"]:
            v = vectors[c["span"]]
            c["enc"] = float(np.dot(q, v) / (np.linalg.norm(q) * np.linalg.norm(v) + 1e-9))
    out: dict[str, Any] = {"items": len(rows), "phrases": len(texts), "phrases_seconds": round(seconds, 1),
                           "encoder": count(rows, lambda c: c["enc"]), "ranker": count(rows, keys(0, 0)),
                           "ranker+3 per token": count(rows, keys(3, 0))}
    for name, base in (("ranker", keys(0, 0)), ("ranker+3 per token", keys(3, 0))):
        total = 0
        for part in (0, 1):
            train = [r for r in rows if r["doc"] % 2 == part]
            test = [r for r in rows if r["doc"] % 2 != part]
            w = max((0.0, 0.5, 1.0, 2.0, 4.0, 8.0),
                    key=lambda g, base=base, train=train: (
                        count(train, lambda c, g=g, base=base: base(c) + g * c["enc"]), -g))
            total += count(test, lambda c, w=w, base=base: base(c) + w * c["enc"])
            out[f"{name} + encoder, weight fit on {'even' if part == 0 else 'odd'}"] = w
        out[f"{name} + encoder, held out"] = total
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=Path, help="score the items and write every candidate's scores here")
    ap.add_argument("--fit", type=Path, help="the rows written by --rows: fit and grade the combination")
    ap.add_argument("--out", type=Path, help="the summary (JSON)")
    ap.add_argument("--encoder", type=Path, help="the rows written by --rows: the encoder's reading of each phrase")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--shots", type=int, default=0,
                    help="worked examples before each prompt (from the items; -1: the product's own)")
    a = ap.parse_args()
    if a.rows:
        score_rows(a.rows, a.limit, a.threads, a.shots)
    if a.encoder:
        report = encoder_readings(a.encoder)
        print(json.dumps(report, indent=1))
        if a.out:
            a.out.write_text(json.dumps(report, indent=1) + "\n")
    if a.fit:
        rows = json.loads(a.fit.read_text())
        report = {"all": summary(rows), "covidqa": summary([r for r in rows if r["doc"] < 1000]),
                  "conditionalqa_train": summary([r for r in rows if r["doc"] >= 1000])}
        print(json.dumps(report, indent=1))
        if a.out:
            a.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
