"""How well the structural-question rules recognise structural questions and leave ordinary ones alone.

The question set (benchmarks/product/structure_questions.jsonl: over the bundled sample and ../shared/corpus files) is
split
by a hash of each question into a tune part (the rules were adjusted looking at its misses only) and a test part
(reported). Usage::

    .venv/bin/python benchmarks/product/structure_recognition.py [--split tune|test|all] [--misses] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from shelfwise.core.answers.structure_intent import recognise
from shelfwise.core.navigation.scope import parse_question

QUESTIONS = Path(__file__).with_name("structure_questions.jsonl")


def load(split: str = "all") -> list[dict]:
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if split == "all" or r["split"] == split]


def measure(rows: list[dict]) -> dict:
    structural = [r for r in rows if r["kind"] != "ordinary"]
    ordinary = [r for r in rows if r["kind"] == "ordinary"]
    misses, wrong_kind, misfires = [], [], []
    for r in structural:
        intent = recognise(parse_question(r["q"]).text)
        if intent is None:
            misses.append(r["q"])
        elif intent.kind != r["kind"]:
            wrong_kind.append(f"{r['q']} -> {intent.kind} (expected {r['kind']})")
    for r in ordinary:
        intent = recognise(parse_question(r["q"]).text)
        if intent is not None:
            misfires.append(f"{r['q']} -> {intent.kind}")
    n_s, n_o = len(structural), len(ordinary)
    return {
        "structural": n_s, "ordinary": n_o,
        "recognised": round((n_s - len(misses)) / n_s, 3) if n_s else None,
        "kind_correct": round((n_s - len(misses) - len(wrong_kind)) / n_s, 3) if n_s else None,
        "misfire": round(len(misfires) / n_o, 3) if n_o else None,
        "misses": misses, "wrong_kind": wrong_kind, "misfires": misfires,
    }


def nearest_kind(q_vec, mat, kinds: list[str], min_cos: float, min_margin: float) -> str | None:
    """The kind of the nearest structural example when its cosine is >= ``min_cos`` and it is nearer than any
    ordinary example by ``min_margin`` (vectors are unit length)."""
    cos = mat @ q_vec
    structural = [i for i, k in enumerate(kinds) if k != "ordinary"]
    rival = max((float(cos[i]) for i, k in enumerate(kinds) if k == "ordinary"), default=-1.0)
    best = max(structural, key=lambda i: cos[i])
    ok = float(cos[best]) >= min_cos and float(cos[best]) - rival >= min_margin
    return kinds[best] if ok else None


def _embedder():
    from shelfwise.core.models.encoders.embedder import Embedder
    from shelfwise.core.settings import Settings

    return Embedder(Settings().embedder_path)


def tune_examples() -> dict:
    """Leave-one-out on the tune half: each tune question judged against the other tune questions as examples,
    over a grid of (min_cos, min_margin); the embedder alone (no rules). Picks the most structural questions
    recognised with the right kind at misfires <= 0.05 (None when no setting keeps misfires that low)."""
    import numpy as np

    rows = load("tune")
    emb = _embedder()
    mat = np.asarray(emb.embed([r["q"] for r in rows]), np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    kinds = [r["kind"] for r in rows]
    grid = []
    for min_cos in (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7):
        for margin in (0.0, 0.02, 0.05, 0.08, 0.1):
            right = fired = 0
            for i, r in enumerate(rows):
                keep = [j for j in range(len(rows)) if j != i]
                got = nearest_kind(mat[i], mat[keep], [kinds[j] for j in keep], min_cos, margin)
                if r["kind"] == "ordinary":
                    fired += got is not None
                else:
                    right += got == r["kind"]
            n_s = sum(k != "ordinary" for k in kinds)
            n_o = len(kinds) - n_s
            grid.append({"min_cos": min_cos, "min_margin": margin, "right_kind": round(right / n_s, 3),
                         "misfire": round(fired / n_o, 3)})
    ok = [g for g in grid if g["misfire"] <= 0.05]
    best = max(ok, key=lambda g: (g["right_kind"], g["min_cos"])) if ok else None
    return {"chosen": best, "grid": grid}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=["tune", "tune2", "test", "fresh", "all"], default="test")
    ap.add_argument("--misses", action="store_true", help="List the misses, wrong kinds and misfires.")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--tune-examples", action="store_true",
                    help="The embedder instead of rules: nearest example question, leave-one-out on the tune half.")
    args = ap.parse_args(argv)
    if args.tune_examples:
        tuned = tune_examples()
        print(json.dumps(tuned["chosen"], indent=1))
        if args.out:
            args.out.write_text(json.dumps(tuned, indent=1) + "\n", encoding="utf-8")
        return 0
    report = measure(load(args.split))
    shown = report if args.misses else {k: v for k, v in report.items()
                                         if k not in ("misses", "wrong_kind", "misfires")}
    print(json.dumps(shown, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"split": args.split, **report}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
