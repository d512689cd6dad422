"""The release before tables were stored, on a sample of WikiTableQuestions' test questions (issue 49, item 5): what
"text chunks with an extracted sentence" answers, beside the table path's answers to the same questions.

Run it with the older checkout's code first on PYTHONPATH (a folder holding ``shelfwise/{core,ingest,app,
resources}`` linked to ``git worktree add --detach <dir> a682462``), after ``benchmarks/product/tables.py`` wrote the
split's workbooks:

    PYTHONPATH=/path/to/oldpkg nice -n 19 .venv/bin/python benchmarks/product/tables_before.py --sample 100 \\
        --work /tmp/wtq --out docs/eval/tables-before.json

The sampled questions' workbooks are ingested into a library of their own with the defaults (the walk's encoder,
indexed); each question is asked in process (``Shelf.ask``, scoped ``in:<its workbook>`` as the table path is,
generation off: the extracted sentence is the answer shown first). Scored twice: by the dataset's evaluator on
the answer's text (``benchmarks/product/tables.py``), and leniently: every gold value's normalised text inside the
normalised answer.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tables import (
    gold_values,
    matches,
    normalize,
    prediction,
    question_type,
    read_questions,
    unescape,
    workbook_name,
)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", default="pristine-unseen-tables")
    ap.add_argument("--sample", type=int, default=100)
    ap.add_argument("--work", type=Path, default=Path("/tmp/wtq"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--embedder", help="the encoder (default: the library default, EmbeddingGemma)")
    args = ap.parse_args()
    from shelfwise.core.settings import Settings
    from shelfwise.core.shelf import Shelf

    questions = random.Random(0).sample(read_questions(args.split), args.sample)
    folder = args.work / f"before-{args.sample}" / "tables"
    folder.mkdir(parents=True, exist_ok=True)
    for q in questions:
        src = args.work / args.split / "tables" / workbook_name(q["context"])
        shutil.copy(src, folder / src.name)
    db = args.work / f"before-{args.sample}" / "library.db"
    results = []
    settings = Settings(db_path=db, answer_generate=False)
    if args.embedder:
        settings = Settings(db_path=db, answer_generate=False, embedder_path=args.embedder)
    with Shelf(settings) as shelf:
        t0 = time.perf_counter()
        shelf.ingest([folder], "default")
        ingest_seconds = time.perf_counter() - t0
        for q in questions:
            t1 = time.perf_counter()
            answer = shelf.ask(f"{q['utterance']} in:{workbook_name(q['context'])}", "default")
            text = re.sub(r"\s*\[\d+(,\s*\d+)*\]", "", answer.text).strip()
            gold = [unescape(v) for v in q["targetValue"].split("|")]
            results.append({
                "id": q["id"], "question": q["utterance"], "gold": q["targetValue"], "answer": text,
                "type": question_type(q["utterance"]), "seconds": round(time.perf_counter() - t1, 3),
                "correct": matches(gold_values(q), prediction(text)),
                "contains": bool(text) and all(normalize(g) in normalize(text) for g in gold),
            })
    n = len(results)
    summary = {"questions": n, "embedder": args.embedder or "default",
               "accuracy": sum(r["correct"] for r in results) / n,
               "contains_gold": sum(r["contains"] for r in results) / n, "ingest_seconds": ingest_seconds}
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "results": results}, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
