"""Indexing benchmark: N passages of real text parsed, stored and embedded, against llama.cpp's raw BERT embedding of
the same texts in the same run (the ceiling).

    python benchmarks/product/index.py --json                  # 1k and 10k passages
    python benchmarks/product/index.py --sizes 1000 --json     # quicker
    python benchmarks/product/index.py --rss-only --json       # just the peak RSS of `shelfwise ask`
    python benchmarks/product/index.py --sizes 1000 --embedders minilm embeddinggemma --no-rss --json   # side by side
    python benchmarks/product/index.py --sizes 10000 --embedders minilm embeddinggemma --ceiling-every 10 \\
        --no-rss --json

Real text: the files of ``../shared/corpus`` parsed by the ingest runner in one run (parse worker process; smallest
files first), then the evaluation sets' documents (ConditionalQA guides, then SQuAD paragraphs, written as parsed
trees), in that order, until N passages. Each size is a fresh library, indexed as ``shelfwise ingest`` does it: the
documents written so far are embedded alongside (``EmbedAlongside``, a thread, one llama.cpp thread fewer while the
parse worker runs) while the next files parse; then the vectors still missing and the topic clusters. ``--no-overlap``
embeds only after parsing, for comparison. The breakdown: parse + tree wall (with the embedding alongside), the
finishing embedding split into tokenizing / packing + ``llama_encode`` / everything else (SQLite, cache, texts),
and topics. The ceiling is the same texts (exactly what the indexer embedded), tokenized beforehand, through
``llama_encode`` alone with the embedder's own context (no Python between batches but the packing), best of the
batch sizes tried (by CPU time; default only the embedder's 256). ``ratio_to_ceiling`` = ceiling seconds / our wall
seconds for the whole pipeline (parse + tree + vectors + topics); ``encode_ratio_to_ceiling`` = the ceiling over the
time spent inside the embedder's encode step; ``_cpu`` = CPU seconds of this process and its parse worker (steadier
than wall time on a shared machine; run with SHELFWISE_THREADS=1 there so llama.cpp does not spin on busy cores).

The passage Hit@1 on the ConditionalQA tune half before/after each saving is not re-run here (an eval run takes
many minutes); ``quality`` reports the figures recorded in ``docs/eval/index-savings.json`` by the runs named there.
Peak RSS of ``ask``: a ``shelfwise ask`` process on the sample handbook (the embedder and the generative model
loaded; the judge too when one is installed), from its own VmHWM.

Absolute seconds depend on the machine's load; the ratios are measured side by side in one process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from shelfwise.core.indexing.alongside import EmbedAlongside
from shelfwise.core.indexing.vectors import embed_missing, rebuild_hierarchy
from shelfwise.core.ingestion.runner import ingest
from shelfwise.core.models.backend import EmbedderBase
from shelfwise.core.models.encoders.embedder import Embedder
from shelfwise.core.paths import models_dir
from shelfwise.core.settings import Budgets
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.evaluation.run import load_dataset

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
SAVINGS = ROOT / "docs" / "eval" / "index-savings.json"


def cpu() -> float:
    """CPU seconds of this process and its finished children (the parse worker): robust to other jobs' load."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def passages_in(store: Store, cid: int) -> int:
    return int(store.conn.execute(
        "SELECT count(*) FROM nodes WHERE collection_id = ? AND kind = 'passage'", (cid,)).fetchone()[0])


class Recording(EmbedderBase):
    """The embedder, recording every text the indexer asks it to embed (the ceiling embeds exactly these)."""

    def __init__(self, emb: Embedder) -> None:
        self.emb = emb
        self.model_id = emb.model_id
        self.window = emb.window
        self.texts: list[str] = []

    @property
    def n_threads(self) -> int:
        return self.emb.n_threads

    def set_threads(self, n: int) -> None:
        self.emb.set_threads(n)

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.emb.embed(texts)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self.emb.embed_queries(texts)

    def embed_query(self, text: str) -> np.ndarray:
        return self.emb.embed_query(text)


def build_and_index(store: Store, n: int, emb: Recording, overlap: bool) -> dict[str, float | int]:
    """Corpus files (real parsing, one ingest run) then evaluation documents until ``n`` passages, embedding
    alongside (``overlap``, what ``shelfwise ingest`` does) or not; then the rest of the vectors and the topics."""
    cid = store.collection("bench").id
    timing = emb.emb.timing
    timing.reset()
    t0, c0 = time.perf_counter(), cpu()
    along = EmbedAlongside(store.path, cid, emb) if overlap else None
    if along is not None:
        along.start()
    # smallest files first, so a small size is a mix of formats rather than one big PDF
    files = sorted((p for p in CORPUS.iterdir() if p.is_file() and p.suffix.lower() != ".md"),
                   key=lambda p: (p.stat().st_size, p.name))
    ingest(store, files, "bench", cancel=lambda: passages_in(store, cid) >= n,
           after_write=along.written if along is not None else None)
    corpus_passages = passages_in(store, cid)
    for name in ("conditionalqa", "squad"):
        if passages_in(store, cid) >= n:
            break
        for doc in load_dataset(name).documents:
            if passages_in(store, cid) >= n:
                break
            doc_id = store.write_document(cid, f"{name}:{doc.path}", FileMeta(0, 0.0, doc.path), doc.parsed)
            if along is not None:
                along.written(doc_id)
    t_parsed, c_parsed = time.perf_counter(), cpu()
    alongside = along.stop() if along is not None else 0
    t_stopped = time.perf_counter()
    before = (timing.tokenize_seconds, timing.encode_seconds)
    embedded = embed_missing(store, cid, emb)
    t_embedded = time.perf_counter()
    finish_tok = timing.tokenize_seconds - before[0]
    finish_enc = timing.encode_seconds - before[1]
    rebuild_hierarchy(store, cid, emb, Budgets().branching)
    t_end, c_end = time.perf_counter(), cpu()
    finish_embed_s = t_embedded - t_stopped
    return {
        "corpus_passages": corpus_passages,
        "parse_tree_seconds": t_parsed - t0,  # wall of parsing + writing the trees (with embedding alongside)
        "parse_tree_cpu": c_parsed - c0,  # of both (one process + the parse worker)
        "embedded_alongside": alongside,
        "alongside_busy_seconds": along.busy_seconds if along is not None else 0.0,
        "stop_wait_seconds": t_stopped - t_parsed,  # the alongside thread finishing its batch
        "embedded_after": embedded,
        "finish_embed_seconds": finish_embed_s,
        "finish_tokenize_seconds": finish_tok,
        "finish_encode_seconds": finish_enc,
        "finish_other_seconds": finish_embed_s - finish_tok - finish_enc,  # SQLite, cache lookups, texts, Python
        "topics_seconds": t_end - t_embedded,
        "total_seconds": t_end - t0,
        "total_cpu": c_end - c0,
        "index_cpu": c_end - c_parsed,
        "embed_tokenize_seconds": timing.tokenize_seconds,
        "embed_encode_seconds": timing.encode_seconds,
    }


def raw_ceiling(emb: Embedder, texts: list[str], every: int = 1) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, tokens) of llama_encode over ``texts`` (pre-tokenized) with the embedder's
    context and packing. With ``every`` > 1 only every ``every``-th text is encoded and the seconds are scaled by
    all tokens over the sampled tokens (an estimate of the whole ceiling at a fraction of its time)."""
    prompt = emb.profile.document_prefix()  # what the indexer's embed() puts before each text ("" for MiniLM)
    seqs = [emb.tokenize(t, prompt) for t in texts]
    sample = seqs[::every]
    t0, c0 = time.perf_counter(), cpu()
    emb.encode_tokens(sample)
    wall, cpu_s = time.perf_counter() - t0, cpu() - c0
    tokens, sampled = sum(len(s) for s in seqs), sum(len(s) for s in sample)
    scale = tokens / max(sampled, 1)
    return wall * scale, cpu_s * scale, tokens


def run_size(n: int, embedders: dict[int, Embedder], ceiling_bts: list[int], overlap: bool,
             ceiling_every: int = 1) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="shelfwise-index-bench-") as tmp:
        store = Store(Path(tmp) / "lib.db")
        emb = Recording(embedders[256])
        built = build_and_index(store, n, emb, overlap)
        texts = emb.texts
        passages = passages_in(store, int(store.collection("bench").id))
        nodes = int(built["embedded_alongside"]) + int(built["embedded_after"])
        ceilings: dict[int, tuple[float, float]] = {}
        tokens = 0
        for bt, e in embedders.items():
            if bt in ceiling_bts:
                wall, cpu_s, tokens = raw_ceiling(e, texts, ceiling_every)
                ceilings[bt] = (wall, cpu_s)
        best_bt = min(ceilings, key=lambda k: ceilings[k][1])
        ceiling_s, ceiling_cpu = ceilings[best_bt]
        store.close()
    total_s, total_cpu = float(built["total_seconds"]), float(built["total_cpu"])
    out: dict[str, Any] = {"passages": passages, "nodes_with_vectors": nodes, "texts_embedded": len(texts),
                           "tokens": tokens, "overlap": overlap, "ceiling_every": ceiling_every}
    out.update({k: (round(v, 2) if isinstance(v, float) else v) for k, v in built.items()})
    out.update({
        "passages_per_s": round(passages / total_s, 2), "nodes_per_s": round(nodes / total_s, 2),
        "ceiling_seconds": round(ceiling_s, 2), "ceiling_cpu": round(ceiling_cpu, 2), "ceiling_batch_tokens": best_bt,
        "ceiling_wall_cpu_by_batch_tokens": {str(k): [round(w, 2), round(c, 2)] for k, (w, c) in ceilings.items()},
        "ceiling_passages_per_s": round(passages / ceiling_s, 2),
        "ceiling_tokens_per_s": round(tokens / ceiling_s, 1),
        "ratio_to_ceiling": round(ceiling_s / total_s, 3),
        "ratio_to_ceiling_cpu": round(ceiling_cpu / total_cpu, 3),
        "encode_ratio_to_ceiling": round(ceiling_s / max(float(built["embed_encode_seconds"]), 1e-9), 3),
    })
    return out


def ask_peak_rss(threads: int | None) -> dict[str, Any]:
    """Peak RSS (VmHWM) of a `shelfwise ask` process on the sample handbook."""
    with tempfile.TemporaryDirectory(prefix="shelfwise-rss-") as tmp:
        db = str(Path(tmp) / "lib.db")
        env = {**os.environ}
        if threads:
            env["SHELFWISE_THREADS"] = str(threads)
        cli = [sys.executable, "-c", "from shelfwise.app.cli.main import main; main()", "--db", db]
        subprocess.run([*cli, "ingest", str(ROOT / "resources" / "sample")], env=env, check=True,
                       capture_output=True)
        probe = ("import atexit, sys\n"
                 "def hwm():\n"
                 "    for line in open('/proc/self/status'):\n"
                 "        if line.startswith('VmHWM'): sys.stderr.write('VMHWM ' + line.split()[1] + '\\n')\n"
                 "atexit.register(hwm)\n"
                 "from shelfwise.app.cli.main import main; main()")
        r = subprocess.run([sys.executable, "-c", probe, "--db", db, "ask",
                            "How many days of annual leave do employees get?"], env=env, capture_output=True,
                           text=True)
        kb = [int(ln.split()[1]) for ln in r.stderr.splitlines() if ln.startswith("VMHWM ")]
    return {"ask_peak_rss_mb": round(kb[-1] / 1024, 1) if kb else None, "ask_exit_code": r.returncode,
            "models_installed": sorted(p.name for p in models_dir().glob("*.gguf"))}


def index_sizes(args: argparse.Namespace, model: str | None) -> dict[str, Any]:
    """Every ``--sizes`` with one sentence encoder (None: the default, MiniLM)."""
    out: dict[str, Any] = {}
    embedders = {256: Embedder(model, n_threads=args.threads)}
    for bt in args.ceiling_batch_tokens:
        if bt not in embedders:
            embedders[bt] = Embedder(model, n_threads=args.threads, batch_tokens=bt, max_seqs=max(16, bt // 16))
    out["model_id"] = embedders[256].model_id
    out["threads"] = embedders[256].n_threads
    out["window"] = embedders[256].window
    for n in args.sizes:
        r = run_size(n, embedders, args.ceiling_batch_tokens, not args.no_overlap, args.ceiling_every)
        out[f"size_{n}"] = r
        print(json.dumps({n: r}), file=sys.stderr, flush=True)
    big = max(args.sizes)
    out["seconds_10k"] = round(out[f"size_{big}"]["total_seconds"] * 10000 / out[f"size_{big}"]["passages"], 1)
    out["seconds_10k_from_size"] = big
    out["cpu_seconds_10k"] = round(out[f"size_{big}"]["total_cpu"] * 10000 / out[f"size_{big}"]["passages"], 1)
    out["ratio_to_ceiling"] = out[f"size_{big}"]["ratio_to_ceiling"]
    out["ratio_to_ceiling_cpu"] = out[f"size_{big}"]["ratio_to_ceiling_cpu"]
    for e in embedders.values():
        e.close()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--ceiling-batch-tokens", type=int, nargs="+", default=[256],
                   help="batch sizes tried for the ceiling (the best by CPU time is kept; 256 is the embedder's)")
    p.add_argument("--no-overlap", action="store_true",
                   help="embed only after parsing (the sequential pipeline), for a side-by-side comparison")
    p.add_argument("--ceiling-every", type=int, default=1,
                   help="encode every K-th text for the ceiling and scale its seconds by the tokens (K > 1: an "
                        "estimate at 1/K of the time, for a slow encoder at 10k passages)")
    p.add_argument("--rss-only", action="store_true")
    p.add_argument("--no-rss", action="store_true", help="skip the peak RSS of ask")
    p.add_argument("--json", action="store_true")
    p.add_argument("--embedders", nargs="+", default=None,
                   help="sentence encoders (minilm, embeddinggemma or GGUF paths), each through every size in turn")
    args = p.parse_args(argv)
    out: dict[str, Any] = {"cores": os.cpu_count(), "load_average": os.getloadavg()}
    if not args.rss_only:
        if args.embedders:
            out["by_embedder"] = {name: index_sizes(args, name) for name in args.embedders}
        else:
            out.update(index_sizes(args, None))
    if not args.no_rss:
        out.update(ask_peak_rss(args.threads))
    if SAVINGS.is_file():
        out["quality"] = json.loads(SAVINGS.read_text(encoding="utf-8"))
    out["load_average_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
