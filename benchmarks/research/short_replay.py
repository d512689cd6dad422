"""The value shown first, re-chosen by the code on the path for the sentences an evaluation run showed (issue 48).

``shelfwise eval ... --answers`` writes, per question, the sentences it showed (``texts.extractive``, each passage's
sentences followed by its ``[n]``) and the value (``texts.short``). This script asks the ``short_answer`` of
whatever ``shelfwise`` is importable (this tree, or a frozen checkout through ``PYTHONPATH``) for a value from those
same sentences, and grades both as ``benchmarks/product/answers.py`` does (the value holds a gold answer as whole
words). So the code before a change and after it are compared on one walk's sentences: the span chosen from the
sentence, nothing else. It imports only what every release since the short answer has (``short_answer``), so it
runs on the code before too:

    .venv/bin/python benchmarks/research/short_replay.py ROWS.json --dataset xquad-en --out after.json
    PYTHONPATH=<shim of the frozen checkout> .venv/bin/python benchmarks/research/short_replay.py ROWS.json \\
        --dataset xquad-en --out before.json

The sentences of one passage are read back as one text (their boundaries are not in the rows), so a replayed value
can differ from what the run itself showed; the rows' own value is reported beside it.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from shelfwise.core.answers.matching import answer_matches
from shelfwise.core.answers.short import short_answer
from shelfwise.core.answers.types import Extracted

CITE = re.compile(r"(.*?)\s*\[(\d+)\](?:\s|$)", re.S)


def sentences_of(extractive: str) -> list[Extracted]:
    """The shown sentences back as :class:`Extracted`, in the order shown (the ranker's), one per ``[n]``."""
    found = [m for m in CITE.finditer(extractive) if m.group(1).strip()]
    return [Extracted(m.group(1).strip(), int(m.group(2)), 0, len(m.group(1).strip()), 1.0 - 0.01 * i)
            for i, m in enumerate(found)]


def questions(dataset: str) -> dict[str, str]:
    from shelfwise.evaluation.run import load_dataset

    name, _, rest = dataset.partition("-")
    if name == "xquad":
        ds = load_dataset("xquad", lang=rest)
    elif name == "conditionalqa":
        ds = load_dataset("conditionalqa", split=rest or "all")
    else:
        ds = load_dataset(name)
    return {q.qid: q.question for q in ds.questions}


def replay(rows: list[dict[str, Any]], asked: dict[str, str]) -> dict[str, Any]:
    span = [r for r in rows if r["kind"] == "span"]
    out = []
    for r in span:
        got = short_answer(asked[r["qid"]], sentences_of(r["texts"]["extractive"])) if r["found"] else None
        value = got.text if got else ""
        out.append({"qid": r["qid"], "question": asked[r["qid"]], "gold": r["gold"], "value": value,
                    "holds": answer_matches(value, r["gold"]) if value else False,
                    "run_value": r["texts"].get("short", ""),
                    "run_holds": answer_matches(r["texts"].get("short", ""), r["gold"])
                    if r["texts"].get("short") else False,
                    "sentence_holds": answer_matches(r["texts"]["extractive"], r["gold"])})
    n = len(out) or 1
    shown = [x for x in out if x["value"]]
    return {"span_questions": len(out),
            "short_contains_gold": round(sum(x["holds"] for x in out) / n, 4),
            "value_shown": len(shown),
            "precision": round(sum(x["holds"] for x in shown) / (len(shown) or 1), 4),
            "run_short_contains_gold": round(sum(x["run_holds"] for x in out) / n, 4),
            "sentence_contains_gold": round(sum(x["sentence_holds"] for x in out) / n, 4),
            "rows": out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rows", type=Path, help="an evaluation run's answers-*.json")
    ap.add_argument("--dataset", required=True, help="xquad-en, xquad-de, squad, conditionalqa-test, ...")
    ap.add_argument("--out", type=Path, default=Path("/tmp/short-replay.json"))
    args = ap.parse_args()
    result = replay(json.loads(args.rows.read_text())["rows"], questions(args.dataset))
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}))


if __name__ == "__main__":
    main()
