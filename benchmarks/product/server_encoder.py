"""The encoder on llama.cpp's ``llama-server`` against the in-process encoder, in one run (docs/server.md).

    python benchmarks/product/server_encoder.py                       # MiniLM, 256 passages, slots 1 and 4
    python benchmarks/product/server_encoder.py --encoder embeddinggemma --texts 64 --json
    python benchmarks/product/server_encoder.py --clients 8 --slots 1,4

For each row: the same passages (~150 tokens each) embedded in process (one call), then through a freshly started
``llama-server --parallel S`` by ``--clients`` clients at once (each its own :class:`RemoteEmbedder`, the texts
split between them); texts/s, the ratio to the in-process rate and to the first server row, each request's
latency (p50/p90), failed requests, and the lowest cosine to the in-process vectors. The server binary is the one
``bash packaging/server.sh build`` made (or ``SHELFWISE_LLAMA_SERVER``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np

from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.encoders.embedder import Embedder, resolve_embedder
from shelfwise.core.models.identity import model_identity
from shelfwise.core.models.remote.embedder import RemoteEmbedder

ROOT = Path(__file__).resolve().parents[2]
_WORDS = ("employees may claim the cost of meals while travelling on company business and receipts must be "
          "attached to every expense claim submitted after the trip the quarterly report shows revenue growth "
          "in the northern region slides from the onboarding session describe the benefits").split()


def passages(n: int, words: int = 110) -> list[str]:
    """``n`` distinct passages of ``words`` words (~150 MiniLM tokens)."""
    rng = np.random.default_rng(7)
    return [f"Passage {i}. " + " ".join(rng.choice(_WORDS, size=words)) for i in range(n)]


def binary() -> str:
    env = os.environ.get("SHELFWISE_LLAMA_SERVER")
    if env:
        return env
    done = subprocess.run(["bash", str(ROOT / "packaging" / "server.sh"), "path"], capture_output=True, text=True,
                          check=False)
    if done.returncode:
        sys.exit("llama-server is not built: bash packaging/server.sh build")
    return done.stdout.strip()


@contextlib.contextmanager
def llama_server(model: Path, threads: int, args: list[str], wait: float = 60.0) -> Iterator[str]:
    """``llama-server`` serving ``model`` (named ``FILE:SHA16``, as ``packaging/server.sh`` names it) with ``args``
    on a free loopback port; yields its URL once ``/health`` answers (or ``wait`` seconds have passed), stops it
    after."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([binary(), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
                             "--threads", str(threads), *args, "--alias", model_identity(model)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(int(wait * 10)):
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def server(model: Path, slots: int, threads: int, ubatch: int = 0) -> contextlib.AbstractContextManager[str]:
    """The encoder on ``llama-server --embedding --pooling mean --parallel slots`` (512 tokens a slot)."""
    ctx = slots * 512
    return llama_server(model, threads, ["--embedding", "--pooling", "mean", "--parallel", str(slots),
                                         "--ctx-size", str(ctx), "--batch-size", str(ctx),
                                         "--ubatch-size", str(ubatch or ctx)])


def run_clients(url: str, texts: list[str], clients: int, batch: int) -> tuple[np.ndarray, float, list[float], int]:
    """``clients`` encoders at once, each embedding its share in requests of ``batch`` texts (one at a time)."""
    shares = [list(range(i, len(texts), clients)) for i in range(clients)]
    out = np.zeros((len(texts), 0), np.float32)
    latencies: list[float] = []
    failed = 0
    encoders = [RemoteEmbedder(url, batch=batch, concurrency=1) for _ in range(clients)]

    def work(k: int) -> list[tuple[int, np.ndarray]]:
        nonlocal failed
        rows: list[tuple[int, np.ndarray]] = []
        idx = shares[k]
        for j in range(0, len(idx), batch):
            part = idx[j:j + batch]
            t0 = time.perf_counter()
            try:
                vecs = encoders[k].embed([texts[i] for i in part])
            except BackendError:
                failed += 1
                continue
            latencies.append(time.perf_counter() - t0)
            rows += list(zip(part, vecs, strict=True))
        return rows

    t0 = time.perf_counter()
    with ThreadPoolExecutor(clients) as ex:
        results = list(ex.map(work, range(clients)))
    seconds = time.perf_counter() - t0
    dim = encoders[0].dim
    for e in encoders:
        e.close()
    out = np.zeros((len(texts), dim), np.float32)
    for rows in results:
        for i, v in rows:
            out[i] = v
    return out, seconds, latencies, failed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encoder", default="minilm")
    ap.add_argument("--texts", type=int, default=256)
    ap.add_argument("--slots", default="1,4")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ubatch", type=int, default=0, help="the server's --ubatch-size (default: slots x 512)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    model = resolve_embedder(args.encoder)
    texts = passages(args.texts)
    with Embedder(model, n_threads=args.threads) as local:
        local.embed(texts[:4])  # warm
        t0 = time.perf_counter()
        want = local.embed(texts)
        local_s = time.perf_counter() - t0
        tokens = sum(len(local.tokenize(t, local.profile.document_prefix())) for t in texts)
    rows = [{"mode": "in process", "slots": 0, "clients": 1, "seconds": round(local_s, 2),
             "texts_per_s": round(len(texts) / local_s, 1), "tokens_per_s": round(tokens / local_s)}]
    for slots in [int(s) for s in args.slots.split(",")]:
        with server(model, slots, args.threads, args.ubatch) as url:
            run_clients(url, texts[:8], 1, args.batch)  # warm
            got, secs, lat, failed = run_clients(url, texts, args.clients, args.batch)
        cos = (got * want).sum(axis=1)
        lat.sort()
        rows.append({"mode": "server", "slots": slots, "clients": args.clients, "seconds": round(secs, 2),
                     "texts_per_s": round(len(texts) / secs, 1), "tokens_per_s": round(tokens / secs),
                     "p50_request_s": round(statistics.median(lat), 3) if lat else None,
                     "p90_request_s": round(lat[int(0.9 * (len(lat) - 1))], 3) if lat else None,
                     "failed_requests": failed, "min_cosine": round(float(cos.min()), 6)})
    first_server = next((r for r in rows if r["mode"] == "server"), None)
    for r in rows:
        r["vs_in_process"] = round(rows[0]["seconds"] / r["seconds"], 2)
        if first_server is not None and r["mode"] == "server":
            r["vs_first_server_row"] = round(first_server["seconds"] / r["seconds"], 2)
    report = {"encoder": model.name, "ubatch": args.ubatch or "slots x 512",
              "texts": len(texts), "tokens": tokens, "threads": args.threads,
              "batch": args.batch, "load_avg": os.getloadavg(), "rows": rows}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"{model.name}: {len(texts)} passages, {tokens} tokens, {args.threads} threads, load {os.getloadavg()}")
    for r in rows:
        print("  " + "  ".join(f"{k}={v}" for k, v in r.items()))


if __name__ == "__main__":
    main()
