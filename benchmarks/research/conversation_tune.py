"""Choose how a follow-up is read, on the TUNE split of the multi-turn set only (tests/data/dialogues.jsonl).

Stage 1, the text read and the branches preferred: every follow-up turn is read as a follow-up (no topic-shift
test), for each text of ``reading.TEXTS`` and each document / section bonus; scored on the follow-up turns.
Stage 2, the topic-shift test: with stage 1's best, each threshold and cue weight; scored on follow-up and shift
turns together (their mean passage Hit@1, so missing a shift costs as much as missing a follow-up).
Stage 3, the query vector: with stage 2's best, the question's own vector mixed with the last turn's query's
(``mix``), with and without the document bonus; scored like stage 2 (ties keep the simpler rule).
Writes every figure to docs/eval/conversation-tune.json (``--resume`` keeps stages 1-2 from it and runs stage 3);
the chosen rule goes to ``reading.SHIPPED``.

    shelfwise --db LIB ingest resources/sample ../shared/corpus/{worldview-essay-guide.docx,word-sample.docx,\\
        apache-performance-tuning.pptx,r-intro.pdf,aptia-award-modernisation.pptx}
    .venv/bin/python benchmarks/research/conversation_tune.py --db LIB
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, replace
from pathlib import Path

from shelfwise.core.conversation.reading import TEXTS, ReadingRule
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.evaluation.dialogues import load_dialogues, play, resolve_golds, summarise

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--data", default=str(ROOT / "tests" / "data" / "dialogues.jsonl"))
    ap.add_argument("--out", default=str(ROOT / "docs" / "eval" / "conversation-tune.json"))
    ap.add_argument("--resume", action="store_true", help="keep stages 1 and 2 from --out, run stage 3")
    args = ap.parse_args()
    before = json.loads(Path(args.out).read_text()) if args.resume else None
    dialogues = load_dialogues(args.data, "tune")
    with Shelf(Settings(db_path=Path(args.db), answer_generate=False)) as opened:
        shelf = opened.walk  # the answer path's library
        coll = shelf.store.find_collection("default")
        assert coll is not None
        golds = resolve_golds(shelf.store, coll.id, dialogues)

        def run(rule: ReadingRule) -> dict:
            t0 = time.perf_counter()
            s = summarise([play(shelf, d, golds, rule, "default") for d in dialogues])
            print(f"{rule}: follow-up P {s['by_kind']['followup']['passage']} shift P "
                  f"{s['by_kind']['shift']['passage']} ({time.perf_counter() - t0:.0f} s)", flush=True)
            return {"rule": asdict(rule), "by_kind": s["by_kind"], "shift_read_alone": s["shift_read_alone"],
                    "followup_read_as_followup": s["followup_read_as_followup"]}

        def both(r: dict) -> float:
            return (r["by_kind"]["followup"]["passage"] + r["by_kind"]["shift"]["passage"]) / 2

        if before is not None:
            stage1, stage2 = before["stage1"], before["stage2"]
        else:
            stage1 = [run(ReadingRule(text=t, document_bonus=db, section_bonus=sb, gate=False))
                      for t in TEXTS for db in (0.0, 1.0, 2.0, 4.0) for sb in (0.0, 1.0, 2.0)]
            best1 = max(stage1, key=lambda r: (r["by_kind"]["followup"]["passage"],
                                               r["by_kind"]["followup"]["section"]))
            base = ReadingRule(**{k: v for k, v in best1["rule"].items() if k in ReadingRule.__dataclass_fields__})
            stage2 = [run(replace(base, gate=True, threshold=th, cue_weight=cw))
                      for th in (-0.3, -0.2, -0.15, -0.1, -0.05, 0.0, 0.05) for cw in (0.0, 0.05, 0.1, 0.2)]
        best1 = max(stage1, key=lambda r: (r["by_kind"]["followup"]["passage"], r["by_kind"]["followup"]["section"]))
        best2 = max(stage2, key=lambda r: (both(r), -abs(r["rule"]["threshold"])))
        base2 = ReadingRule(**{k: v for k, v in best2["rule"].items() if k in ReadingRule.__dataclass_fields__})
        stage3 = [run(replace(base2, mix=mx, document_bonus=db)) for mx in (0.25, 0.5, 1.0) for db in (0.0, 1.0)]
        best3 = max([best2, *stage3], key=lambda r: (both(r), -r["rule"].get("mix", 0.0),
                                                     -r["rule"]["document_bonus"]))
    report = {"data": args.data, "split": "tune", "dialogues": len(dialogues), "stage1": stage1,
              "stage1_best": best1["rule"], "stage2": stage2, "stage2_best": best2["rule"], "stage3": stage3,
              "chosen": best3["rule"], "chosen_figures": best3}
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print("chosen:", best3["rule"])


if __name__ == "__main__":
    main()
