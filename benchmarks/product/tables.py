"""WikiTableQuestions through the product's table path (issue 49, item 5; docs/eval/tables.md).

Each distinct table of a split is written as a workbook (``<folder>-<n>.xlsx``: the dataset's ``.tsv``, its first
row the header, every cell written as text) and the whole split is ingested once into one library with the CLI
(``shelfwise --db <lib> ingest <folder> --no-index``: the parse worker, the table stored; no embedding). Each
question is then read as ``shelfwise ask "<question> in:<its workbook>"`` reads it (``prepare_question``: the
``in:`` filter resolved to that one document) and answered by the table path ``answer_question`` runs before the
walk's sentence (``table_answer``: the scope's tables, ``answer_from_tables``). The walk itself is not run: with
one document in scope its passages are that document's, so the tables tried are the same; a question the table
path leaves unanswered (the product then shows the walk's sentence) is counted wrong.

Scoring follows the dataset's evaluator as its README and SOURCE.md describe it (``normalize``, ``to_value``,
``matches``): answers are sets; strings compared after normalisation; numbers within 1e-6; dates by their parts;
the test split's gold values take their official canonical forms from the ``.tagged`` file. The value compared
is the short answer's text (a number written with thousands separators read as that number). Each answer is also
marked ``shown``: whether the product would show it (``core/answers/ask.py`` withholds a table value of another kind
than the one asked: ``value_fits``, unless ``names_a_row``); ``accuracy_shown`` counts only those (session 24; the
``accuracy`` of sessions 19-23 does not apply that check).

    nice -n 19 .venv/bin/python benchmarks/product/tables.py --split training --limit 2000 --out /tmp/wtq-train.json
    nice -n 19 .venv/bin/python benchmarks/product/tables.py --split pristine-unseen-tables \\
        --out docs/eval/tables-wtq.json
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import time
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "evaldata" / "wikitablequestions" / "original"


# ------------------------------------------------------------------------------------------------ the data
def unescape(cell: str) -> str:
    return cell.replace("\\n", "\n").replace("\\p", "|").replace("\\\\", "\\")


def read_questions(split: str) -> list[dict[str, str]]:
    lines = (DATA / "data" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
    head = lines[0].split("\t")
    rows = [dict(zip(head, ln.split("\t"), strict=True)) for ln in lines[1:] if ln]
    tagged = DATA / "tagged" / "data" / f"{split}.tagged"
    if tagged.exists():
        t_lines = tagged.read_text(encoding="utf-8").splitlines()
        t_head = t_lines[0].split("\t")
        canon = {}
        for ln in t_lines[1:]:
            rec = dict(zip(t_head, ln.split("\t"), strict=False))
            canon[rec["id"]] = (rec.get("targetCanon", ""), rec.get("targetCanonType", ""))
        for r in rows:
            r["canon"], r["canon_type"] = canon.get(r["id"], ("", ""))
    return rows


def workbook_name(context: str) -> str:
    """csv/204-csv/590.csv -> 204-csv-590.xlsx"""
    parts = Path(context).with_suffix("").parts
    return f"{parts[-2]}-{parts[-1]}.xlsx"


def write_workbooks(questions: list[dict[str, str]], folder: Path) -> int:
    import openpyxl

    folder.mkdir(parents=True, exist_ok=True)
    made = 0
    for context in sorted({q["context"] for q in questions}):
        out = folder / workbook_name(context)
        if out.exists():
            continue
        tsv = (DATA / context).with_suffix(".tsv").read_text(encoding="utf-8").splitlines()
        wb = openpyxl.Workbook(write_only=True)
        ws = wb.create_sheet("Table")
        for line in tsv:
            ws.append([unescape(c) for c in line.split("\t")])
        wb.save(str(out))
        made += 1
    return made


# ------------------------------------------------------------------------------------------------ scoring
_FOOTNOTE = re.compile(r"(\[[^\]]*\]|[†‡*#])+$")
_PAREN = re.compile(r"\s*\([^)]*\)$")


def normalize(x: str) -> str:
    x = "".join(c for c in unicodedata.normalize("NFKD", x) if unicodedata.category(c) != "Mn")
    x = re.sub(r"[‘’´`]", "'", x)
    x = re.sub(r"[“”]", '"', x)
    x = re.sub(r"[‐‑‒–—−]", "-", x)
    while True:
        old = x
        x = _FOOTNOTE.sub("", x.strip()).strip()
        x = _PAREN.sub("", x).strip()
        if x == old:
            break
    x = re.sub(r'^"(.*)"$', r"\1", x.strip())
    x = x.rstrip(".") if x.endswith(".") else x
    return " ".join(x.lower().split())


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


_DATE = re.compile(r"^(\d{4}|xx)-(\d{2}|xx)-(\d{2}|xx)$")


def to_value(text: str, canon: str = "", canon_type: str = "") -> tuple[str, object, str]:
    """(kind, value, normalised string): a number, a date (year, month, day; -1 unknown) or a string."""
    norm = normalize(text)
    if canon_type == "number" and _number(canon) is not None:
        return "number", _number(canon), norm
    if canon_type == "date" and _DATE.match(canon):
        m = _DATE.match(canon)
        assert m is not None
        return "date", tuple(-1 if p == "xx" else int(p) for p in m.groups()), norm
    if canon_type:
        return "string", norm, norm
    plain = text.strip()
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", plain):  # no canonical form (training): 1,234 as CoreNLP reads it
        plain = plain.replace(",", "")
    n = _number(plain)
    if n is not None:
        return "number", n, norm
    m = _DATE.match(text.strip().lower())
    if m:
        return "date", tuple(-1 if p == "xx" else int(p) for p in m.groups()), norm
    return "string", norm, norm


def _match(gold: tuple[str, object, str], pred: tuple[str, object, str]) -> bool:
    if gold[0] == "number" and pred[0] == "number":
        return abs(float(gold[1]) - float(pred[1])) < 1e-6  # type: ignore[arg-type]
    if gold[0] == "date" and pred[0] == "date":
        return gold[1] == pred[1]
    return gold[2] == pred[2]


def matches(gold: list[tuple[str, object, str]], pred: list[tuple[str, object, str]]) -> bool:
    return len(gold) == len(pred) and all(any(_match(g, p) for p in pred) for g in gold)


def gold_values(q: dict[str, str]) -> list[tuple[str, object, str]]:
    raw = q["targetValue"].split("|")
    canon = q.get("canon", "").split("|") if q.get("canon") else [""] * len(raw)
    kinds = q.get("canon_type", "")
    if len(canon) != len(raw):
        canon = [""] * len(raw)
    return [to_value(unescape(v), c, kinds if c else "") for v, c in zip(raw, canon, strict=True)]


def prediction(text: str, listed: bool = False) -> list[tuple[str, object, str]]:
    """The answer's values: its text, or a list's items (a short answer of kind "list" is its items joined by
    "; ", as the product shows it)."""
    if listed:
        return [v for item in text.split("; ") for v in prediction(item)]
    plain = text.strip()
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+(\.\d+)?", plain):  # 1,234 as the number it shows
        plain = plain.replace(",", "")
    return [to_value(plain)]


def question_type(text: str) -> str:
    t = text.lower()
    if re.search(r"\b(how many|number of)\b", t) and not re.search(r"how many (more|less|fewer)", t):
        return "count"
    if re.search(r"\b(difference|how (much|many) (more|less|fewer)|more than|less than|before|after|or)\b", t):
        return "comparison"
    if re.search(r"\b(total|sum|average|combined|mean)\b", t):
        return "sum/average"
    if re.search(r"\b(most|least|highest|lowest|largest|smallest|first|last|top|best|worst|\w+est)\b", t):
        return "superlative"
    return "lookup"


# ------------------------------------------------------------------------------------------------ the run
def ingest(folder: Path, db: Path) -> float:
    exe = str(Path(sys.executable).parent / "shelfwise")
    t0 = time.perf_counter()
    r = subprocess.run([exe, "--db", str(db), "ingest", str(folder), "--no-index"], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"ingest failed: {r.stderr[-2000:]}")
    return time.perf_counter() - t0


def answer_all(db: Path, questions: list[dict[str, str]], embedder: object = None) -> list[dict[str, object]]:
    from shelfwise.core.answers.short import value_fits
    from shelfwise.core.answers.tables import names_a_row, table_answer
    from shelfwise.core.navigation.scope import prepare_question
    from shelfwise.core.store.db import Store

    out: list[dict[str, object]] = []
    with Store(db) as store:
        for q in questions:
            t0 = time.perf_counter()
            prepared = prepare_question(store, "default", f"{q['utterance']} in:{workbook_name(q['context'])}")
            if embedder is None:  # as the release before calls it (no encoder argument)
                short = table_answer(store, prepared.question, [], prepared.resolved)
            else:
                short = table_answer(store, prepared.question, [], prepared.resolved, embedder)  # type: ignore[call-arg]
            seconds = time.perf_counter() - t0
            text = short.text if short is not None else ""
            listed = short is not None and short.kind == "list"
            ok = short is not None and matches(gold_values(q), prediction(text, listed))
            # what the product shows of it (core/answers/ask.py): not a value of another kind than the one asked
            shown = short is not None and (value_fits(prepared.question, text) or names_a_row(prepared.question, short))
            out.append({"id": q["id"], "question": q["utterance"], "gold": q["targetValue"], "answer": text,
                        "operation": short.operation if short else "", "correct": ok, "shown": shown,
                        "score": short.score if short else 0.0,
                        "type": question_type(q["utterance"]), "seconds": round(seconds, 4)})
    return out


def summary(results: list[dict[str, object]]) -> dict[str, object]:
    n = len(results)
    by_type: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for r in results:
        t = by_type[str(r["type"])]
        t[0] += 1
        t[1] += bool(r["correct"])
        t[2] += bool(r["answer"])
    ops = Counter(str(r["operation"]) or "(none)" for r in results)
    correct_ops = Counter(str(r["operation"]) for r in results if r["correct"])
    return {
        "questions": n,
        "accuracy": sum(bool(r["correct"]) for r in results) / max(1, n),
        "answered": sum(bool(r["answer"]) for r in results) / max(1, n),
        # as the product shows it: a value its kind check withholds counts as no answer (not in sessions 19-23)
        "accuracy_shown": sum(bool(r["correct"]) and bool(r.get("shown", True)) for r in results) / max(1, n),
        "answered_shown": sum(bool(r["answer"]) and bool(r.get("shown", True)) for r in results) / max(1, n),
        "by_type": {k: {"questions": v[0], "accuracy": v[1] / v[0], "answered": v[2] / v[0]}
                    for k, v in sorted(by_type.items())},
        "by_operation": {k: {"answers": v, "correct": correct_ops.get(k, 0)} for k, v in ops.most_common()},
        "mean_seconds": sum(float(r["seconds"]) for r in results) / max(1, n),  # type: ignore[arg-type]
    }


def _before_encoder(args: argparse.Namespace) -> object:
    """The encoder a release before answers with (``--embedder``), when its table path takes one (session 20 on);
    None for an older one or ``--embedder none``."""
    import inspect

    from shelfwise.core.answers.tables import table_answer

    if args.embedder == "none" or "embedder" not in inspect.signature(table_answer).parameters:
        return None
    from shelfwise.core.models.encoders.embedder import Embedder

    return Embedder(None if args.embedder == "default" else args.embedder, n_threads=1)


def run_before(args: argparse.Namespace, db: Path, folder: Path) -> list[dict[str, object]]:
    """The same questions answered by a release before's code (``folder`` first on PYTHONPATH), in a subprocess of
    this script on the same library, with the same encoder where that release's table path takes one."""
    import os
    import tempfile

    env = dict(os.environ, PYTHONPATH=str(folder))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "before.json"
        cmd = [sys.executable, __file__, "--split", args.split, "--limit", str(args.limit), "--seed", str(args.seed),
               "--work", str(args.work), "--reuse", "--embedder", args.embedder, "--results-only", str(out)]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"the release before failed: {r.stderr[-2000:]}")
        return json.loads(out.read_text())  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="training")
    ap.add_argument("--limit", type=int, default=0, help="a random sample of this many questions (seed 0)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/wtq"), help="workbooks and the library")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--reuse", action="store_true", help="reuse the split's library when it exists")
    ap.add_argument("--prepare", action="store_true", help="write the workbooks and ingest them; answer nothing")
    ap.add_argument("--embedder", default="default",
                    help="the encoder that matches column names: default (the product's), minilm, or none")
    ap.add_argument("--seed", type=int, default=0, help="the seed of the --limit sample")
    ap.add_argument("--header-match", help="THRESHOLD,MARGIN for the encoder's column names (choosing them)")
    ap.add_argument("--before", type=Path, action="append",
                    help="also answer every question with a release before (a folder holding its shelfwise/ "
                         "package, put first on PYTHONPATH in a subprocess), in the same run, on the same library; "
                         "may be given more than once (the first is the one compared question by question)")
    ap.add_argument("--results-only", type=Path, help=argparse.SUPPRESS)  # the --before subprocess's output
    args = ap.parse_args()
    questions = read_questions(args.split)
    if args.limit:
        questions = random.Random(args.seed).sample(questions, min(args.limit, len(questions)))
    folder = args.work / args.split / "tables"
    db = args.work / args.split / "library.db"
    made = write_workbooks(questions, folder)
    ingest_seconds = 0.0
    if not (args.reuse and db.exists()):
        ingest_seconds = ingest(folder, db)
    print(f"{made} workbooks written, ingest {ingest_seconds:.1f} s", flush=True)
    if args.prepare:
        return
    if args.results_only:  # the release before's answers (run by --before): the results and nothing else
        args.results_only.write_text(json.dumps(answer_all(db, questions, _before_encoder(args)), ensure_ascii=False))
        return
    befores = []
    for folder in args.before or []:
        befores.append((folder, run_before(args, db, folder)))
        print(f"the release before ({folder}):", json.dumps(summary(befores[-1][1]), indent=1), flush=True)
    before = befores[0][1] if befores else None
    embedder = None
    if args.header_match:
        from shelfwise.core.answers import tables as table_answers

        pair = tuple(float(x) for x in args.header_match.split(","))
        table_answers.HEADER_MATCH = {k: (pair[0], pair[1]) for k in table_answers.HEADER_MATCH}
    if args.embedder != "none":
        from shelfwise.core.models.encoders.embedder import Embedder

        embedder = Embedder(None if args.embedder == "default" else args.embedder, n_threads=1)
    results = answer_all(db, questions, embedder)
    s = summary(results)
    print(json.dumps(s, indent=1))
    if before is not None:
        s = {**s, "before": summary(before), "before_code": str(befores[0][0]),
             "befores": {str(f): summary(b) for f, b in befores}}
        for r, b in zip(results, before, strict=True):
            r["before_answer"], r["before_correct"], r["before_shown"] = b["answer"], b["correct"], b.get("shown")
        for f, b in befores[1:]:
            for r, o in zip(results, b, strict=True):
                r[f"answer_{Path(f).name}"], r[f"correct_{Path(f).name}"] = o["answer"], o["correct"]
    if args.out:
        args.out.write_text(json.dumps({"split": args.split, "limit": args.limit, "seed": args.seed,
                                        "embedder": getattr(embedder, "model_id", "none"),
                                        "ingest_seconds": ingest_seconds,
                                        "summary": s, "results": results}, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
