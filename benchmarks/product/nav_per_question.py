"""Per-question results of the walk (navigation) on a library and a JSONL of its questions, to compare two parses
of the same documents question by question (``shelfwise eval`` prints only the means).

    .venv/bin/python benchmarks/product/nav_per_question.py LIBRARY.db QUESTIONS.jsonl OUT.json [--embedder minilm]

Mirrors ``shelfwise eval QUESTIONS.jsonl`` for its ``navigation`` method (the same settings: 10 passages, the
library's calibration, no generative model), so its means equal that report's. Each row: the question's line in
the JSONL, its gold file, the document of the first passage and that passage's start, and the passage/section/
document hits. Used in docs/eval/tree-quality.md (the ConditionalQA guides as PDFs and as Markdown, tune half).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from shelfwise.core.models.factory import make_embedder
from shelfwise.core.navigation.snapshots import load_decision, snapshot_for
from shelfwise.core.settings import Budgets, load_settings
from shelfwise.core.store.db import Store
from shelfwise.evaluation.datasets import load_jsonl
from shelfwise.evaluation.retrieval import Methods, judge


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db", type=Path)
    ap.add_argument("questions", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--collection", default="default")
    args = ap.parse_args(argv)
    settings = replace(load_settings().settings, budgets=Budgets(passages=10))
    embedder = make_embedder(args.embedder)
    questions = load_jsonl(args.questions)
    store = Store(args.db)
    try:
        coll = store.find_collection(args.collection)
        if coll is None:
            raise SystemExit(f"no collection {args.collection!r} in {args.db}")
        snap = snapshot_for(store, coll.id, embedder.model_id)
        decision = load_decision(store, coll.id, embedder, None)
        methods = Methods(store, coll.id, snap, embedder, None, settings, decision)
        vecs = np.asarray(embedder.embed_queries([q.query for q in questions]), np.float32)
        rows = []
        for n, (q, vec) in enumerate(zip(questions, vecs, strict=True), 1):
            found = methods.navigation(q.query, vec)
            top = found.passages[0] if found.passages else None
            node = snap.nodes[top] if top is not None else None
            rows.append({"line": n, "gold": [g.path for g in q.gold],
                         "top_document": methods.doc_path.get(node.document_id) if node is not None else None,
                         "top_passage": node.text[:150] if node is not None else "",
                         **judge(snap, methods.doc_path, q, found.passages)})
    finally:
        store.close()
    args.out.write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n")
    means = {k: round(float(np.mean([r[k] for r in rows])), 4) for k in ("document_hit1", "section_hit1",
                                                                          "passage_hit1")}
    print(json.dumps({"questions": len(rows), **means}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
