"""Choose the extractive ranker's settings on the ConditionalQA TUNE half (never the test half) and the sample.

Walks each tune question once over the evaluation collection ``shelfwise eval conditionalqa`` built (and each
question of ``resources/sample_questions.jsonl`` over a library holding ``resources/sample``), keeps the top
passages, then runs :func:`~shelfwise.core.answers.extractive.extract_answer` with every setting given on the
command line, embedding each sentence once (cached by text). Prints, per setting, the share of span-answer
questions (gold not yes/no) whose extracted sentence(s) contain a gold answer (``answer_matches``) and, for the
sample's free-text golds, ``fact_match``.

    .venv/bin/shelfwise --db /tmp/sample.db ingest resources/sample
    .venv/bin/python benchmarks/research/extractive_tune.py --sample-db /tmp/sample.db \\
        "[{}, dict(second_margin=0.05), dict(lexical_weight=0.2)]"
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

from shelfwise.core.answers import extractive as ex
from shelfwise.core.answers.from_passages import widen_lists
from shelfwise.core.answers.matching import answer_matches
from shelfwise.core.navigation.request import clipped_request
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.paths import data_dir
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store.db import Store
from shelfwise.evaluation.answer_modes import fact_match, is_yes_no
from shelfwise.evaluation.datasets import load_conditionalqa, load_jsonl
from shelfwise.evaluation.run import EVAL_DB_VERSION, shared_dir


def collect(sample_db: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with Shelf(Settings(db_path=sample_db)) as shelf:
        ds = load_conditionalqa(shared_dir() / "evaldata" / "conditionalqa_dev", answerable_only=False, split="tune")
        store = Store(data_dir() / "eval" / f"conditionalqa-v{EVAL_DB_VERSION}.db")
        parts = LibraryWalk(store, shelf.models, collection=ds.name)
        for q in ds.questions:
            if q.answers and not all(is_yes_no(a) for a in q.answers):
                found = parts.search(clipped_request(q.query, None, parts.backend))
                rows.append({"set": "tune", "query": q.query, "answers": q.answers,
                             "hits": widen_lists(store, found.hits[: ex.PASSAGES])})
        store.close()
        for q in load_jsonl(Path("resources/sample_questions.jsonl")):
            rows.append({"set": "sample", "query": q.query, "answers": q.answers,
                         "hits": widen_lists(shelf.store, shelf.search(q.query, "default").hits[: ex.PASSAGES])})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("settings", nargs="?", default="[{}]", help="a Python list of keyword dicts for extract_answer")
    ap.add_argument("--sample-db", type=Path, required=True)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/extractive_tune_v3.pkl"))
    ap.add_argument("--diagnose", action="store_true",
                    help="also say, per set, how often a gold answer is in the top passage, in any of the top passages "
                         "and in a sentence that could be extracted: what the ranker can reach")
    args = ap.parse_args()
    if args.cache.exists():
        rows, vectors = pickle.loads(args.cache.read_bytes())
    else:
        rows, vectors = collect(args.sample_db), {}
    embedder: Any = None

    def scorer(question: str, texts: Any) -> np.ndarray:
        # as the product scores (core/answers/sentence_vectors.cached_scorer): the question through embed_query
        # (EmbeddingGemma's query prompt), the sentences through embed; cached apart ("q:" keys)
        nonlocal embedder
        qkey = "q:" + question
        need = [t for t in dict.fromkeys(texts) if t not in vectors]
        if need or qkey not in vectors:
            if embedder is None:
                from shelfwise.core.models.encoders.embedder import Embedder

                embedder = Embedder(Settings().embedder_path)
            if need:
                vectors.update(zip(need, embedder.embed(need), strict=True))
            if qkey not in vectors:
                vectors[qkey] = embedder.embed_query(question)
        m = np.stack([vectors[t] for t in texts])
        return m @ np.asarray(vectors[qkey], dtype=np.float32)

    if args.diagnose:
        for name in ("tune", "sample"):
            rs = [r for r in rows if r["set"] == name]
            top1 = sum(bool(r["hits"]) and answer_matches(r["hits"][0].text, r["answers"]) for r in rs)
            top = sum(any(answer_matches(h.text, r["answers"]) for h in r["hits"]) for r in rs)
            cand = sum(any(answer_matches(c.text, r["answers"]) for c in ex.candidates(r["hits"])) for r in rs)
            print(f"{name}: {len(rs)} questions; a gold answer in the top passage {top1}, in the top {ex.PASSAGES} "
                  f"passages {top}, in a candidate sentence {cand}", flush=True)
    for kw in eval(args.settings):
        out = []
        for name in ("tune", "sample"):
            rs = [r for r in rows if r["set"] == name]
            texts = [ex.extract_text(ex.extract_answer(r["query"], r["hits"], scorer, **kw)) for r in rs]
            strict = sum(bool(t) and answer_matches(t, r["answers"]) for t, r in zip(texts, rs, strict=True))
            facts = sum(bool(t) and fact_match(t, r["answers"]) for t, r in zip(texts, rs, strict=True))
            out.append(f"{name} {strict}/{len(rs)} ({strict / max(len(rs), 1):.3f}) facts {facts}")
        print("  ".join(out), kw, flush=True)
    args.cache.write_bytes(pickle.dumps((rows, vectors)))
    print("(the defaults are the empty dict {})", file=sys.stderr)


if __name__ == "__main__":
    main()
