"""Offline measurement of a judge GGUF on the ConditionalQA TUNE half only (never the test half).

    .venv/bin/python -m training.eval_tune --judge /work/judge-runs/X/shelfwise-judge-X-q8_0.gguf [--json out.json]
    .venv/bin/python -m training.eval_tune --embedder /work/judge-runs/Y/shelfwise-embedder-Y-q8_0.gguf

(a) inside the gold guide: rank all its passages (Hit@1, MRR) by plain embedder cosine, by the judge, and by an
    equal-weight z-score sum of the two;
(b) over all 59 guides: the embedder's top-100 passages, reranked by the judge (passage Hit@1), beside the embedder.
Passages read like the walk's passage decisions: ``"Title > H2 > H3: text"``. Paired bootstrap 95% intervals
(questions resampled) for judge minus embedder.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

EVALROOT = Path(__file__).resolve().parents[2] / "shared" / "evaldata" / "conditionalqa_dev"


@dataclass(frozen=True)
class Passage:
    doc: str
    item: int
    text: str


def passages_of(path: str, title: str, parsed) -> list[Passage]:
    out: list[Passage] = []

    def walk(nodes, heads: list[str]) -> None:
        for n in nodes:
            if n.kind == "section":
                walk(n.children, [*heads, n.title])
            elif n.kind == "passage" and n.location.line is not None:
                head = " > ".join([title, *heads[1:]] if heads else [title])
                out.append(Passage(path, n.location.line, f"{head}: {' '.join(n.text.split())}"))

    walk(parsed.children, [])
    return out


def zs(x: np.ndarray) -> np.ndarray:
    return (x - x.mean()) / (x.std() + 1e-9)


def first_gold_rank(scores: np.ndarray, gold: np.ndarray) -> int:
    order = np.argsort(-scores, kind="stable")
    hits = np.nonzero(gold[order])[0]
    return int(hits[0]) + 1 if len(hits) else 10**9


def bootstrap(a: np.ndarray, b: np.ndarray, n: int = 2000, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(a), size=(n, len(a)))
    d = a[idx].mean(1) - b[idx].mean(1)
    return float(np.percentile(d, 2.5)), float(np.percentile(d, 97.5))


def _embed_cached(texts: list[str], queries: list[str], threads: int, cache: Path | None,
                  embedder: Path | None = None):
    import hashlib

    from shelfwise.core.models.encoders.embedder import Embedder

    emb = Embedder(embedder, n_threads=threads)
    key = hashlib.sha256((emb.model_id + "\0" + "\0".join(texts + queries)).encode()).hexdigest()[:16]
    f = cache / f"cqa-tune-embed-{key}.npz" if cache else None
    if f is not None and f.is_file():
        z = np.load(f)
        emb.close()
        return z["p"], z["q"]
    pv, qv = emb.embed(texts), emb.embed(queries)
    emb.close()
    if f is not None:
        f.parent.mkdir(parents=True, exist_ok=True)
        np.savez(f, p=pv, q=qv)
    return pv, qv


def evaluate(judge_path: Path | None, threads: int = 2, top_k: int = 100, every: int = 1,
             cache: Path | None = None, offset: int = 0, embedder: Path | None = None) -> dict:
    from shelfwise.evaluation.datasets import load_conditionalqa
    es = load_conditionalqa(EVALROOT, split="tune")
    passages: list[Passage] = []
    for d in es.documents:
        passages += passages_of(d.path, d.parsed.title, d.parsed)
    texts = [p.text for p in passages]
    t0 = time.monotonic()
    pv, qv = _embed_cached(texts, [q.query for q in es.questions], threads, cache, embedder)
    questions = list(enumerate(es.questions))[offset::every]
    res: dict = {"questions": len(questions), "passages": len(passages), "top_k": top_k,
                 "embed_s": round(time.monotonic() - t0)}
    judge = None
    if judge_path is not None:
        from shelfwise.core.models.encoders.cross_encoder import Judge

        judge = Judge(judge_path, n_threads=threads)
    cache: dict[tuple[int, int], float] = {}
    docs = np.array([p.doc for p in passages])
    rows: dict[str, list[float]] = {k: [] for k in ("cos_hit", "cos_rr", "judge_hit", "judge_rr", "fuse_hit",
                                                    "fuse_rr", "g_cos_hit", "g_judge_hit", "g_fuse_hit", "g_recall")}
    n_pairs, t_judge = 0, 0.0
    for qi, q in questions:
        gold_keys = {(g.path, g.item) for g in q.gold}
        gold = np.array([(p.doc, p.item) in gold_keys for p in passages])
        cos = pv @ qv[qi]
        inside = np.nonzero(docs == q.gold[0].path)[0]
        top = np.argsort(-cos, kind="stable")[:top_k]
        need = sorted({int(i) for i in inside} | {int(i) for i in top})
        if judge is not None:
            todo = [i for i in need if (qi, i) not in cache]
            t1 = time.monotonic()
            sc = judge.score(q.query, [texts[i] for i in todo])
            t_judge += time.monotonic() - t1
            n_pairs += len(todo)
            cache.update({(qi, i): float(s) for i, s in zip(todo, sc, strict=True)})
        for tag, idx in (("", inside), ("g_", top)):
            c = cos[idx]
            r = {"cos": first_gold_rank(c, gold[idx])}
            if judge is not None:
                j = np.array([cache[(qi, int(i))] for i in idx])
                r["judge"] = first_gold_rank(j, gold[idx])
                r["fuse"] = first_gold_rank(zs(j) + zs(c), gold[idx])
            for k, v in r.items():
                rows[f"{tag}{k}_hit"].append(float(v == 1))
                if not tag:
                    rows[f"{k}_rr"].append(1.0 / v)
        rows["g_recall"].append(float(gold[top].any()))
    if judge is not None:
        res["judge_pairs"] = n_pairs
        res["judge_pairs_per_s"] = round(n_pairs / max(t_judge, 1e-9), 1)
        judge.close()
    res["qids"] = [qi for qi, _ in questions]
    res["rows"] = rows
    return summarise(res)


def summarise(res: dict) -> dict:
    """Means and paired bootstrap intervals from the per-question rows (also after merging shards)."""
    arr = {k: np.array(v) for k, v in res["rows"].items() if v}
    res["questions"] = len(res["qids"])
    res.update({k: round(float(v.mean()), 3) for k, v in arr.items()})
    if "judge_hit" in arr:
        for k in ("hit", "rr"):
            lo, hi = bootstrap(arr[f"judge_{k}"], arr[f"cos_{k}"])
            res[f"judge_minus_cos_{k}_ci95"] = [round(lo, 3), round(hi, 3)]
            lo, hi = bootstrap(arr[f"fuse_{k}"], arr[f"cos_{k}"])
            res[f"fuse_minus_cos_{k}_ci95"] = [round(lo, 3), round(hi, 3)]
        lo, hi = bootstrap(arr["g_judge_hit"], arr["g_cos_hit"])
        res["g_judge_minus_cos_hit_ci95"] = [round(lo, 3), round(hi, 3)]
    return res


def merge(parts: list[dict]) -> dict:
    """Shards of one evaluation (``--offset``) into one result over the union of their questions."""
    out = {k: v for k, v in parts[0].items() if not isinstance(v, (list, dict)) or k == "judge"}
    out["qids"] = sorted({q for p in parts for q in p["qids"]})
    if len(out["qids"]) != sum(len(p["qids"]) for p in parts):
        raise ValueError("shards overlap")
    out["rows"] = {k: [x for p in parts for x in p["rows"].get(k, [])] for k in parts[0]["rows"]}
    out["judge_pairs"] = sum(p.get("judge_pairs", 0) for p in parts)
    return summarise(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.eval_tune", description=__doc__.split("\n\n")[0])
    p.add_argument("--judge", type=Path, default=None, help="judge GGUF (omit: embedder only)")
    p.add_argument("--embedder", type=Path, default=None,
                   help="embedder GGUF for the cosine figures (omit: the bundled one; training/train_embedder.py)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", type=Path, default=None, help="also write the figures here")
    p.add_argument("--top-k", type=int, default=100, help="embedder candidates over all guides to rerank")
    p.add_argument("--every", type=int, default=1, help="every N-th tune question only (quick comparisons)")
    p.add_argument("--offset", type=int, default=0, help="start at this question (shards: --every 8 --offset 0..7)")
    p.add_argument("--cache", type=Path, default=Path("/work/judge-runs/cache"), help="embedding cache folder")
    p.add_argument("--merge", type=Path, nargs="+", default=None, help="merge shard JSON files instead")
    a = p.parse_args(argv)
    if a.merge:
        res = merge([json.loads(f.read_text(encoding="utf-8")) for f in a.merge])
        text = json.dumps({k: v for k, v in res.items() if k not in ("rows", "qids")}, indent=1)
        print(text)
        if a.json:
            a.json.write_text(json.dumps(res, indent=1), encoding="utf-8")
        return 0
    res = evaluate(a.judge, a.threads, a.top_k, a.every, a.cache, a.offset, a.embedder)
    if a.judge:
        res["judge"] = str(a.judge)
    res["embedder"] = str(a.embedder or "bundled")
    print(json.dumps({k: v for k, v in res.items() if k not in ("rows", "qids")}, indent=1))
    if a.json:
        a.json.write_text(json.dumps(res, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
