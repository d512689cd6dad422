"""The error breakdown of WikiTableQuestions runs by question kind (issue 49; docs/eval/tables.md): each question
of the first run's results put in the first kind whose rule its words match (yes/no, "other than" / "not",
difference, "how many ... before/after", next/previous, "A or B", counts, "which X had the most Y", first/last,
total/average, "same as / at least / in a row", other superlatives, plain lookups), then right / answered per kind
for each run given (the same questions, in the same order: ``benchmarks/product/tables.py --out`` files).

    .venv/bin/python benchmarks/research/table_breakdown.py base.json new.json

A second table counts the kinds read in session 22 (a question may be in several): right / wrong values shown
per run.
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict

KINDS = [
    ("yes/no", r"^(is|are|was|were|did|does|do|has|have|can|could)\b"),
    ("other than / not", r"\b(other than|besides|except|apart from|not|n't|no other)\b"),
    ("difference", r"\b(difference|how (much|many) (more|less|fewer|higher|lower|longer|older|younger))\b"),
    ("how many before/after", r"\bhow many\b.*\b(before|after|prior|since|until)\b"),
    ("next/previous", r"\b(next|previous|after|before|following|preceding|prior|above|below|succeeded|preceded)\b"),
    ("A or B", r"\b\w+ or \w+"),
    ("how many (count)", r"\b(how many|number of)\b"),
    ("which X had the most/least Y", r"^(which|who|what)\b.*\b(most|least|highest|lowest|largest|smallest|fewest|"
                                     r"greatest|top|best|worst|longest|shortest)\b"),
    ("first/last", r"\b(first|last|final|earliest|latest)\b"),
    ("total/average", r"\b(total|sum|average|combined|mean|altogether)\b"),
    ("same as / at least N", r"\b(same|at least|in a row|consecutive|only)\b"),
    ("other superlative", r"\b\w+est\b|\b(most|least)\b"),
    ("plain lookup", r"."),
]


KINDS_22 = [
    ("the same X as A", r"\bsame\b"),
    ("consecutive / in a row / streak", r"\b(consecutive\w*|consective|in a row|streaks?)\b"),
    ("wins / losses", r"\b(wins?|won|loss(es)?|lost|draws?)\b"),
    ("a bound said in words (longer than, five, N or more)", r"\b(longer|shorter|taller|larger|smaller|bigger) than \d|"
     r"\b(more|less|fewer|over|under|at least|at most) (than )?(one|two|three|four|five|six|seven|eight|nine|ten|"
     r"twenty|thirty|forty|fifty)\b|\d+ (\w+ )?or (more|greater|higher|less|fewer)\b|\bno (more|less) than\b"),
    ("another row as the bound (more than A)", r"\b(more|less|fewer|greater|higher|lower|larger|smaller|longer|shorter|"
     r"taller|older|younger|faster|slower) (\w+ ){0,3}?than (?!\d)"),
    ("the only", r"\bthe only\b"),
    ("the number of X", r"\b(total )?number of\b"),
    ("how long", r"^how long\b"),
    ("several answers (gold has |)", None),
]


def kind(question: str) -> str:
    t = question.lower()
    return next(k for k, p in KINDS if re.search(p, t))


def main() -> None:
    runs = [json.load(open(p, encoding="utf-8"))["results"] for p in sys.argv[1:]]
    rows: dict[str, list[int]] = defaultdict(lambda: [0] * (1 + 2 * len(runs)))
    for i, r in enumerate(runs[0]):
        v = rows[kind(str(r["question"]))]
        v[0] += 1
        for j, run in enumerate(runs):
            v[1 + 2 * j] += bool(run[i]["correct"])
            v[2 + 2 * j] += bool(run[i]["answer"])
    n = len(runs[0])
    print("| kind | questions | share | " + " | ".join(f"right / answered ({j + 1})" for j in range(len(runs))) + " |")
    print("|---|---|---|" + "---|" * len(runs))
    for k, _ in KINDS:
        v = rows[k]
        if v[0]:
            cells = " | ".join(f"{v[1 + 2 * j] / v[0]:.2f} / {v[2 + 2 * j] / v[0]:.2f}" for j in range(len(runs)))
            print(f"| {k} | {v[0]} | {v[0] / n:.1%} | {cells} |")
    tot = [sum(v[i] for v in rows.values()) for i in range(1 + 2 * len(runs))]
    print(f"| all | {n} | | " + " | ".join(f"{tot[1 + 2 * j] / n:.3f} / {tot[2 + 2 * j] / n:.3f}"
                                           for j in range(len(runs))) + " |")
    heads = " | ".join(f"right / wrong shown ({j + 1})" for j in range(len(runs)))
    print(f"\n| kind (session 22) | questions | {heads} |")
    print("|---|---|" + "---|" * len(runs))
    for name, pattern in KINDS_22:
        hit = [i for i, r in enumerate(runs[0]) if ("|" in str(r["gold"]) if pattern is None
                                                     else re.search(pattern, str(r["question"]).lower()))]
        cells = []
        for run in runs:
            right = sum(bool(run[i]["correct"]) for i in hit)
            shown = sum(bool(run[i]["answer"]) for i in hit)
            cells.append(f"{right} / {shown - right}")
        print(f"| {name} | {len(hit)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
