"""Concurrent clients asking questions against one llama-server per model, in one run (docs/scale.md).

    python benchmarks/product/server_clients.py --library LIBRARY.db                  # 8 clients, --parallel 8 and 1
    python benchmarks/product/server_clients.py --library LIBRARY.db --clients 4 --questions 2 --slots 4,1 --json

For each ``--slots`` value P, two servers are started on the loopback: the encoder (``llama-server --embedding
--pooling mean --parallel P``, named ``FILE:SHA16`` as ``packaging/server.sh`` names it) and the answer model (the
bundled Gemma 3 270M, ``--parallel P``, 4,096 tokens per slot). Then, with a fresh copy of the library for the row:

* **1 client** (with the first ``--slots`` value only: one client uses one slot whatever the server has): one
  process asks ``--single`` (default ``--questions``) questions one after the other;
* **N clients**: ``--clients`` processes, started and loaded first, ask ``--questions`` questions each at the same
  time (a barrier starts them together).

Each question is what ``shelfwise --embedder URL ask`` does with ``Settings.backend_url`` set to the answer server:
the walk (the encoder on the server), the extracted answer and the model's written answer (on the server). Per row:
wall seconds, answered questions per second, throughput against the one-client row of the same servers, per-question
latency p50 / p90, failed questions (an exception, or the encoder having fallen back to this process), and the load
average at the start and the end. The library must have been indexed with the same encoder file (its vectors are
then the server's: the same ``FILE:SHA16``), e.g. ``shelfwise --embedder embeddinggemma ingest resources/sample``.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_encoder import llama_server, server

ROOT = Path(__file__).resolve().parents[2]


def answer_server(model: Path, slots: int, threads: int) -> Any:
    """The answer model on ``llama-server --parallel slots`` (a context manager yielding its URL)."""
    return llama_server(model, threads, ["--parallel", str(slots), "--ctx-size", str(slots * 4096)], wait=90.0)


def client(db: str, enc_url: str, ans_url: str, questions: list[str], barrier: Any, out: Any) -> None:
    """One client process: opens its Shelf (not timed), waits for the others, asks its questions."""
    from shelfwise.core.settings import Settings
    from shelfwise.core.shelf import Shelf

    rows: list[dict[str, Any]] = []
    try:
        with Shelf(Settings(db_path=Path(db), embedder_path=enc_url, backend_url=ans_url)) as shelf:
            shelf.search("warm up: which documents are there?", "default")  # opens the connections
            if barrier is not None:
                barrier.wait()
            for q in questions:
                t0 = time.perf_counter()
                row: dict[str, Any] = {"question": q}
                try:
                    answer = shelf.ask(q, "default")
                    ran = str(getattr(shelf.embedder, "ran", ""))
                    row.update(ok=not ran.startswith("in process"), found=answer.found,
                               generated=bool(answer.generated), encoder=ran, tokens=answer.tokens)
                except Exception as exc:  # a failed question is a figure, not the end of the run
                    row.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
                row["seconds"] = time.perf_counter() - t0
                rows.append(row)
    except Exception as exc:
        rows.append({"ok": False, "error": f"setup: {type(exc).__name__}: {exc}"[:300], "seconds": 0.0})
        if barrier is not None:
            barrier.abort()
    out.put(rows)


def copy_library(src: Path, dst: Path) -> None:
    """A consistent copy of a library (SQLite's backup: the source may be open elsewhere)."""
    a, b = sqlite3.connect(f"file:{src}?mode=ro", uri=True), sqlite3.connect(dst)
    try:
        a.backup(b)
    finally:
        a.close()
        b.close()


def run_row(n_clients: int, per_client: int, questions: list[str], library: Path, enc_url: str, ans_url: str,
            work: Path) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    db = work / f"library-{n_clients}.db"
    copy_library(library, db)
    barrier = ctx.Barrier(n_clients + 1)
    out = ctx.Queue()
    procs = []
    for i in range(n_clients):
        mine = [questions[(i * per_client + j) % len(questions)] for j in range(per_client)]
        p = ctx.Process(target=client, args=(str(db), enc_url, ans_url, mine, barrier, out))
        p.start()
        procs.append(p)
    load0 = os.getloadavg()
    try:
        barrier.wait(timeout=600)  # every client loaded
    except Exception:
        pass
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    for _ in procs:
        rows += out.get(timeout=3600)
    wall = time.perf_counter() - t0
    for p in procs:
        p.join(30)
    lat = sorted(r["seconds"] for r in rows if r.get("ok"))
    failed = sum(1 for r in rows if not r.get("ok"))
    return {"clients": n_clients, "questions": len(rows), "seconds": round(wall, 1),
            "questions_per_s": round(len(lat) / wall, 4) if wall else None,  # answered ones only
            "p50_s": round(statistics.median(lat), 2) if lat else None,
            "p90_s": round(lat[max(0, math.ceil(0.9 * len(lat)) - 1)], 2) if lat else None,
            "tokens_per_question": round(statistics.mean(r.get("tokens", 0) for r in rows)) if rows else None,
            "failed": failed, "errors": sorted({r["error"] for r in rows if r.get("error")})[:3],
            "load_start": [round(x, 2) for x in load0], "load_end": [round(x, 2) for x in os.getloadavg()]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--library", type=Path, required=True, help="a library indexed with --encoder's file")
    ap.add_argument("--encoder", default="embeddinggemma")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--questions", type=int, default=2, help="questions per client")
    ap.add_argument("--single", type=int, default=0, help="questions of the one-client row (default: --questions)")
    ap.add_argument("--slots", default="8,1", help="the servers' --parallel, one row pair each")
    ap.add_argument("--threads", type=int, default=2, help="each server's --threads")
    ap.add_argument("--no-warm", action="store_true", help="no unmeasured first question per server pair")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from shelfwise.core.models.encoders.embedder import resolve_embedder
    from shelfwise.core.models.llama.bundled import resolve_model

    enc_model = resolve_embedder(args.encoder)
    ans_model = Path(resolve_model(None))
    questions = [json.loads(line)["question"] for line in
                 (ROOT / "resources" / "sample_questions.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    work = Path(tempfile.mkdtemp(prefix="shelfwise-clients-"))
    report: dict[str, Any] = {"encoder": enc_model.name, "answer_model": ans_model.name, "threads": args.threads,
                              "cpus": os.cpu_count(), "rows": []}
    for k, slots in enumerate(int(s) for s in args.slots.split(",")):
        with server(enc_model, slots, args.threads) as enc_url, answer_server(ans_model, slots, args.threads) as ans:
            if not args.no_warm:
                run_row(1, 1, questions[-1:], args.library, enc_url, ans, work)  # the servers' first requests
            shapes = [(1, args.single or args.questions)] if k == 0 else []
            for n, per in [*shapes, (args.clients, args.questions)]:
                row = {"slots": slots, **run_row(n, per, questions, args.library, enc_url, ans, work)}
                report["rows"].append(row)
                print(f"[{time.strftime('%H:%M:%S')}] {row}", file=sys.stderr, flush=True)
    one = report["rows"][0]
    for r in report["rows"]:
        r["vs_one_client"] = round(r["questions_per_s"] / one["questions_per_s"], 2) if one["questions_per_s"] else None
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"encoder {report['encoder']} and answer model {report['answer_model']}, one llama-server each, "
          f"--threads {args.threads}, {report['cpus']} CPUs")
    print("| --parallel | clients | questions | seconds | questions/s | vs 1 client | p50 s | p90 s | failed | "
          "load start -> end |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in report["rows"]:
        print(f"| {r['slots']} | {r['clients']} | {r['questions']} | {r['seconds']} | {r['questions_per_s']} | "
              f"{r['vs_one_client']} | {r['p50_s']} | {r['p90_s']} | {r['failed']} | "
              f"{r['load_start'][0]} -> {r['load_end'][0]} |")
    for r in report["rows"]:
        if r["errors"]:
            print(f"errors (--parallel {r['slots']}, {r['clients']} clients): {r['errors']}")


if __name__ == "__main__":
    main()
