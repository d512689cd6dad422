"""Choose the extractive ranker's weights on the ConditionalQA TUNE half (never the test half).

Walks each tune question once (the evaluation collection ``shelfwise eval conditionalqa`` built), embeds every
candidate sentence of the top passages (bare, and with its table-header/FAQ context) and the question (whole, and
its focus: the last sentence ending in "?"), then scores the grid offline: the share of span-answer
questions (gold not yes/no) whose extracted sentence(s) contain a gold answer
(``answer_matches``: whole words after SQuAD normalisation), and the ceiling (any candidate contains it).

    .venv/bin/python benchmarks/extractive_tune.py [--db PATH] [--limit N] [--cache FILE]
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import sys
from pathlib import Path

import numpy as np

from shelfwise.core.answers import extractive as ex
from shelfwise.core.answers.matching import answer_matches
from shelfwise.core.evaluation.answer_modes import is_yes_no
from shelfwise.core.evaluation.answers import ShelfParts
from shelfwise.core.evaluation.run import load_dataset
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store.db import Store


def collect(db: Path, limit: int | None) -> list[dict]:
    ds = load_dataset("conditionalqa", limit, split="tune")
    rows = []
    with Shelf(Settings(db_path=Path("/tmp/unused-shelf.db"))) as shelf:
        store = Store(db)
        parts = ShelfParts(store, shelf.backend, shelf.embedder, shelf.settings, collection=ds.name)
        emb = shelf.embedder
        for i, q in enumerate(ds.questions):
            if not q.answers or all(is_yes_no(a) for a in q.answers):
                continue
            cands = ex.candidates(parts.search(q.query).hits[: ex.PASSAGES])
            row: dict = {"answers": q.answers, "query": q.query, "focus": ex.focus_question(q.query), "cands": cands}
            if cands:
                row |= {"q_full": emb.embed_one(q.query), "q_focus": emb.embed_one(row["focus"]),
                        "v_bare": emb.embed([c.text for c in cands]), "v_ctx": emb.embed([c.context for c in cands])}
            rows.append(row)
            print(f"{i + 1}/{len(ds.questions)}", file=sys.stderr, flush=True)
        store.close()
    return rows


def choose(row: dict, pw: float, cw: float, query: str, text: str, k: int, margin: float) -> str:
    cands = row["cands"]
    if not cands:
        return ""
    cos = row[f"v_{text}"] @ row[f"q_{query}"]
    ranks = np.array([c.number for c in cands], dtype=np.float32)
    focus = row["focus"] if query == "focus" else row["query"]
    s = cos + pw / ranks + cw * ex.cue_scores(focus, [c.context for c in cands])
    top = [int(i) for i in np.argsort(-s, kind="stable")[:k]]
    top = [i for i in top if s[i] >= s[top[0]] - margin]
    return " ".join(cands[i].text for i in top)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", type=Path, default=Path.home() / ".local/share/shelfwise/eval/conditionalqa-v2.db")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/extractive_tune.pkl"))
    args = ap.parse_args()
    if args.cache.exists():
        rows = pickle.loads(args.cache.read_bytes())
    else:
        rows = collect(args.db, args.limit)
        args.cache.write_bytes(pickle.dumps(rows))
    n = len(rows)
    ceiling = sum(any(answer_matches(c.text, r["answers"]) for c in r["cands"]) for r in rows) / n
    print(f"{n} span questions (tune half); ceiling (some candidate sentence contains gold): {ceiling:.3f}")
    results = []
    for pw, cw, query, text, k, margin in itertools.product(
            (0.0, 0.05, 0.1, 0.2), (0.0, 0.05, 0.1, 0.2), ("full", "focus"), ("bare", "ctx"), (1, 2),
            (0.02, 0.05, 0.1, 9.0)):
        if k == 1 and margin != 9.0:
            continue
        hit = sum(answer_matches(choose(r, pw, cw, query, text, k, margin), r["answers"]) for r in rows) / n
        results.append((hit, pw, cw, query, text, k, margin))
    results.sort(key=lambda x: -x[0])
    for hit, pw, cw, query, text, k, margin in results[:15]:
        print(f"contains_gold={hit:.3f} passage_weight={pw:.2f} cue_weight={cw:.2f} query={query} text={text} "
              f"sentences={k} margin={margin:.2f}")
    now = (ex.PASSAGE_WEIGHT, ex.CUE_WEIGHT, "focus", "bare", ex.SENTENCES, ex.SECOND_MARGIN)
    print("the defaults: contains_gold=" + next(f"{r[0]:.3f}" for r in results if r[1:] == now))


if __name__ == "__main__":
    main()
