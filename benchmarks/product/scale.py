"""Scale benchmark: navigation over synthetic trees of 10^3 .. 10^6 passages against an inference server.

    python benchmarks/product/scale.py                      # starts llama-cpp-python's server on the bundled model
    python benchmarks/product/scale.py --json               # one JSON object
    python benchmarks/product/scale.py --url http://127.0.0.1:8182 --sizes 1000,10000   # e.g. llama-server --parallel 4

What runs: DecisionRAG's walk (Algorithm 1) reduced to what costs server time: from the root, each level's
candidates are the children of the kept nodes, split into requests of ``--request-size`` candidates, each
request scored with the binary readout (``prompts_nav.binary_prompt``: one listing + one yes/no question per
candidate, which is one HTTP request per candidate on an OpenAI-compatible server); the top ``--keep`` are
expanded. The requests of a level go through :func:`shelfwise.core.navigation.parallel.score_requests` with 1, 2
and 4 at a time. No embedder, no calibrated fusion, no lexical hybrid candidates (the synthetic stores are built
without their FTS index): only the decision model's cost is measured. Queries are built from a random
passage's words and its ancestors' titles.

Reported per size: levels, candidates judged, requests, prompt tokens sent, tokens a prefix-caching server
evaluates (the shared listing once per request group, then each question), wall seconds and the started server's CPU
seconds per query. ``concurrency_speedup`` = wall time of one level split into several requests (the first
``--speedup-candidates`` of the 32 documents of the 10^3 tree with b = 32), one request at a time / four at a
time.

Each level costs one request per candidate on llama-cpp-python's server (2-4 s of server CPU each: it sorts
the whole vocabulary in Python for the top log-probabilities), so the default run (b = 32, 10^3 .. 10^6, one
query, ~400 requests) takes well over 10 min on 2 cores; ``--branching 8`` makes the levels narrower (and
deeper), ``--sizes`` fewer.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import SyntheticTree, cached

from shelfwise.core.models.remote.backend import RemoteBackend
from shelfwise.core.navigation.parallel import pool_scores, score_requests
from shelfwise.core.navigation.readout_prompts import binary_prompt

DATA = Path(os.environ.get("SHELFWISE_BENCH_DIR", Path.home() / ".cache" / "shelfwise-bench"))


@dataclass
class QueryRun:
    n_passages: int
    concurrency: int
    levels: int = 0
    candidates: int = 0
    requests: int = 0
    tokens_sent: int = 0
    tokens_prefix_cached: int = 0
    seconds: float = 0.0
    server_cpu: float = 0.0
    per_level: list[dict[str, Any]] = field(default_factory=list)


# --------------------------------------------------------------------------- servers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Servers:
    """``k`` llama-cpp-python servers on loopback, ``threads`` threads each."""

    def __init__(self, k: int, threads: int, n_ctx: int, log_dir: Path) -> None:
        from shelfwise.core.models.llama.bundled import bundled_model_path

        model = bundled_model_path()
        self.procs: list[subprocess.Popen[bytes]] = []
        self.urls: list[str] = []
        for i in range(k):
            port = free_port()
            cmd = [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(model),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                str(n_ctx),
                "--n_threads",
                str(threads),
                "--n_threads_batch",
                str(threads),
                "--interrupt_requests",
                "false",
                "--verbose",
                "false",
            ]
            with (log_dir / f"server-{i}.log").open("ab") as fh:
                self.procs.append(subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT))
            self.urls.append(f"http://127.0.0.1:{port}")
        for url in self.urls:
            _wait_ready(url, 300)

    def cpu_seconds(self) -> float:
        tick = os.sysconf("SC_CLK_TCK")
        total = 0.0
        for p in self.procs:
            fields = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        return total

    def close(self) -> None:
        for p in self.procs:
            p.kill()
            p.wait(timeout=30)


def _wait_ready(url: str, timeout: float) -> None:
    probe = RemoteBackend(url, timeout=5, retries=0)
    deadline = time.monotonic() + timeout
    while True:
        try:
            probe.model_id  # noqa: B018 - the probe
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


# --------------------------------------------------------------------------- the walk


class Tree:
    """Read-only access to a synthetic store (children by parent, from SQLite's parent index)."""

    def __init__(self, info: SyntheticTree) -> None:
        self.info = info
        self.conn = sqlite3.connect(f"file:{info.path}?mode=ro", uri=True, check_same_thread=False)

    def children(self, parents: list[int]) -> list[tuple[int, str, str]]:
        """(id, kind, text the model reads) of the parents' children, in order."""
        out: list[tuple[int, str, str]] = []
        for p in parents:
            rows = self.conn.execute(
                "SELECT id, kind, title, description, text FROM nodes WHERE parent_id = ? "
                "ORDER BY ordinal, id",
                (p,),
            )
            for nid, kind, title, desc, text in rows:
                out.append((nid, kind, text[:160] if kind == "passage" else f"{title}: {desc}"))
        return out

    def query(self, rng: np.random.Generator) -> str:
        """Words of a random passage and the titles above it."""
        n = self.info.counts["passage"]
        pid = int(
            self.conn.execute(
                "SELECT id FROM nodes WHERE kind = 'passage' LIMIT 1 OFFSET ?", (int(rng.integers(0, n)),)
            ).fetchone()[0]
        )
        words: list[str] = []
        node: int | None = pid
        while node is not None:
            kind, title, text, parent = self.conn.execute(
                "SELECT kind, title, text, parent_id FROM nodes WHERE id = ?", (node,)
            ).fetchone()
            if kind == "collection":
                break
            words.extend(text.split()[2:5] if kind == "passage" else title.split()[-1:])
            node = parent
        return "which part talks about " + " ".join(words) + "?"


def walk(
    tree: Tree,
    backend: RemoteBackend,
    query: str,
    keep: int,
    size: int,
    concurrency: int,
    servers: Servers | None,
) -> QueryRun:
    run = QueryRun(tree.info.n_passages, concurrency)
    cpu0 = servers.cpu_seconds() if servers else 0.0
    t0 = time.perf_counter()
    frontier = [tree.info.root_id]
    groups: list[tuple[str, list[str]]] = []
    while frontier:
        cands = tree.children(frontier)
        if not cands:
            break
        tl = time.perf_counter()
        chunks = [cands[i : i + size] for i in range(0, len(cands), size)]
        prompts = [binary_prompt(query, [c[2] for c in chunk]) for chunk in chunks]
        groups.extend(prompts)
        res = pool_scores(score_requests(lambda p: backend.binary(p[0], p[1]), prompts, concurrency))
        order = np.argsort(-np.asarray(res.values), kind="stable")
        frontier = [cands[i][0] for i in order[:keep] if cands[i][1] != "passage"]
        run.per_level.append(
            {
                "kind": cands[0][1],
                "candidates": len(cands),
                "requests": res.cost.requests,
                "tokens_sent": res.cost.tokens,
                "seconds": round(time.perf_counter() - tl, 3),
            }
        )
        run.levels += 1
        run.candidates += len(cands)
        run.requests += res.cost.requests
        run.tokens_sent += res.cost.tokens
    run.seconds = time.perf_counter() - t0
    run.server_cpu = (servers.cpu_seconds() - cpu0) if servers else 0.0
    # tokens a prefix-caching server evaluates: each request group's listing once, then every question
    for context, questions in groups:
        ctx = backend.count_tokens(context) + backend.caps.bos_tokens
        run.tokens_prefix_cached += ctx + sum(backend.count_tokens(q) + 1 for q in questions)  # +1: generated
    return run


def level_speedup(
    tree: Tree, url: str, query: str, size: int, timeout: float, n_cands: int
) -> dict[str, float]:
    """One level (its first ``n_cands`` candidates) split into several requests: wall seconds with 1 and
    with 4 requests at a time."""
    cands = tree.children([tree.info.root_id])[:n_cands]
    chunks = [cands[i : i + size] for i in range(0, len(cands), size)]
    prompts = [binary_prompt(query, [c[2] for c in chunk]) for chunk in chunks]
    out: dict[str, float] = {
        "requests": float(sum(len(q) for _, q in prompts)),
        "groups": float(len(prompts)),
    }
    for conc in (1, 4):
        with RemoteBackend(url, timeout=timeout, max_concurrency=conc) as rb:
            rb.probe()
            t = time.perf_counter()
            score_requests(lambda p, rb=rb: rb.binary(p[0], p[1]), prompts, conc)
            out[f"seconds_{conc}"] = time.perf_counter() - t
    out["speedup"] = out["seconds_1"] / out["seconds_4"]
    return out


# --------------------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000,1000000")
    ap.add_argument(
        "--concurrency", default="1,2,4", help="requests in flight at once, for the navigation runs"
    )
    ap.add_argument(
        "--concurrency-sizes",
        default="1000",
        help="sizes also navigated with concurrency > 1 (growth with N is measured at concurrency 1)",
    )
    ap.add_argument("--queries", type=int, default=1)
    ap.add_argument("--branching", type=int, default=32, help="b of the synthetic trees")
    ap.add_argument(
        "--speedup-candidates",
        type=int,
        default=32,
        help="candidates of the level timed with 1 and 4 in flight",
    )
    ap.add_argument("--keep", type=int, default=1)
    ap.add_argument("--request-size", type=int, default=8)
    ap.add_argument("--url", help="an already running server (else llama-cpp-python's server is started)")
    ap.add_argument("--threads", type=int, default=0, help="threads of the started server (default: cores)")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the cleanup: stop the servers we started
    sizes = [int(s) for s in args.sizes.split(",")]
    concs = [int(c) for c in args.concurrency.split(",")]
    conc_sizes = {int(s) for s in args.concurrency_sizes.split(",") if s}
    os.environ.setdefault("SHELFWISE_HOME", str(Path.home() / ".cache" / "shelfwise-test-home"))

    t_start = time.perf_counter()
    trees = {n: Tree(cached(DATA, n, branching=args.branching)) for n in sizes}
    build_seconds = {n: t.info.build_seconds for n, t in trees.items()}
    servers: Servers | None = None
    log_dir = Path(tempfile.mkdtemp(prefix="shelfwise-scale-"))
    if args.url:
        url = args.url
    else:
        threads = args.threads or max(1, os.cpu_count() or 2)
        servers = Servers(1, threads, 4096, log_dir)
        url = servers.urls[0]
    load = os.getloadavg()
    runs: list[QueryRun] = []
    try:
        rng = np.random.default_rng(0)
        queries = {n: [trees[n].query(rng) for _ in range(args.queries)] for n in sizes}
        for n in sizes:
            for conc in concs:
                if conc > 1 and n not in conc_sizes:
                    continue
                with RemoteBackend(url, timeout=args.timeout, max_concurrency=conc) as rb:
                    rb.probe()
                    for q in queries[n]:
                        runs.append(walk(trees[n], rb, q, args.keep, args.request_size, conc, servers))
                        if not args.json:
                            r = runs[-1]
                            print(
                                f"  N={n:>8} conc={conc} levels={r.levels} requests={r.requests} "
                                f"tokens={r.tokens_sent} wall={r.seconds:.1f}s cpu={r.server_cpu:.1f}s",
                                file=sys.stderr,
                            )
        level_tree = Tree(cached(DATA, 1000))  # its first level: 32 documents, several request groups
        speed = level_speedup(
            level_tree,
            url,
            queries[min(sizes)][0],
            args.request_size,
            args.timeout,
            args.speedup_candidates,
        )
    finally:
        if servers:
            servers.close()
    result = summarize(runs, sizes, speed, args, load, build_seconds, servers is not None, url)
    result["total_seconds"] = round(time.perf_counter() - t_start, 1)
    if args.json:
        print(json.dumps(result))
    else:
        print_table(result)


def summarize(
    runs: list[QueryRun],
    sizes: list[int],
    speed: dict[str, float],
    args: argparse.Namespace,
    load: tuple[float, float, float],
    build_seconds: dict[int, float],
    started: bool,
    url: str,
) -> dict[str, Any]:
    def mean(n: int, conc: int, attr: str) -> float:
        vals = [getattr(r, attr) for r in runs if r.n_passages == n and r.concurrency == conc]
        return float(np.mean(vals)) if vals else float("nan")

    by_conc: dict[str, dict[str, float]] = {}
    for r in runs:
        by_conc.setdefault(str(r.concurrency), {})[str(r.n_passages)] = round(
            mean(r.n_passages, r.concurrency, "seconds"), 2
        )
    return {
        "server": "llama-cpp-python (started here)" if started else url,
        "readout": "binary",
        "branching": args.branching,
        "keep": args.keep,
        "request_size": args.request_size,
        "queries_per_size": args.queries,
        "load_average_at_start": [round(x, 2) for x in load],
        "levels": {str(n): int(mean(n, 1, "levels")) for n in sizes},
        "candidates_per_query": {str(n): mean(n, 1, "candidates") for n in sizes},
        "requests_per_query": {str(n): mean(n, 1, "requests") for n in sizes},
        "tokens_per_query": {str(n): mean(n, 1, "tokens_sent") for n in sizes},
        "tokens_evaluated_with_prefix_cache_per_query": {
            str(n): mean(n, 1, "tokens_prefix_cached") for n in sizes
        },
        "wall_seconds_per_query": {str(n): round(mean(n, 1, "seconds"), 2) for n in sizes},
        "server_cpu_seconds_per_query": {str(n): round(mean(n, 1, "server_cpu"), 2) for n in sizes},
        "wall_seconds_per_query_by_concurrency": by_conc,
        "concurrency_speedup": round(speed["speedup"], 3),
        "concurrency_level": {k: round(v, 2) for k, v in speed.items()},
        "build_seconds": {str(n): s for n, s in build_seconds.items()},
        "runs": [asdict(r) for r in runs],
    }


def print_table(res: dict[str, Any]) -> None:
    sizes = list(res["levels"])
    base = sizes[0]
    print(
        f"server: {res['server']}; readout {res['readout']}, keep {res['keep']}, "
        f"{res['request_size']} candidates per request group; "
        f"load average at start {res['load_average_at_start']}"
    )
    head = (
        f"{'passages':>10} {'levels':>6} {'cands':>6} {'requests':>8} {'tok sent':>9} {'tok eval':>9} "
        f"{'wall s':>8} {'cpu s':>7} {'x req':>6} {'x wall':>6}"
    )
    print(head)
    for n in sizes:
        req, wall = res["requests_per_query"][n], res["wall_seconds_per_query"][n]
        print(
            f"{int(n):>10} {res['levels'][n]:>6} {res['candidates_per_query'][n]:>6.0f} {req:>8.0f} "
            f"{res['tokens_per_query'][n]:>9.0f} "
            f"{res['tokens_evaluated_with_prefix_cache_per_query'][n]:>9.0f} "
            f"{wall:>8.1f} {res['server_cpu_seconds_per_query'][n]:>7.1f} "
            f"{req / res['requests_per_query'][base]:>6.2f} "
            f"{wall / res['wall_seconds_per_query'][base]:>6.2f}"
        )
    print("wall seconds per query by requests in flight:", res["wall_seconds_per_query_by_concurrency"])
    lvl = res["concurrency_level"]
    print(
        f"one level, {lvl['requests']:.0f} requests in {lvl['groups']:.0f} groups: "
        f"{lvl['seconds_1']:.1f} s one at "
        f"a time, {lvl['seconds_4']:.1f} s four at a time: speedup {res['concurrency_speedup']:.2f}"
    )
    print(f"total {res['total_seconds']} s")


if __name__ == "__main__":
    main()
