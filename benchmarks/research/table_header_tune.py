"""Choosing how alike a column name and a question's word must be for the encoder to name the column (issue 49;
docs/eval/tables.md): WikiTableQuestions training questions (a sample, seed 0, the library that
``benchmarks/product/tables.py --split training --limit N --work W --prepare`` made; its first ``--limit``)
answered by the table path
with the words alone, then those it leaves unanswered again with the encoder at each (threshold, margin) of a
grid for column names (label cells off), then at the best of those with each threshold for label cells; prints the
accuracy over the whole sample at each point (vectors kept across the points, so the grid costs one embedding of
each text).

    nice -n 19 .venv/bin/python benchmarks/research/table_header_tune.py --work /work/s20/tables/wtq --limit 600
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "product"))

from tables import gold_values, matches, prediction, read_questions, workbook_name


def main() -> None:
    from shelfwise.core.answers.table_match import HeaderEncoder
    from shelfwise.core.answers.tables import answer_from_tables, candidate_tables, load_tables
    from shelfwise.core.models.encoders.embedder import Embedder
    from shelfwise.core.navigation.scope import prepare_question
    from shelfwise.core.store.db import Store

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--sample", type=int, default=2000, help="the sample the library was made for (seed --seed)")
    ap.add_argument("--limit", type=int, default=0, help="the first this many of the sample (0: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--embedder", default="default", help="default (the product's) or minilm")
    ap.add_argument("--thresholds", default="0.45,0.5,0.55,0.6,0.65,0.7")
    ap.add_argument("--margins", default="0,0.05,0.1,0.15")
    ap.add_argument("--cell-thresholds", default="0.8,0.75,0.7,0.65,0.6")
    ap.add_argument("--from-results", type=Path,
                    help="a benchmarks/product/tables.py --embedder none run of the same sample: its unanswered "
                         "questions are the ones tried again (its right answers counted as they are)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    questions = random.Random(args.seed).sample(read_questions("training"), args.sample)[: args.limit or None]
    embedder = Embedder(None if args.embedder == "default" else args.embedder, n_threads=1)
    encoder = HeaderEncoder(embedder, 1.0, 0.0, 2.0)  # label cells off (no cosine reaches 2) until their grid
    base = 0
    left: list[tuple[dict[str, str], list, str]] = []  # type: ignore[type-arg]
    known = {}
    if args.from_results:
        known = {r["id"]: r for r in json.loads(args.from_results.read_text())["results"]}
    with Store(args.work / "training" / "library.db") as store:
        for q in questions:
            if q["id"] in known and known[q["id"]]["answer"]:
                base += bool(known[q["id"]]["correct"])
                continue
            prepared = prepare_question(store, "default", f"{q['utterance']} in:{workbook_name(q['context'])}")
            loaded = load_tables(store.conn, candidate_tables(store, [], prepared.resolved))
            short = answer_from_tables(loaded, prepared.question)
            if short is not None:
                base += matches(gold_values(q), prediction(short.text))
            else:
                left.append((q, loaded, prepared.question))
        def point(name: str) -> dict[str, float]:
            right = answered = 0
            for q, loaded, question in left:
                short = answer_from_tables(loaded, question, encoder, first_level=2)
                if short is not None:
                    answered += 1
                    right += matches(gold_values(q), prediction(short.text))
            print(f"{name}: accuracy {(base + right) / len(questions):.4f} (+{right} right of {answered} newly "
                  f"answered)", flush=True)
            return {"accuracy": (base + right) / len(questions), "newly_answered": answered, "newly_right": right}

        grid = {}
        for t in (float(x) for x in args.thresholds.split(",")):
            for mg in (float(x) for x in args.margins.split(",")):
                encoder.threshold, encoder.margin = t, mg
                grid[f"{t},{mg}"] = point(f"names: threshold {t} margin {mg}")
        best = max(grid, key=lambda k: (grid[k]["accuracy"], k))
        encoder.threshold, encoder.margin = (float(x) for x in best.split(","))
        cells = {}
        for ct in (float(x) for x in args.cell_thresholds.split(",")):
            encoder.cell_threshold = ct
            cells[str(ct)] = point(f"names {best}, label cells: threshold {ct}")
    result = {"sample": args.sample, "first": len(questions), "seed": args.seed, "encoder": embedder.model_id,
              "words_only_accuracy": base / len(questions), "unanswered_by_words": len(left), "names": grid,
              "names_chosen": best, "label_cells": cells}
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
