"""Walk the not-found data again and keep what each walk showed (session 27): the top passages with their text,
title, headings, P(relevant) and cosine, so that evidence about *what* the passages hold (the question's rarest
terms, a value of the kind asked) can be read offline and a rule fitted on it (``not_found_fit.py``).

The data is ``not_found_tune.py``'s (session 20): each ConditionalQA question with a gold answer walked over the
59 guides (answerable) and again without its guide (unanswerable), its own not-answerable questions unanswerable
too; XQuAD (SQuAD v1.1 dev's questions) the same without the question's article; the sample's own questions
(answerable) and ``data/sample_unanswerable.txt`` (unanswerable), and ``--fresh`` (a JSONL of ``q`` /
``unanswerable``, e.g. ``benchmarks/product/sample_walk_fresh.jsonl``) as a set of its own; ``--traindata`` (session
28): a training set's questions walked as ConditionalQA's are (its library built by ``shelfwise eval traindata:SET``).
One JSON line per walk.

    SHELFWISE_HOME=<a home whose eval/ holds the collections> nice -n 19 .venv/bin/python \\
        benchmarks/research/not_found_walks.py --splits tune,test --xquad en,de --limit 60 \\
        --sample-db <the sample ingested> --out walks.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from not_found_tune import ROOT, load_cqa_all, open_eval, without

from shelfwise.core.answers.answer import passage_cosines
from shelfwise.core.navigation.request import clipped_request
from shelfwise.core.navigation.scope import ResolvedScope
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.evaluation.datasets import EvalSet
from shelfwise.evaluation.run import load_dataset

SHOWN = 5  # the passages an answer shows


def walked(walk: LibraryWalk, question: str, scope: ResolvedScope | None) -> dict[str, Any]:
    """One walk's record: its top passages and, per level, its three best candidates."""
    r = walk.search(replace(clipped_request(question, None, walk.backend), scope=scope))
    hits = r.hits[:SHOWN]
    cos = passage_cosines(r, hits)
    return {"hits": [{"node": h.node_id, "doc": h.document_id, "p": round(h.score, 5),
                      "cos": round(cos.get(h.node_id, 0.0), 4), "title": h.title, "heads": h.heading_path,
                      "text": h.text} for h in hits],
            "levels": [{"label": lv.label, "top": [{"node": c.node_id, "p": round(c.score, 5),
                                                    "cos": round(c.features.get("cos_max", 0.0), 4)}
                                                   for c in sorted(lv.candidates, key=lambda c: -c.score)[:3]]}
                       for lv in r.trace.levels]}


def eval_rows(shelf: Shelf, ds: EvalSet, group: Callable[[str], str]) -> Iterator[dict[str, Any]]:
    store, walk, coll_id, docs = open_eval(shelf, ds)
    t0 = time.perf_counter()
    questions = [q for q in ds.questions if q.answers or q.not_answerable]
    for i, q in enumerate(questions):
        base = {"qid": q.qid, "question": q.query, "db": str(store.path), "collection": coll_id}
        if q.not_answerable:
            yield {**base, "kind": "not_answerable", **walked(walk, q.query, None)}
            continue
        yield {**base, "kind": "answerable", "gold_docs": sorted(docs[g.path] for g in q.gold if g.path in docs),
               **walked(walk, q.query, None)}
        gold = {group(g.path) for g in q.gold}
        keep = {i for path, i in docs.items() if group(path) not in gold}
        yield {**base, "kind": "without_gold", "without": sorted(set(docs.values()) - keep),
               **walked(walk, q.query, without(store, coll_id, keep))}
        if i % 20 == 0:
            print(f"  {ds.name}: {i}/{len(questions)} ({time.perf_counter() - t0:.0f} s)", flush=True)
    store.close()


def sample_rows(db: Path, questions: list[tuple[str, str]]) -> Iterator[dict[str, Any]]:
    with Shelf(Settings(db_path=db)) as shelf:
        walk = LibraryWalk(shelf.store, shelf.models)
        coll = shelf.store.find_collection("default")
        assert coll is not None, f"{db} has no default collection"
        for i, (kind, text) in enumerate(questions):
            yield {"qid": f"sample-{i}", "question": text, "kind": kind, "db": str(db), "collection": coll.id,
                   **walked(walk, text, None)}


def sample_questions(fresh: Path | None) -> list[tuple[str, str]]:
    if fresh is not None:
        return [("not_answerable" if d.get("unanswerable") else "answerable", d["q"])
                for d in map(json.loads, fresh.read_text().splitlines()) if d]
    own = [("answerable", json.loads(line)["question"])
           for line in (ROOT / "resources" / "sample_questions.jsonl").read_text().splitlines() if line.strip()]
    return own + [("not_answerable", line.strip()) for line in
                  (ROOT / "benchmarks" / "research" / "data" / "sample_unanswerable.txt").read_text().splitlines()
                  if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--splits", default="", help="ConditionalQA halves (comma-separated)")
    ap.add_argument("--xquad", default="", help="XQuAD languages (comma-separated)")
    ap.add_argument("--limit", type=int, default=60, help="questions per XQuAD set")
    ap.add_argument("--traindata", default="",
                    help="training sets (../shared/traindata, e.g. orsharc), each question walked over its library and "
                         "again without its document, as ConditionalQA's are")
    ap.add_argument("--sample-db", type=Path, default=None, help="a library of the bundled sample")
    ap.add_argument("--fresh", type=Path, default=None, help="the sample's questions from this JSONL instead")
    args = ap.parse_args()
    with args.out.open("a") as out:
        def put(name: str, rows: Iterator[dict[str, Any]]) -> None:
            for row in rows:
                out.write(json.dumps({"set": name, **row}) + "\n")
                out.flush()

        if args.sample_db:
            put("sample-fresh" if args.fresh else "sample", sample_rows(args.sample_db, sample_questions(args.fresh)))
        with Shelf(Settings(db_path=Path("/tmp/unused-shelf.db"))) as shelf:
            for split in [x for x in args.splits.split(",") if x]:
                ds = load_dataset("conditionalqa", split=split)
                ds.questions = load_cqa_all(split)
                put(f"conditionalqa-{split}", eval_rows(shelf, ds, lambda path: path))
            for lang in [x for x in args.xquad.split(",") if x]:
                ds = load_dataset("xquad", args.limit, lang=lang)
                put(f"xquad-{lang}", eval_rows(shelf, ds, lambda path: path.rsplit("/", 1)[0]))
            for name in [x for x in args.traindata.split(",") if x]:
                ds = load_dataset(f"traindata:{name}", None, split="all")
                for q in ds.questions:  # each has gold passages and no answer text: walked as answerable
                    q.answers = q.answers or ["(its gold passages)"]
                put(f"traindata-{name}", eval_rows(shelf, ds, lambda path: path))


if __name__ == "__main__":
    main()
