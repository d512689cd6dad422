"""Dense paragraph retrieval on XQuAD with each sentence encoder Shelfwise runs, and their encode speed, in one run.

For each language: every one of the 240 paragraphs is embedded as a stored text (the encoder's document prompt;
``--titles`` also tries the article title in EmbeddingGemma's prompt, on English), ``--questions`` questions
spread over the 1,190 as queries (its query prompt); Hit@1 = the top paragraph by cosine is the question's own.
Speed: tokens per second of ``embed`` (tokenizing included) against llama.cpp's raw encode of the same
pre-tokenized paragraphs (the ceiling), measured back to back in this process. Vectors are cached in ``--cache``
so a rerun (or an interrupted run) does not redo them. XQuAD is evaluation data: nothing here is tuned on it.

    nice -n 10 .venv/bin/python benchmarks/product/embedders_xquad.py --langs en,de,zh --questions 300 --titles \
        --out docs/eval/embedders-xquad.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

from shelfwise.core.models.encoders.embedder import Embedder
from shelfwise.evaluation.run import shared_dir


def load(lang: str) -> tuple[list[str], list[str], list[tuple[str, int]]]:
    """Paragraphs, their article titles, and (question, paragraph index) in file order."""
    path = shared_dir() / "evaldata" / "xquad" / "original" / f"xquad.{lang}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    paras, titles, qs = [], [], []
    for art in data["data"]:
        for p in art["paragraphs"]:
            for qa in p["qas"]:
                qs.append((qa["question"], len(paras)))
            paras.append(p["context"])
            titles.append(art["title"].replace("_", " "))
    return paras, titles, qs


def spread(items: list, n: int) -> list:
    if n >= len(items):
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def cached(cache: Path, key: str, make) -> np.ndarray:
    f = cache / (hashlib.sha256(key.encode()).hexdigest()[:20] + ".npy")
    if f.is_file():
        return np.load(f)
    v = make()
    np.save(f, v)
    return v


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--langs", default="en,de,zh")
    p.add_argument("--models", default="minilm,embeddinggemma")
    p.add_argument("--questions", type=int, default=300)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--window", type=int, default=256)
    p.add_argument("--titles", action="store_true", help="also EmbeddingGemma with the article title in its prompt")
    p.add_argument("--matryoshka", default="", help="also Hit@1 with vectors cut to these sizes, e.g. 512,256,128")
    p.add_argument("--speed-texts", type=int, default=48, help="paragraphs timed for the speed figures")
    p.add_argument("--cache", type=Path, default=Path("/tmp/shelfwise-xquad-vectors"))
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    shown = sys.argv[1:] if argv is None else argv
    out: dict = {"command": "benchmarks/product/embedders_xquad.py " + " ".join(shown), "window": args.window,
                 "questions_per_language": args.questions, "hit_at_1": {}, "speed": {}}
    for name in args.models.split(","):
        with Embedder(name, n_threads=args.threads, window=args.window) as emb:
            mid = emb.model_id
            en_paras = load("en")[0][: args.speed_texts]
            seqs = [emb.tokenize(t, emb.profile.document_prefix()) for t in en_paras]
            emb.embed(en_paras[:4])
            t0 = time.perf_counter()
            emb.encode_tokens(seqs)
            raw = time.perf_counter() - t0
            emb.timing.reset()
            t0 = time.perf_counter()
            emb.embed(en_paras)
            full = time.perf_counter() - t0
            ntok = sum(map(len, seqs))
            out["speed"][name] = {"model_id": mid, "threads": emb.n_threads, "texts": len(seqs), "tokens": ntok,
                                  "embed_tokens_per_s": round(ntok / full, 1),
                                  "raw_encode_tokens_per_s": round(ntok / raw, 1),
                                  "ratio_to_ceiling": round(raw / full, 3)}
            print(name, out["speed"][name], flush=True)
            for lang in args.langs.split(","):
                paras, titles, qs = load(lang)
                qs = spread(qs, args.questions)
                variants = [("none", [None] * len(paras))]
                if args.titles and emb.profile.document_prompt and lang == "en":
                    variants.append(("title", titles))
                qv = cached(args.cache, f"{mid}|q|{lang}|{args.questions}|{args.window}",
                            lambda qs=qs: emb.embed_queries([q for q, _ in qs]))
                gold = np.array([i for _, i in qs])
                for label, tt in variants:
                    t0 = time.perf_counter()
                    pv = cached(args.cache, f"{mid}|p|{lang}|{label}|{args.window}",
                                lambda tt=tt, paras=paras: emb.embed_documents(paras, tt))
                    hit = float(np.mean(np.argmax(qv @ pv.T, axis=1) == gold))
                    key = name if label == "none" else f"{name}+title"
                    out["hit_at_1"].setdefault(key, {})[lang] = round(hit, 3)
                    for size in [int(x) for x in args.matryoshka.split(",") if x] if label == "none" else []:
                        if size < qv.shape[1]:
                            q, d = (m[:, :size] / np.linalg.norm(m[:, :size], axis=1, keepdims=True) for m in (qv, pv))
                            cut = float(np.mean(np.argmax(q @ d.T, axis=1) == gold))
                            out["hit_at_1"].setdefault(f"{name}@{size}", {})[lang] = round(cut, 3)
                    print(f"{key} {lang}: Hit@1 {hit:.3f} ({time.perf_counter() - t0:.0f} s)", flush=True)
                    args.out.parent.mkdir(parents=True, exist_ok=True)
                    args.out.write_text(json.dumps(out, indent=1), encoding="utf-8")
            langs = args.langs.split(",")
            # cross-lingual: English questions over the other languages' paragraphs
            for other in [x for x in langs if x != "en"] if "en" in langs else []:
                qs = spread(load("en")[2], args.questions)
                qv = cached(args.cache, f"{mid}|q|en|{args.questions}|{args.window}", lambda: None)
                pv = cached(args.cache, f"{mid}|p|{other}|none|{args.window}", lambda: None)
                hit = float(np.mean(np.argmax(qv @ pv.T, axis=1) == np.array([i for _, i in qs])))
                out["hit_at_1"][name][f"en->{other}"] = round(hit, 3)
                print(f"{name} en->{other}: Hit@1 {hit:.3f}", flush=True)
    args.out.write_text(json.dumps(out, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
