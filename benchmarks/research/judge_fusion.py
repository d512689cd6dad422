"""Choose how the walk reads the relevance judge at its last level (issue 40, item 3), on tuning collections only.

    # 1. every question's last-level pool: the walk's own score per candidate (judge off), the judge's logit for the
    #    24 best of them, and which candidates are gold (passage / section / document)
    nice .venv/bin/python benchmarks/research/judge_fusion.py collect --names cqa-tune --embedder embeddinggemma \\
        --out /work/judge-runs/fusion
    # 2. every rule (the judge reads the top n; its z-scored logit enters with m x the decision model's weight) on
    #    the pools: Hit@1 per collection, the chosen rule, written to --json
    .venv/bin/python benchmarks/research/judge_fusion.py choose --pools /work/judge-runs/fusion \\
        --json docs/eval/judge-fusion.json

The pools are what ``shelfwise eval`` walks (same budgets, the collection's calibration, no generative readout);
the offline score of a candidate is its logit in the walk plus ``m * w * z_judge``, where ``w`` is the decision
model's own weight for ``z_judge`` at the passage level and ``z_judge`` is the judge's logit z-scored among the
candidates it read (the rest get the lowest read z), exactly as ``features.set_judge`` and the combiner do in the
walk. Collections: ConditionalQA's TUNE half and the traindata collections (``traindata:*``) only; the judge was
trained on the traindata sets' questions, so their rows say whether it holds on its own ground, not how it
transfers (docs/eval/judge.md).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from shelfwise.core.models.encoders.cross_encoder import Judge
from shelfwise.core.models.encoders.embedder import resolve_embedder
from shelfwise.core.navigation.features import FEATURES
from shelfwise.core.navigation.navigator import judge_query
from shelfwise.core.navigation.readout_prompts import judge_text
from shelfwise.core.settings import Budgets, Settings
from shelfwise.core.shelf import Shelf
from shelfwise.evaluation.retrieval import judge
from shelfwise.evaluation.run import eval_collection

COLLECTIONS = {"cqa-tune": ("conditionalqa", "tune", None), "covidqa": ("traindata:covidqa", "all", 250),
               "medquad": ("traindata:medquad", "all", 250), "pubmedqa": ("traindata:pubmedqa", "all", 250),
               "orsharc": ("traindata:orsharc", "all", 250)}
READ = 24  # the most candidates any rule lets the judge read
TOPS = (4, 6, 8, 12, 16, 24)
MULTS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0)
LEVELS = ("passage", "section", "document")


def _logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return float(np.log(p) - np.log1p(-p))


def collect(out: Path, names: list[str], embedder_name: str | None, judge_path: Path | None, threads: int) -> None:
    out.mkdir(parents=True, exist_ok=True)
    settings = Settings(budgets=Budgets(passages=10), n_threads=threads,
                        embedder_path=str(resolve_embedder(embedder_name)) if embedder_name else None)
    jd = Judge(judge_path, n_threads=threads)
    with Shelf(settings) as shelf:
        embedder = shelf.embedder
        for name in names:
            dataset, split, limit = COLLECTIONS[name]
            t0 = time.perf_counter()
            with eval_collection(dataset, split, limit, embedder, settings) as ec:
                ds, m, q_vecs = ec.ds, ec.methods, ec.q_vecs
                snap, decision, cid = m.snap, m.decision, m.collection_id
                w = float(decision.levels["passage"].weights[FEATURES.index("z_judge")])
                pre, jl, gold, sizes, walk, jsec = [], [], [], [], [], 0.0
                for q, vec in zip(ds.questions, q_vecs, strict=True):
                    nav = m.navigator(settings.readout)
                    ev = nav.evidence(snap, q.query, cid, vec)
                    res = nav.walk(snap, decision, ev, q.query, keep=set(), cancel=None, t0=time.perf_counter())
                    cands = res.trace.levels[-1].candidates
                    s = np.array([_logit(c.score) for c in cands], np.float64)
                    top = np.argsort(-s, kind="stable")[:READ]
                    t1 = time.perf_counter()
                    lg = jd.score(judge_query(jd, q.query), [judge_text(snap, snap.nodes[cands[i].node_id])
                                                             for i in top])
                    jsec += time.perf_counter() - t1
                    row = np.full(len(cands), np.nan)
                    row[top] = lg
                    pre.append(s)
                    jl.append(row)
                    gold.append(np.array([[judge(snap, m.doc_path, q, [c.node_id])[f"{k}_hit1"] for k in LEVELS]
                                          for c in cands], np.float32).reshape(-1, 3))
                    sizes.append(len(cands))
                    walk.append([judge(snap, m.doc_path, q, [h.node_id for h in res.hits])[f"{k}_hit1"]
                                 for k in LEVELS])
                np.savez_compressed(out / f"{name}.npz", pre=np.concatenate(pre), judge=np.concatenate(jl),
                                    gold=np.concatenate(gold), sizes=np.array(sizes), walk=np.array(walk),
                                    w=np.array(w), judge_seconds=np.array(jsec), judge_model=np.array(jd.model_id),
                                    embedder=np.array(embedder.model_id))
                print(f"{name}: {len(ds.questions)} questions, walk Hit@1 {np.mean(walk, 0).round(4).tolist()}, "
                      f"judge {jsec:.0f} s for {sum(min(READ, n) for n in sizes)} pairs, "
                      f"{time.perf_counter() - t0:.0f} s", flush=True)
    jd.close()


def hits(d: dict, top: int, mult: float) -> np.ndarray:
    """Hit@1 (passage, section, document) per question when the judge reads ``top`` and weighs ``mult``."""
    ends = np.cumsum(d["sizes"])
    out = []
    for a, b in zip(ends - d["sizes"], ends, strict=True):
        s, j, g = d["pre"][a:b], d["judge"][a:b], d["gold"][a:b]
        score = s.copy()
        if top and mult:
            read = np.argsort(-s, kind="stable")[:top]
            v = j[read]
            z = (v - v.mean()) / (v.std() + 1e-9) if len(v) > 1 else np.zeros_like(v)
            zj = np.full(len(s), z.min() if len(z) else 0.0)
            zj[read] = z
            score = s + mult * float(d["w"]) * zj
        out.append(g[int(np.argmax(score))])
    return np.array(out)


def choose(pools: Path, out: Path | None) -> dict:
    data = {p.stem: dict(np.load(p)) for p in sorted(pools.glob("*.npz"))}
    res: dict = {"collections": {}, "rules": []}
    for name, d in data.items():
        base = [round(float(v), 4) for v in hits(d, 0, 0.0).mean(0)]
        walk = [round(float(v), 4) for v in np.mean(d["walk"], 0)]
        res["collections"][name] = {"questions": len(d["sizes"]), "walk": walk, "offline_no_judge": base,
                                    "w": float(d["w"]),
                                    "judge_pairs_per_s": round(float(sum(np.minimum(d["sizes"], READ))
                                                                     / d["judge_seconds"]), 1)}
    for top in TOPS:
        for mult in MULTS:
            row = {"top": top, "mult": mult}
            for name, d in data.items():
                row[name] = [round(float(v), 4) for v in hits(d, top, mult).mean(0)]
            res["rules"].append(row)
    # the rule: the best passage Hit@1 on ConditionalQA's tune half among rules that lose no traindata collection
    # more than 0.01 passage Hit@1 against the walk without the judge (the bar), cheaper rule on ties
    def ok(r: dict) -> bool:
        return all(r[n][0] >= res["collections"][n]["offline_no_judge"][0] - 0.01 for n in data if n != "cqa-tune")

    cands = [r for r in res["rules"] if ok(r)] if "cqa-tune" in data else []
    if cands:
        best = max(cands, key=lambda r: (r["cqa-tune"][0], r["cqa-tune"][1], -r["top"]))
        # the judge is read only where it wins: a rule must beat the walk without it on the tune half
        base = res["collections"]["cqa-tune"]["offline_no_judge"]
        res["chosen"] = best if (best["cqa-tune"][0], best["cqa-tune"][1]) > (base[0], base[1]) else \
            {"top": 0, "mult": 0.0, "cqa-tune": base, "why": f"no rule beats the walk without the judge; best {best}"}
    text = json.dumps(res, indent=1)
    if out:
        out.write_text(text, encoding="utf-8")
    for name, c in res["collections"].items():
        print(f"{name}: {c['questions']} q, walk {c['walk']}, offline no judge {c['offline_no_judge']}, "
              f"w {c['w']:.3f}, {c['judge_pairs_per_s']} pairs/s")
    for r in res["rules"]:
        print(f"top {r['top']:>2} x{r['mult']:<4} " + "  ".join(f"{n} {r[n]}" for n in data))
    if "chosen" in res:
        print("chosen:", res["chosen"])
    return res


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--out", type=Path, required=True)
    c.add_argument("--names", default="cqa-tune", help=f"comma-separated of {sorted(COLLECTIONS)}")
    c.add_argument("--embedder", default=None, help="as `shelfwise --embedder` takes it (default: the default)")
    c.add_argument("--judge", type=Path, default=None, help="judge GGUF (default: the bundled one)")
    c.add_argument("--threads", type=int, default=2)
    ch = sub.add_parser("choose")
    ch.add_argument("--pools", type=Path, required=True)
    ch.add_argument("--json", type=Path, default=None)
    a = p.parse_args()
    if a.cmd == "collect":
        collect(a.out, a.names.split(","), a.embedder, a.judge, a.threads)
    else:
        choose(a.pools, a.json)


if __name__ == "__main__":
    main()
