"""Results through the encoder server against the same encoder in process, side by side (docs/server.md).

    python benchmarks/product/server_fidelity.py                         # EmbeddingGemma, --parallel 4, everything
    python benchmarks/product/server_fidelity.py --parts sample,xquad     # the two evaluations only
    python benchmarks/product/server_fidelity.py --passages 500 --json

One ``llama-server --embedding --parallel S`` with the encoder's GGUF (named ``FILE:SHA16`` as ``server.sh`` names
it) is started on the loopback; then every part runs twice, once with ``--embedder URL`` (batched requests, as many
in flight as the server has slots) and once in process with the same GGUF, each mode in its own data dir (so no
vector is shared through a library or its cache):

* ``sample``: ``shelfwise ingest resources/sample`` and ``shelfwise eval resources/sample_questions.jsonl``
  (21 questions);
* ``xquad``: ``shelfwise eval xquad --lang de --limit 300`` (240 German paragraphs, 300 questions);
* ``passages``: ``--passages`` SQuAD v1.1 dev paragraphs (default 2,000) and 300 of its questions embedded by
  each encoder directly, timed.

For the two evaluations it prints each method's Hit@1 (passage, section, document) in both modes side by side and
whether they are equal, and compares every vector the two libraries stored (node vectors by node, the content
cache by text hash): lowest and mean cosine. A run in which the server did not answer (the fallback to local
weights logged) is reported as such, never as a match. The server binary is the one ``bash packaging/server.sh
build`` made (or ``SHELFWISE_LLAMA_SERVER``).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_encoder import server

from shelfwise.core.models.encoders.embedder import Embedder, resolve_embedder
from shelfwise.core.models.remote.embedder import RemoteEmbedder
from shelfwise.core.paths import models_dir
from shelfwise.evaluation.run import shared_dir

ROOT = Path(__file__).resolve().parents[2]
METHODS = "bm25,dense,navigation"
HIT1 = ("passage_hit1", "section_hit1", "document_hit1")
FALLBACK = "cannot reach the encoder server"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} load {os.getloadavg()[0]:.1f}] {msg}", file=sys.stderr, flush=True)


def make_home(path: Path) -> Path:
    """A data dir whose models folder links the installed models file by file (nothing written beside them)."""
    models = path / "models"
    models.mkdir(parents=True, exist_ok=True)
    for f in models_dir().iterdir():
        if f.suffix in (".gguf", ".json", ".sha256") and f.name != "servers.json" and not (models / f.name).exists():
            (models / f.name).symlink_to(f.resolve())
    return path


def shelfwise(home: Path, embedder: str, *args: str) -> tuple[dict[str, Any] | None, float]:
    """One ``shelfwise --embedder E ARGS`` in ``home``; its JSON output (None when it printed none) and seconds."""
    env = {**os.environ, "SHELFWISE_HOME": str(home)}
    env.pop("SHELFWISE_EMBEDDER", None)
    env.pop("SHELFWISE_DB", None)
    cmd = [sys.executable, "-c", "import sys; from shelfwise.app.cli.main import main; sys.exit(main())",
           "--embedder", embedder, *args]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    secs = time.perf_counter() - t0
    (home / "logs").mkdir(exist_ok=True)
    (home / "logs" / f"{args[0]}-{int(time.time())}.stderr").write_text(done.stderr, encoding="utf-8")
    if FALLBACK in done.stderr:
        raise SystemExit(f"the encoder server did not answer during {' '.join(args)}: the run is not a comparison")
    if done.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    out = done.stdout.strip()
    start = out.find("{")
    return (json.loads(out[start:]) if start >= 0 else None), secs


def stored_vectors(db: Path) -> tuple[dict[tuple, np.ndarray], dict[tuple, np.ndarray]]:
    """Node vectors keyed by (kind, title, text, model) and cache vectors by (model, sha)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        nodes = {(k, t, x, m): np.frombuffer(v, np.float32) for k, t, x, m, v in conn.execute(
            "SELECT n.kind, n.title, n.text, e.model, e.vector FROM embeddings e JOIN nodes n ON n.id = e.node_id")}
        cache = {(m, s): np.frombuffer(v, np.float32) for m, s, v in conn.execute(
            "SELECT model, sha, vector FROM vector_cache")}
    finally:
        conn.close()
    return nodes, cache


def cosines(a: dict[tuple, np.ndarray], b: dict[tuple, np.ndarray]) -> dict[str, Any]:
    keys = sorted(set(a) & set(b))
    if not keys:
        return {"n": 0, "only_local": len(a), "only_server": len(b)}
    x = np.stack([a[k] for k in keys])
    y = np.stack([b[k] for k in keys])
    c = (x * y).sum(1) / np.maximum(np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1), 1e-12)
    return {"n": len(keys), "only_local": len(set(a) - set(b)), "only_server": len(set(b) - set(a)),
            "min_cosine": round(float(c.min()), 6), "mean_cosine": round(float(c.mean()), 6)}


def compare_libraries(local_db: Path, server_db: Path) -> dict[str, Any]:
    ln, lc = stored_vectors(local_db)
    sn, sc = stored_vectors(server_db)
    return {"node_vectors": cosines(ln, sn), "cached_vectors": cosines(lc, sc)}


def hit1(report: dict[str, Any] | None) -> dict[str, dict[str, float]]:
    methods = (report or {}).get("methods") or {}
    return {m: {k: v for k, v in (r or {}).items() if k in HIT1 or k == "passage_mrr"} for m, r in methods.items()}


def hit1_only(by_method: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    return {m: {k: v for k, v in r.items() if k in HIT1} for m, r in by_method.items()}


def eval_part(name: str, homes: dict[str, Path], encoders: dict[str, str], eval_args: list[str],
              ingest: list[str] | None, db_of: Any, together: bool) -> dict[str, Any]:
    part: dict[str, Any] = {"modes": {}}

    def one(mode: str) -> dict[str, Any]:
        home = homes[mode]
        row: dict[str, Any] = {}
        if ingest:
            _, row["ingest_seconds"] = shelfwise(home, encoders[mode], *ingest)
            row["ingest_seconds"] = round(row["ingest_seconds"], 1)
            log(f"{name}: ingest {mode} {row['ingest_seconds']} s")
        report, secs = shelfwise(home, encoders[mode], "eval", *eval_args, "--methods", METHODS, "--no-sweep",
                                 "--json", "--out", str(home / "reports"))
        row["eval_seconds"] = round(secs, 1)
        row["questions"] = (report or {}).get("questions")
        row["hit1"] = hit1(report)
        row["encoder"] = ((report or {}).get("settings") or {}).get("embedder_path")
        log(f"{name}: eval {mode} {row['eval_seconds']} s {row['hit1']}")
        return row

    # together: both modes at once (the server's round trips wait on a loaded machine; the two share its cores,
    # so their seconds are not a speed comparison then)
    with ThreadPoolExecutor(2 if together else 1) as ex:
        part["modes"] = dict(zip(homes, ex.map(one, homes), strict=True))
    a, b = (part["modes"][m]["hit1"] for m in homes)
    part["hit1_equal"] = bool(a) and hit1_only(a) == hit1_only(b)  # MRR is shown, not required equal
    part["vectors"] = compare_libraries(db_of(homes["in process"]), db_of(homes["server"]))
    log(f"{name}: hit1 equal {part['hit1_equal']}; vectors {part['vectors']}")
    return part


def squad(n: int, questions: int) -> tuple[list[str], list[str]]:
    path = shared_dir() / "evaldata" / "squad_v1.1_dev" / "original" / "dev-v1.1.json.zip"
    with zipfile.ZipFile(path) as z:
        data = json.loads(z.read(next(f for f in z.namelist() if f.endswith(".json"))))
    paras = [p for art in data["data"] for p in art["paragraphs"]][:n]
    step = max(1, len(paras) // questions)
    return [p["context"] for p in paras], [p["qas"][0]["question"] for p in paras[::step]][:questions]


def passages_part(model: Path, url: str, n: int, threads: int) -> dict[str, Any]:
    texts, qs = squad(n, 300)
    log(f"passages: {len(texts)} paragraphs, {len(qs)} questions")
    remote = RemoteEmbedder(url)
    try:
        t0 = time.perf_counter()
        got = remote.embed_documents(texts)
        server_s = time.perf_counter() - t0
        got_q = remote.embed_queries(qs)
        log(f"passages: server {server_s:.0f} s")
    finally:
        remote.close()
    with Embedder(model, n_threads=threads) as local:
        t0 = time.perf_counter()
        want = local.embed_documents(texts)
        local_s = time.perf_counter() - t0
        want_q = local.embed_queries(qs)
        tokens = sum(len(local.tokenize(t, local.profile.document_prefix())) for t in texts)
    log(f"passages: in process {local_s:.0f} s")
    cd = (np.asarray(got) * np.asarray(want)).sum(1)
    cq = (np.asarray(got_q) * np.asarray(want_q)).sum(1)
    top_same = int((np.argmax(np.asarray(want_q) @ np.asarray(want).T, 1)
                    == np.argmax(np.asarray(got_q) @ np.asarray(got).T, 1)).sum())
    return {"texts": len(texts), "tokens": tokens, "questions": len(qs),
            "seconds": {"in process": round(local_s, 1), "server": round(server_s, 1)},
            "min_cosine_passages": round(float(cd.min()), 6), "mean_cosine_passages": round(float(cd.mean()), 6),
            "min_cosine_questions": round(float(cq.min()), 6),
            "same_nearest_passage": f"{top_same}/{len(qs)}"}


def print_report(rep: dict[str, Any]) -> None:
    print(f"encoder {rep['encoder']} on llama-server --parallel {rep['slots']} --threads {rep['threads']} "
          f"(requests of 32 texts, {rep['slots']} in flight) against the same GGUF in process")
    print(f"load average at the start {rep['load_start']}, at the end {rep.get('load_end')}")
    for name in ("sample", "xquad"):
        part = rep["parts"].get(name)
        if not part:
            continue
        modes = part["modes"]
        print(f"\n## {name} ({modes['server']['questions']} questions): Hit@1 passage / section / document, MRR")
        print("| method | in process | server | Hit@1 equal |")
        print("|---|---|---|---|")
        for m in modes["in process"]["hit1"]:
            a, b = modes["in process"]["hit1"][m], modes["server"]["hit1"].get(m, {})
            fmt = lambda r: " / ".join(str(r.get(k)) for k in (*HIT1, "passage_mrr"))  # noqa: E731
            same = all(a.get(k) == b.get(k) for k in HIT1)
            print(f"| {m} | {fmt(a)} | {fmt(b)} | {'yes' if same else 'NO'} |")
        secs = {mo: (r.get("ingest_seconds"), r["eval_seconds"]) for mo, r in modes.items()}
        print(f"Hit@1 (passage, section, document) equal in every method: {part['hit1_equal']}; "
              f"seconds (ingest, eval): {secs}")
        for kind, c in part["vectors"].items():
            print(f"stored {kind}: {c}")
    p = rep["parts"].get("passages")
    if p:
        print(f"\n## passages: {p['texts']} SQuAD dev paragraphs ({p['tokens']} tokens), {p['questions']} questions")
        print(f"lowest cosine per passage {p['min_cosine_passages']} (mean {p['mean_cosine_passages']}), "
              f"per question {p['min_cosine_questions']}; nearest passage the same for {p['same_nearest_passage']} "
              f"questions; seconds {p['seconds']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encoder", default="embeddinggemma")
    ap.add_argument("--slots", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--parts", default="sample,xquad,passages")
    ap.add_argument("--passages", type=int, default=2000)
    ap.add_argument("--xquad-limit", type=int, default=300)
    ap.add_argument("--lang", default="de")
    ap.add_argument("--work", type=Path, default=Path("server-fidelity"), help="the two data dirs go here")
    ap.add_argument("--together", action="store_true",
                    help="run the two modes of an evaluation at the same time (their seconds then share the cores)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    model = resolve_embedder(args.encoder)
    homes = {m: make_home(args.work.resolve() / d) for m, d in (("in process", "local"), ("server", "server"))}
    rep: dict[str, Any] = {"encoder": model.name, "slots": args.slots, "threads": args.threads,
                           "together": args.together,
                           "load_start": [round(x, 2) for x in os.getloadavg()], "parts": {}}
    with server(model, args.slots, args.threads) as url:
        encoders = {"in process": str(model), "server": url}
        if "sample" in parts:
            rep["parts"]["sample"] = eval_part(
                "sample", homes, encoders, [str(ROOT / "resources" / "sample_questions.jsonl")],
                ["ingest", str(ROOT / "resources" / "sample")], lambda h: h / "library.db", args.together)
        if "xquad" in parts:
            rep["parts"]["xquad"] = eval_part(
                "xquad", homes, encoders, ["xquad", "--lang", args.lang, "--limit", str(args.xquad_limit)], None,
                lambda h: next((h / "eval").glob("xquad*.db")), args.together)
        if "passages" in parts:
            rep["parts"]["passages"] = passages_part(model, url, args.passages, args.threads)
    rep["load_end"] = [round(x, 2) for x in os.getloadavg()]
    (args.work / "report.json").write_text(json.dumps(rep, indent=1), encoding="utf-8")
    if args.json:
        print(json.dumps(rep, indent=1))
    else:
        print_report(rep)


if __name__ == "__main__":
    main()
