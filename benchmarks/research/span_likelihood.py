"""Does the bundled base model's likelihood pick the right phrase of the right sentence for a what / which / who
question better than the phrase ranker (``short.SpanWeights``)? A prototype over the training data only (issue 48;
docs/eval/answers.md, "Session 24 (lead)"): session 23's stand-in walk items (``benchmarks/research/short_walk.py``:
COVID-QA and ConditionalQA TRAIN), the questions asking for a thing whose first sentence holds the gold. Each
candidate phrase (``short.nominal_features``) is scored by the ranker and by Gemma 3 270M's log-probability of
" <phrase>" after "<sentence>\\nQuestion: <question>\\nAnswer:" (summed and per token); prints how often each pick
holds the gold or lies within it, and writes every candidate's scores.

    python benchmarks/research/span_likelihood.py ITEMS.json --out SUMMARY.json [--rows ROWS.json]
"""

from __future__ import annotations

import argparse
import ast
import json
import time
from pathlib import Path

import numpy as np
from llama_cpp import Llama

from shelfwise.core.answers.short import WEIGHTS, asked_value, nominal_features
from shelfwise.core.paths import models_dir

VALUE_KINDS = ("number", "date", "time", "percent", "duration", "yes_no")


def right(value: str, gold: str) -> bool:
    a, b = value.lower().strip(" .,"), gold.lower().strip(" .,")
    return bool(a) and (b in a or a in b)


def log_probs(llm: Llama, prompt: str, options: list[str]) -> list[tuple[float, float]]:
    """(sum, mean per token) of each option's log-probability after ``prompt`` (the prompt evaluated once)."""
    p = llm.tokenize(prompt.encode(), add_bos=True)
    llm.reset()
    llm.eval(p)
    out = []
    for option in options:
        t = llm.tokenize((" " + option).encode(), add_bos=False)
        llm.n_tokens = len(p)
        llm.eval(t)
        sc = np.array(llm.scores[len(p) - 1 : len(p) - 1 + len(t)], dtype=np.float64)
        sc = sc - sc.max(axis=1, keepdims=True)
        lp = sc[np.arange(len(t)), t] - np.log(np.exp(sc).sum(axis=1))
        out.append((float(lp.sum()), float(lp.mean())))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("items", type=Path)
    ap.add_argument("--out", type=Path, required=True, help="the summary (JSON)")
    ap.add_argument("--rows", type=Path, help="every candidate's scores (the training data's text: keep it out of "
                    "the repository)")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    llm = Llama(str(models_dir() / "gemma-3-270m-q4_k_m.gguf"), n_ctx=512, logits_all=True, verbose=False,
                n_threads=a.threads)
    weights = np.array(WEIGHTS.vector())
    rows, t0 = [], time.time()
    for it in json.loads(a.items.read_text()):
        kind = asked_value(it["question"])
        sents = ast.literal_eval(it["sentences"]) if isinstance(it["sentences"], str) else it["sentences"]
        if kind in VALUE_KINDS or not sents or it["gold"].lower() not in sents[0]["text"].lower():
            continue
        text = sents[0]["text"]
        feats = nominal_features(kind if kind in ("name", "place", "list") else "thing", text, it["question"])
        if not feats:
            continue
        spans = [text[s.start : s.end] for s, _ in feats]
        lps = log_probs(llm, f"{text}\nQuestion: {it['question']}\nAnswer:", spans)
        rows.append({"question": it["question"], "gold": it["gold"], "candidates": [
            {"span": sp, "ranker": float(np.dot(weights, f)), "lm_sum": lp[0], "lm_mean": lp[1],
             "right": right(sp, it["gold"])} for sp, (_, f), lp in zip(spans, feats, lps, strict=True)]})

    def picked(key: str) -> int:
        return sum(1 for r in rows if max(r["candidates"], key=lambda c: c[key])["right"])

    def combined(lam: float) -> int:
        return sum(1 for r in rows if max(r["candidates"], key=lambda c: c["ranker"] + lam * c["lm_mean"])["right"])

    summary = {"items": len(rows), "a_candidate_right": sum(any(c["right"] for c in r["candidates"]) for r in rows),
               "ranker": picked("ranker"), "lm_sum": picked("lm_sum"), "lm_mean": picked("lm_mean"),
               "ranker_plus_lm_mean": {str(lam): combined(lam) for lam in (0.25, 0.5, 1.0, 2.0, 4.0)},
               "seconds": round(time.time() - t0, 1)}
    print(json.dumps(summary))
    a.out.write_text(json.dumps(summary, indent=1) + "\n")
    if a.rows:
        a.rows.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
