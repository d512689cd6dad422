"""Structural answers checked against the stored tree, over the question set's documents (the sample and
../shared/corpus files).

    .venv/bin/python benchmarks/product/structure_answers.py [--corpus ../shared/corpus] [--split test] \\
        [--out FILE.json]

Parses the documents the questions name into a fresh library (no vectors: these answers read the tree only),
then for every outline, section, summary and count question with a named document: is the document found; does
an outline list the stored headings of its outline level; does a summary cite >= 3 sections of a document that
has >= 3; does a count say the stored number. "where" needs the walk (vectors) and is checked in
tests/test_structure.py on the sample instead.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from shelfwise.core.answers.structure import answer_structure
from shelfwise.core.answers.structure_intent import recognise
from shelfwise.core.ingestion.runner import ingest
from shelfwise.core.navigation.doc_tree import DocTree
from shelfwise.core.navigation.scope import parse_question
from shelfwise.core.store.db import Store
from shelfwise.resources import path as resource_path

QUESTIONS = Path(__file__).with_name("structure_questions.jsonl")
CHECKED = ("outline", "section", "summary", "count")


def check(store: Store, cid: int, row: dict, docs: dict[str, object]) -> dict:
    q = row["q"]
    intent = recognise(parse_question(q).text)
    out = {"q": q, "kind": row["kind"], "doc": row["doc"], "recognised": intent.kind if intent else None}
    if intent is None or intent.kind != row["kind"]:
        out["ok"] = False
        out["why"] = "not recognised as " + row["kind"]
        return out
    answer = answer_structure(store, cid, q, intent)
    if answer is not None and not answer.found and "could be about" in answer.text:
        out["ok"] = None  # the words name several documents of this library alike: asked back, not guessed
        out["why"] = "ambiguous: " + ", ".join(Path(c.hit.path).name for c in answer.citations)
        return out
    if answer is None:
        out["ok"] = False
        out["why"] = "no answer from the tree (document or section not found)"
        return out
    cited = {Path(c.hit.path).name for c in answer.citations}
    out["found_doc"] = sorted(cited)
    if row["doc"] and cited != {row["doc"]}:
        out["ok"] = False
        out["why"] = f"cites {sorted(cited)}"
        return out
    doc = docs[row["doc"]]
    tree = DocTree.load(store, doc)  # type: ignore[arg-type]
    assert tree is not None
    top = [s.title for s in tree.outline_level()[1]]
    if row["kind"] == "outline":
        heads = [c.hit.heading_path[-1] for c in answer.citations if c.hit.heading_path]
        shown = top[: len(heads)]
        out["ok"] = heads == shown if top else "has no headings" in answer.text
        out["why"] = "" if out["ok"] else f"listed {heads[:5]} vs stored {top[:5]}"
    elif row["kind"] == "summary":
        sections = {tuple(c.hit.heading_path) for c in answer.citations}
        out["sections_cited"] = len(sections)
        out["ok"] = len(sections) >= 3 or len(top) < 3
        out["why"] = "" if out["ok"] else f"{len(sections)} sections cited of {len(top)}"
    elif row["kind"] == "count":
        numbers = [int(n) for n in re.findall(r"\bhas (\d+) ", answer.text)]
        stored = {doc.pages, doc.sections, len(top)}  # type: ignore[attr-defined]
        out["ok"] = bool(numbers) and numbers[0] in stored
        out["why"] = "" if out["ok"] else f"said {numbers} vs stored {sorted(stored)}"
        out["answer"] = answer.text
    else:
        out["ok"] = bool(answer.citations)
        out["why"] = "" if out["ok"] else "no citation"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=Path(__file__).resolve().parents[3] / "shared" / "corpus")
    ap.add_argument("--split", choices=["tune", "tune2", "test", "fresh", "all"], default="test")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [r for r in rows if r["kind"] in CHECKED and r["doc"] and (args.split == "all" or r["split"] == args.split)]
    sample = resource_path("sample")
    files = []
    for name in sorted({r["doc"] for r in rows}):
        for folder in (sample, args.corpus):
            if (folder / name).exists():
                files.append(folder / name)
                break
        else:
            print(f"missing: {name}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "lib.db") as store:
        ingest(store, files, "default")
        cid = store.collection("default").id
        docs = {Path(d.path).name: d for d in store.documents(cid) if d.status == "ok"}
        results = [check(store, cid, r, docs) for r in rows if r["doc"] in docs]
    by_kind: dict[str, list[bool]] = {}
    for r in results:
        if r["ok"] is not None:
            by_kind.setdefault(r["kind"], []).append(bool(r["ok"]))
    summary = {k: f"{sum(v)}/{len(v)}" for k, v in sorted(by_kind.items())}
    summary["asked back (ambiguous)"] = str(sum(1 for r in results if r["ok"] is None))
    report = {"split": args.split, "documents": sorted(docs), "checked": summary,
              "failures": [r for r in results if r["ok"] is not True], "rows": results}
    print(json.dumps({k: report[k] for k in ("split", "checked", "failures")}, indent=1, ensure_ascii=False))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
