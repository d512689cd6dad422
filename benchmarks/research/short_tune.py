"""The span chosen from the sentence (issue 48): the weights of ``core/answers/short.py``'s ranker for questions that
ask for a thing (:class:`~shelfwise.core.answers.short.SpanWeights`), chosen on the TRAINING data only.

The data (``../shared/traindata``): COVID-QA (SQuAD-format extractive QA over CORD-19 papers) and ConditionalQA
TRAIN (gov.uk guides; scenario and question, span answers with their evidence): each question whose kind asks for
a value (not yes/no, not how/why) and whose gold has at most :data:`MAX_GOLD_WORDS` words, asked of the one
sentence that holds its gold (the sentence is taken as found: this grades the span chosen from it, not the walk).
"Right" counts a value that holds the gold or whose words all lie in it. The weights are chosen by coordinate
ascent over :data:`VALUES` (features computed once per question,
:func:`~shelfwise.core.answers.short.nominal_features`), for the highest net gain: +1 for a right value shown,
-:data:`WRONG_COST` for a wrong one, 0 for none (a wrong value shown first is worse than none). A second ascent
on the even-numbered documents, graded on the odd ones, says how well a choice carries. ``--replay ROWS --dataset
xquad-de`` instead re-chooses the value for the sentences an evaluation run showed, with the weights in the code,
for a breakdown of the misses (a report, never a choice).

    .venv/bin/python benchmarks/research/short_tune.py --out docs/eval/short-tune.json
"""

from __future__ import annotations

import argparse
import ast
import collections
import html
import itertools
import json
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from shelfwise.core.answers.first_value import short_answer
from shelfwise.core.answers.matching import answer_matches, normalize_answer
from shelfwise.core.answers.short import (
    SpanWeights,
    _about,
    asked_kind,
    nominal_features,
    spans_of,
    stems,
)
from shelfwise.core.answers.short_confidence import SHOW_ALL
from shelfwise.core.answers.types import Extracted

ROOT = Path(__file__).resolve().parents[2]
TRAIN = ROOT.parent / "shared" / "traindata"
# coordinate ascent over these values, from the code's weights, until no single change gains; ``typed`` (1.0: a
# span of the kind asked for, a name for "who") is held, not chosen: COVID-QA asks 24 name questions, too few to
# set it (its net gain moves by about 0.01 between 0 and 1)
VALUES = {"close": (0.25, 0.5, 1.0, 1.5, 2.0), "capitals": (0.0, 0.25, 0.5, 1.0),
          "length": (-0.6, -0.4, -0.2, -0.1, 0.0), "after": (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0),
          "before": (-2.0, -1.0, 0.0, 0.5, 1.0, 2.0), "lone": (-6.0, -4.0, -3.0, -2.0, -1.0, -0.5, 0.0),
          "min_held": (0, 1, 2, 3),
          "show_min": (-99.0, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)}
WRONG_COST = 1.0  # a wrong value shown first costs what a right one gains: shown only where right more often than not
MAX_GOLD_WORDS = 5  # factoid answers: COVID-QA's longer golds are passages' clauses, not values


def f1(pred: str, gold: str) -> float:
    p, g = normalize_answer(pred).split(), normalize_answer(gold).split()
    common = sum((collections.Counter(p) & collections.Counter(g)).values())
    if not p or not g or not common:
        return 0.0
    prec, rec = common / len(p), common / len(g)
    return 2 * prec * rec / (prec + rec)


def right(pred: str, gold: str) -> bool:
    """A value that lies within the gold (all its words in it) or holds it."""
    p, g = normalize_answer(pred).split(), normalize_answer(gold).split()
    return bool(p) and (answer_matches(pred, [gold]) or not (collections.Counter(p) - collections.Counter(g)))


def covidqa_items() -> list[tuple[str, str, str, int]]:
    """(question, the sentence holding the gold's start, the gold, its article's number) for COVID-QA's
    questions."""
    raw = json.loads((TRAIN / "covidqa" / "original" / "200423_covidQA.json").read_text(encoding="utf-8"))
    out = []
    for number, article in enumerate(raw["data"]):
        for para in article["paragraphs"]:
            ctx = para["context"]
            bounds = [0, *(m.end() for m in re.finditer(r"(?<=[.!?])\s+(?=[A-Z0-9(\"])|\n+", ctx)), len(ctx)]
            for qa in para["qas"]:
                ans = qa["answers"][0]
                text, at = ans["text"], ctx.find(ans["text"])
                if at < 0 or len(text.split()) > MAX_GOLD_WORDS:
                    continue
                for a, b in itertools.pairwise(bounds):
                    if a <= at < b:
                        sentence = ctx[a:b].strip()
                        if len(sentence) < 600:
                            out.append((qa["question"].strip(), sentence, text.strip(), number))
                        break
    return out


def cqa_span_questions() -> Iterator[tuple[dict[str, Any], str, str, list[str]]]:
    """ConditionalQA TRAIN's questions with a span answer of at most ``MAX_GOLD_WORDS`` words
    (``../shared/traindata/conditionalqa_train``): (its record, scenario and question, the gold, its evidence items
    as plain text), in the file's order."""
    raw = json.loads((TRAIN / "conditionalqa_train" / "original" / "train.json").read_text(encoding="utf-8"))
    for x in raw:
        answers = ast.literal_eval(x["answers"]) if isinstance(x["answers"], str) else x["answers"]
        evidences = ast.literal_eval(x["evidences"]) if isinstance(x["evidences"], str) else x["evidences"]
        if not answers or answers[0][0].lower() in ("yes", "no") or len(answers[0][0].split()) > MAX_GOLD_WORDS:
            continue
        texts = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", ev)).split()) for ev in evidences]
        yield x, f"{x['scenario'].strip()} {x['question'].strip()}".strip(), answers[0][0], texts


def gold_sentence(texts: Sequence[str], gold: str) -> str | None:
    """The sentence of the first of ``texts`` (evidence items) that holds ``gold``, or None."""
    for text in texts:
        at = text.lower().find(gold.lower())
        if at >= 0:
            bounds = [0, *(m.end() for m in re.finditer(r"(?<=[.!?])\s+(?=[A-Z0-9])", text)), len(text)]
            a, b = next((a, b) for a, b in itertools.pairwise(bounds) if a <= at < b)
            return text[a:b].strip()
    return None


def cqa_items() -> list[tuple[str, str, str, int]]:
    """(scenario and question, the sentence of its evidence holding the gold, the gold, its guide's number) for
    ConditionalQA TRAIN's questions with a span answer (:func:`cqa_span_questions`)."""
    guides: dict[str, int] = {}
    out = []
    for x, question, gold, texts in cqa_span_questions():
        sentence = gold_sentence(texts, gold)
        if sentence is not None:
            out.append((question, sentence, gold, 1000 + guides.setdefault(x["url"], len(guides))))
    return out


def features(items: list[tuple[str, str, str, int]]) -> list[dict[str, Any]]:
    rows = []
    for question, sentence, gold, article in items:
        kind = asked_kind(question)
        if kind in ("yes_no", "span"):
            continue
        row: dict[str, Any] = {"question": question, "gold": gold, "kind": kind, "article": article}
        if kind in ("name", "place", "list", "thing"):
            row["cands"] = [(sentence[sp.start:sp.end], f) for sp, f in nominal_features(kind, sentence, question)]
            row["held"] = len(stems(question) & stems(_about(sentence)))
        else:
            got = short_answer(question, [Extracted(sentence, 1, 0, len(sentence), 1.0)], show=SHOW_ALL)
            row["value"] = got.text if got else ""
        rows.append(row)
    return rows


def choose(row: dict[str, Any], w: SpanWeights) -> str:
    if "value" in row:
        return str(row["value"])
    if row["held"] < w.min_held:
        return ""
    weights = w.vector()
    best = max(row["cands"], key=lambda c: sum(a * b for a, b in zip(weights, c[1], strict=True)), default=None)
    if best is None or sum(a * b for a, b in zip(weights, best[1], strict=True)) < w.show_min:
        return ""
    return " ".join(best[0].split()).strip(" ,;:|")


def grade(rows: list[dict[str, Any]], w: SpanWeights, kinds: tuple[str, ...] | None = None) -> dict[str, Any]:
    rows = [r for r in rows if kinds is None or r["kind"] in kinds]
    values = [(choose(r, w), r["gold"]) for r in rows]
    shown = [(v, g) for v, g in values if v]
    good = sum(right(v, g) for v, g in shown)
    return {"questions": len(rows), "shown": len(shown),
            "net": round((good - WRONG_COST * (len(shown) - good)) / max(len(rows), 1), 4),
            "mean_f1": round(sum(f1(v, g) for v, g in values) / max(len(rows), 1), 4),
            "contains_gold": round(sum(answer_matches(v, [g]) for v, g in shown) / max(len(rows), 1), 4),
            "precision": round(sum(right(v, g) for v, g in shown) / max(len(shown), 1), 4),
            "recall": round(sum(right(v, g) for v, g in shown) / max(len(rows), 1), 4)}


def ascend(rows: list[dict[str, Any]]) -> SpanWeights:
    """The weights with the highest net gain on ``rows``: coordinate ascent over :data:`VALUES` from the code's (a
    tie keeps the code's value)."""
    best = SpanWeights()
    score = grade(rows, best)["net"]
    for _ in range(6):
        moved = False
        for name, values in VALUES.items():
            for v in values:
                w = replace(best, **{name: v})
                got = grade(rows, w)["net"]
                if got > score + 1e-9:
                    best, score, moved = w, got, True
        if not moved:
            break
    return best


def tune(out: Path) -> None:
    rows = features(covidqa_items() + cqa_items())
    for name, part in (("COVID-QA", [r for r in rows if r["article"] < 1000]),
                       ("ConditionalQA train", [r for r in rows if r["article"] >= 1000])):
        print(f"{name}: {len(part)} questions asking for a value; kinds "
              f"{dict(collections.Counter(r['kind'] for r in part))}", flush=True)
    nominal = ("name", "place", "list", "thing")
    best = ascend([r for r in rows if r["kind"] in nominal])
    # how well a choice carries to questions it was not made on: chosen on the even articles, graded on the odd
    even = ascend([r for r in rows if r["kind"] in nominal and r["article"] % 2 == 0])
    odd = [r for r in rows if r["article"] % 2 == 1]
    held_out = {"chosen_on_even": even.__dict__, "odd_with_it": grade(odd, even, nominal),
                "odd_with_code_weights": grade(odd, SpanWeights(), nominal)}
    report = {"data": "traindata/covidqa 200423_covidQA.json and traindata/conditionalqa_train train.json (the "
                      "sentence holding the gold)",
              "values": VALUES, "wrong_cost": WRONG_COST, "max_gold_words": MAX_GOLD_WORDS,
              "chosen": best.__dict__, "default_in_code": SpanWeights().__dict__,
              "chosen_nominal": grade(rows, best, nominal), "code_nominal": grade(rows, SpanWeights(), nominal),
              "chosen_all": grade(rows, best), "held_out": held_out,
              "covidqa_nominal": grade([r for r in rows if r["article"] < 1000], best, nominal),
              "cqa_train_nominal": grade([r for r in rows if r["article"] >= 1000], best, nominal),
              "cqa_train_nominal_code": grade([r for r in rows if r["article"] >= 1000], SpanWeights(), nominal),
              "by_kind": {k: grade(rows, best, (k,)) for k in
                                                        sorted({r["kind"] for r in rows})}}
    print(json.dumps({k: report[k] for k in ("chosen", "chosen_nominal", "code_nominal", "chosen_all", "held_out",
                                             "covidqa_nominal", "cqa_train_nominal", "cqa_train_nominal_code")},
                     indent=1))
    out.write_text(json.dumps(report, indent=1))


CITE = re.compile(r"(.*?)\s*\[(\d+)\](?:\s|$)", re.S)


def replay(rows_path: Path, dataset: str) -> None:
    """The value re-chosen for the sentences an evaluation run showed, and why it misses (a report only)."""
    sys.path.insert(0, str(ROOT))
    from shelfwise.evaluation.run import load_dataset

    name, _, lang = dataset.partition("-")
    ds = load_dataset(name, lang=lang or None) if name == "xquad" else load_dataset(name)
    asked = {q.qid: q.question for q in ds.questions}
    rows = json.loads(rows_path.read_text())["rows"]
    cats: collections.Counter[str] = collections.Counter()
    examples: dict[str, list[Any]] = collections.defaultdict(list)
    n = before = after = shown = 0
    for r in rows:
        if r["kind"] != "span" or not r["found"] or r["qid"] not in asked:
            continue
        n += 1
        ext, gold, question = r["texts"]["extractive"], r["gold"], asked[r["qid"]]
        sents = [Extracted(m.group(1).strip(), int(m.group(2)), 0, len(m.group(1).strip()), 1.0 - 0.01 * i)
                 for i, m in enumerate(CITE.finditer(ext)) if m.group(1).strip()]
        got = short_answer(question, sents)
        value = got.text if got else ""
        before += answer_matches(r["texts"].get("short", ""), gold)
        after += answer_matches(value, gold)
        shown += bool(value)
        if not answer_matches(ext, gold):
            cats["the sentence lacks the gold"] += 1
            continue
        kind = asked_kind(question)
        if answer_matches(value, gold):
            cats["right"] += 1
            continue
        cands = [s.text[sp.start:sp.end] for s in sents for sp in spans_of(kind, s.text, question)]
        if kind in ("name", "place", "list", "thing"):
            cands += [s.text[sp.start:sp.end] for s in sents for sp, _ in nominal_features(kind, s.text, question)]
        has = any(answer_matches(c, gold) for c in cands)
        among = "the gold among the candidates" if has else "no candidate holds the gold"
        cat = ("no value asked for (how/why/yes-no)" if kind in ("span", "yes_no") else
               f"{'wrong value' if value else 'no value'}, {among}")
        cats[cat] += 1
        examples[cat].append((question, value, gold[0]))
    print(f"{dataset}: {n} span questions found; short holds the gold: rows {before / n:.3f}, re-chosen "
          f"{after / n:.3f}; a value shown {shown}")
    for cat, k in cats.most_common():
        print(f"  {k:4d} {cat}")
    for cat, ex in examples.items():
        print(f"\n## {cat}")
        for e in ex[:10]:
            print("  ", e)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("/tmp/short-tune.json"))
    ap.add_argument("--replay", type=Path, help="an evaluation run's answers-*.json rows (a report, no choice)")
    ap.add_argument("--dataset", default="xquad-de")
    ap.add_argument("--items-out", type=Path, help="write the training items (question, sentence, gold, kind) for "
                    "short_replay.py --items, and stop")
    args = ap.parse_args()
    if args.items_out:
        items = [(q, s, g, asked_kind(q)) for q, s, g, _ in covidqa_items() + cqa_items()]
        args.items_out.write_text(json.dumps([i for i in items if i[3] not in ("yes_no", "span")]))
        return
    if args.replay:
        replay(args.replay, args.dataset)
    else:
        tune(args.out)


if __name__ == "__main__":
    main()
