"""Growth: what a question costs as the library grows from 10^3 to 10^6 passages, side by side in one run.

    python benchmarks/product/growth.py --json                          # 10^3, 10^4, 10^5, 10^6
    python benchmarks/product/growth.py --sizes 100000 --json           # {"sizes": {"100000": {"ask_process_s": ...}}}
    python benchmarks/product/growth.py --sizes 1000,10000 --dir /tmp/growth --repeat 5
    python benchmarks/product/growth.py --baseline-src BASE --json     # today's code beside this one, same run

``--src SRC``: measure the code in SRC (a folder holding ``shelfwise/`` whose folders link to a copy of a checkout)
instead of this checkout, so a run of an hour measures one commit while the checkout moves on.

``--baseline-src BASE``: a folder holding ``shelfwise/`` whose ``core``, ``app``, ``ingest``, ``resources`` link to
another checkout (today's code): its libraries are built by that code (in ``--dir``/today) and every measurement is
taken for both, the whole-process questions alternated, up to ``--baseline-max`` passages (10^5: today's snapshot
of 10^6 passages holds ~3 GB of float32 vectors three times over while it is built). Each size's row has today's
figures under ``today`` and ``ratio_today_over_this``.

The libraries: the synthetic trees of ``benchmarks/product/synthetic.py`` (real tree shapes: 32 children a node at most;
10^3 documents -> passages, 10^4 + sections, 10^5 and 10^6 + topic clusters), with the lexical index built, and a
vector for every passage, section, document and cluster, written through ``Store.set_embeddings`` (so in whatever
form the store keeps them). The vectors: ``--real`` (default 1,000) passages of the trees are encoded by the real
EmbeddingGemma-300M (their own text as the indexer reads it; encoded once and kept in ``--dir``); every other
passage repeats one of those real vectors (passage i gets real vector i mod R) plus Gaussian noise of norm
``--noise`` (0.3) and is normalised again; a section, document or cluster gets the normalised mean of its
children's vectors (what the indexer gives sections; documents and clusters embed their own text in a real
library). The answer's sentence vectors (every passage's candidate sentences, as ``embed_sentences`` caches
them) are real vectors repeated with noise too. The library is then finished the way ``shelfwise index`` leaves
it, except that calibration is off (the prior decision model: fitting it walks 240 probe questions per size).

Per size: the library file's size and bytes per passage; the snapshot's build time and resident size (in this
process, RSS before and after) and its files beside the library; ``shelfwise ask --no-generate`` as a whole process
(median wall seconds, peak RSS and median CPU seconds of ``--repeat`` runs: CPU seconds are steadier than wall time
on a shared machine), and as ``ask_process_absent_s`` for a question whose words the library does not hold
(:data:`ABSENT_QUESTION`); the same question in one warm process through ``Shelf.ask`` with generation off (the window's
case: median wall and CPU seconds of ``--repeat`` after one warm-up, each the words of another passage next to
the middle one, their vectors encoded first); keyword search (``Shelf.search_words``) and
flat dense search (the query against every passage vector, top 10), medians. The question: the words of one passage
(different at every size: the passage in the middle of the tree).
"""

from __future__ import annotations

import argparse
import compileall
import gc
import inspect
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic

from shelfwise.core.answers.extractive import CONTEXT_VERSION
from shelfwise.core.answers.sentence_vectors import sentence_model
from shelfwise.core.indexing.sentences import passage_contexts
from shelfwise.core.indexing.topics import signature
from shelfwise.core.indexing.vectors import embedding_text
from shelfwise.core.models.backend import Embedder, text_sha
from shelfwise.core.settings import Budgets, Settings, save_settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store.db import Store
from shelfwise.core.store.types import NODE_COLS, node_from_row

ROOT = Path(__file__).resolve().parents[2]
SHELFWISE = Path(sys.executable).parent / "shelfwise"  # the same install as this interpreter
CHUNK = 20_000


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def file_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists()) / 2**20


def real_vectors(directory: Path, n_real: int, emb: Embedder) -> np.ndarray:
    """The first ``n_real`` passages of the 10^3 tree's shape, encoded by the real encoder (kept in ``directory``)."""
    cache = directory / f"real-{n_real}.npz"
    if cache.exists():
        data = np.load(cache)
        if str(data["model"]) == emb.model_id:
            return np.asarray(data["vectors"], np.float32)
    tree = synthetic.cached(directory, max(n_real, 1000))
    store = Store(Path(tree.path))
    try:
        titles = {d.id: d.title for d in store.documents(tree.collection_id)}
        nodes = list(store.iter_nodes(("passage",), tree.collection_id))[:n_real]
        texts = [embedding_text(n, titles.get(n.document_id or -1, "")) for n in nodes]
    finally:
        store.close()
    t0 = time.perf_counter()
    vecs = np.concatenate([emb.embed(texts[i:i + 32]) for i in range(0, len(texts), 32)]).astype(np.float32)
    print(f"encoded {len(texts)} real passages in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    np.savez(cache, vectors=vecs, model=np.array(emb.model_id))
    return vecs


def sentence_vectors(store: Store, cid: int, emb: Embedder, real: np.ndarray, noise: float,
                     rng: np.random.Generator) -> int:
    """The answer's sentence vectors (what ``embed_sentences`` caches), each a real vector repeated with noise."""
    model = sentence_model(emb)
    done = 0
    batch: list[str] = []

    def flush() -> None:
        nonlocal done
        texts = list(dict.fromkeys(batch))
        k = np.arange(done, done + len(texts))
        v = real[k % len(real)] + rng.normal(0, noise / np.sqrt(real.shape[1]), (len(texts), real.shape[1]))
        v = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
        store.cache_vectors(model, [(text_sha(emb, t), x) for t, x in zip(texts, v, strict=True)])
        done += len(texts)
        batch.clear()

    last = 0
    while True:  # a page of passages at a time: a cursor left open while writing keeps SQLite from reusing its WAL
        rows = store.conn.execute(f"SELECT {NODE_COLS} FROM nodes n WHERE kind = 'passage' AND collection_id = ? "
                                  "AND id > ? ORDER BY id LIMIT 5000", (cid, last)).fetchall()
        if not rows:
            break
        last = int(rows[-1][0])
        for p in map(node_from_row, rows):
            batch.extend(passage_contexts(p.text, p.heading_path))
            if len(batch) >= CHUNK:
                flush()
    flush()
    return done


def build_library(directory: Path, n: int, real: np.ndarray, emb: Embedder, noise: float, *,
                  encoder: str = "embeddinggemma", sentences: bool = True) -> Path:
    """The synthetic tree of ``n`` passages with a vector on every node, indexed (see the module doc), for the
    encoder ``emb`` (recorded as the library's ``encoder``). ``sentences=False``: no sentence vectors are cached
    (the answer then encodes the few sentences it reads when it reads them, as for a library indexed before
    them)."""
    db = directory / f"growth-{n}.db"
    done = directory / f"growth-{n}.done"
    model_id = emb.model_id
    if db.exists() and done.exists() and done.read_text() == model_id:
        return db
    for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), done):
        p.unlink(missing_ok=True)
    t0 = time.perf_counter()
    synthetic.build(db, n, fts=True)
    store = Store(db)
    rng = np.random.default_rng(1)
    try:
        cid = store.collection("synthetic").id
        rows = store.conn.execute(
            "SELECT id, parent_id, depth, kind FROM nodes WHERE collection_id = ? AND kind != 'collection' "
            "ORDER BY depth DESC, id", (cid,)).fetchall()
        ids = np.array([r[0] for r in rows], np.int64)
        parents = np.array([r[1] for r in rows], np.int64)
        depths = np.array([r[2] for r in rows], np.int64)
        index_of = {int(i): k for k, i in enumerate(ids.tolist())}
        sums = np.zeros((0, real.shape[1]), np.float32)
        sum_row: dict[int, int] = {}
        for depth in sorted(set(depths.tolist()), reverse=True):
            at = np.flatnonzero(depths == depth)
            level_ids = ids[at]
            level_parents = parents[at]
            up = sorted({int(p) for p in level_parents.tolist() if int(p) in index_of})
            next_sums = np.zeros((len(up), real.shape[1]), np.float32)
            next_row = {p: k for k, p in enumerate(up)}
            for start in range(0, len(at), CHUNK):
                chunk_ids = level_ids[start:start + CHUNK]
                if depth == depths.max():  # passages: real vectors repeated with noise
                    k = np.arange(start, start + len(chunk_ids))
                    v = real[k % len(real)].copy()
                    extra = k >= len(real)
                    v[extra] += rng.normal(0, noise / np.sqrt(v.shape[1]), (int(extra.sum()), v.shape[1]))
                else:
                    v = sums[[sum_row[int(i)] for i in chunk_ids.tolist()]]
                v = (v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)).astype(np.float32)
                store.set_embeddings(model_id, list(zip(chunk_ids.tolist(), v, strict=True)))
                rows_up = [next_row.get(int(p), -1) for p in level_parents[start:start + CHUNK].tolist()]
                ok = np.array(rows_up) >= 0
                np.add.at(next_sums, np.array(rows_up)[ok], v[ok])
            sums, sum_row = next_sums, next_row
        if sentences:
            sentence_vectors(store, cid, emb, real, noise, rng)
        # finished as `shelfwise index` leaves a library, without calibration (module doc)
        store.set_meta("embedder", encoder)
        sig = signature(store, cid)
        store.set_meta(f"hierarchy:{cid}", f"{sig}:{Budgets().branching}:{model_id}")
        store.set_meta(f"sentences:{cid}", f"{sig}:{model_id}:{CONTEXT_VERSION}")
    finally:
        store.close()
    settings = Settings(db_path=db, use_calibration=False, answer_generate=False)
    with Shelf(settings, embedder=emb) as shelf:
        shelf.refresh("synthetic")
    done.write_text(model_id)
    print(f"built {n} passages in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return db


def question_for(db: Path, k: int = 0) -> str:
    """The first 8 words of the passage ``k`` after the one in the middle of the tree, as a question."""
    store = Store(db)
    try:
        n = int(store.conn.execute("SELECT count(*) FROM nodes WHERE kind = 'passage'").fetchone()[0])
        text = store.conn.execute("SELECT text FROM nodes WHERE kind = 'passage' ORDER BY id LIMIT 1 OFFSET ?",
                                  (n // 2 + k,)).fetchone()[0]
    finally:
        store.close()
    return " ".join(str(text).split()[:8]) + "?"


# a question whose words the synthetic library does not hold (a user's typo, a subject it lacks): what the not-found
# rule looks up in the full-text index for each of its words (docs/scale.md, "Session 29")
ABSENT_QUESTION = "What does the quarterly zephyrine audit of the glimmerstone ledger require?"


def ask_process(db: Path, question: str, settings_file: Path, src: str | None) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) and CPU seconds of one ``shelfwise ask --no-generate`` process, run by this
    interpreter on the code at ``src`` (a folder holding ``shelfwise/``; None: this checkout)."""
    env = dict(os.environ, SHELFWISE_SETTINGS=str(settings_file))
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's Python keeps the bytecode it compiles (see compile_code)
    if src:
        env["PYTHONPATH"] = src
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "from shelfwise.app.cli.main import main; main()", "--db", str(db),
                             "ask", question, "--collection", "synthetic", "--no-generate"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"shelfwise ask failed: {err[-2000:]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def where_bytes_go(db: Path) -> dict[str, object]:
    """The library file's bytes by table and index (SQLite's dbstat: every page read once), and the stored vectors'
    bytes each against float32's ``4 * dim``: the blobs alone (``vector_blob_bytes``) and with their rows and
    indexes (``vector_bytes_each``)."""
    import sqlite3

    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        pages = {str(name): int(size) for name, size in conn.execute(
            "SELECT name, sum(pgsize) FROM dbstat GROUP BY name")}
        count, blob, dim = conn.execute("SELECT count(*), sum(length(vector)), max(dim) FROM embeddings").fetchone()
        cached, cblob = conn.execute("SELECT count(*), sum(length(vector)) FROM vector_cache").fetchone()
    except sqlite3.Error as exc:  # a SQLite built without dbstat
        return {"bytes_by_table": f"not measured: {exc}"}
    finally:
        conn.close()
    vectors = sum(v for k, v in pages.items() if "embeddings" in k or "vector_cache" in k)
    stored = max(1, int(count or 0) + int(cached or 0))
    return {"bytes_by_table_mb": {k: round(v / 2**20, 1) for k, v in sorted(pages.items(), key=lambda kv: -kv[1])
                                  if v >= 2**20},
            "vectors_stored": int(count or 0) + int(cached or 0), "vector_dim": int(dim or 0),
            "vector_blob_bytes": round((int(blob or 0) + int(cblob or 0)) / stored, 1),
            "vector_bytes_each": round(vectors / stored, 1),
            "float32_bytes_each": 4 * int(dim or 0)}


def measure_warm(db: Path, n: int, repeat: int) -> dict[str, object]:
    """In this process: the library's size, the snapshot's build, the question asked warm, keyword and flat dense
    search."""
    from shelfwise.core.navigation.snapshots import snapshot_for
    from shelfwise.core.store.snapshot import build_snapshot

    out: dict[str, object] = {"library_mb": round(file_mb(db), 1),
                              "library_bytes_per_passage": round(file_mb(db) * 2**20 / n, 1)}
    out.update(where_bytes_go(db))
    question = question_for(db)
    others = [question_for(db, k) for k in range(1, repeat + 1)]  # read before the library is open here
    settings = Settings(db_path=db, use_calibration=False, answer_generate=False)
    with Shelf(settings) as shelf:
        store = shelf.store
        cid = store.collection("synthetic").id
        model = shelf.embedder.model_id
        gc.collect()
        before = rss_mb()
        t0 = time.perf_counter()
        snap = build_snapshot(store, cid, model)
        out["snapshot_build_s"] = round(time.perf_counter() - t0, 3)
        gc.collect()
        out["snapshot_rss_mb"] = round(rss_mb() - before, 1)
        del snap
        gc.collect()
        side = db.with_name(db.name + ".snapshots")  # the snapshot files beside the library, where they are kept
        out["snapshot_disk_mb"] = round(sum(f.stat().st_size for f in side.rglob("*") if f.is_file()) / 2**20, 1) \
            if side.exists() else 0.0
        shelf.before_question("synthetic")
        shelf.ask(question, "synthetic")  # warm-up: models loaded, snapshot read
        # each timed question another passage's words (a question asked again reads its kept ranking and cosines),
        # their vectors encoded before the clock starts (as in session 20's figures: a warm question's walk)
        for other in others:
            shelf.embedder.embed_query(other)
        warm, warm_cpu = [], []
        for other in others:
            t0, c0 = time.perf_counter(), time.process_time()
            shelf.before_question("synthetic")  # as the window's worker does before every question
            shelf.ask(other, "synthetic")
            warm.append(time.perf_counter() - t0)
            warm_cpu.append(time.process_time() - c0)
        out["ask_warm_s"] = round(statistics.median(warm), 3)
        out["ask_warm_cpu_s"] = round(statistics.median(warm_cpu), 3)
        words = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            shelf.search_words(question, "synthetic")
            words.append(time.perf_counter() - t0)
        out["keyword_s"] = round(statistics.median(words), 4)
        snap = snapshot_for(store, cid, model)
        q = shelf.embedder.embed_query(question)
        dense = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            if not hasattr(snap, "passage_cos"):  # the code before session 19
                cos = snap.passage_vecs @ q
            elif "keep" in inspect.signature(snap.passage_cos).parameters:  # a scan each time, not the kept cosines
                cos = snap.passage_cos(q, keep=False)
            else:
                cos = snap.passage_cos(q)
            np.argpartition(-cos, 10)[:10]
            dense.append(time.perf_counter() - t0)
        out["dense_flat_s"] = round(statistics.median(dense), 4)
        out["warm_process_rss_mb"] = round(rss_mb(), 1)
    return out


def child(args: list[str], src: str | None) -> dict[str, object]:
    """This script run with ``args`` on the code at ``src`` (None: this checkout); its last line of JSON."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if src:
        env["PYTHONPATH"] = src
    done = subprocess.run([sys.executable, __file__, *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"growth.py {' '.join(args)} failed: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def code_root(src: str | None) -> Path:
    """The checkout (or ``git archive`` copy) whose code ``src`` links to; this checkout for None."""
    return Path(src, "shelfwise", "core").resolve().parent if src else ROOT


def compile_code(src: str | None) -> None:
    """Compile the code at ``src`` (None: this checkout) to bytecode once, as ``packaging/setup.sh`` does and as
    Python does by itself on a user's machine after the first run: a process then reads each module's bytecode
    instead of compiling it (docs/scale.md, "Session 29"). The package folders are compiled through their links
    (``compileall`` does not follow a linked folder)."""
    code = code_root(src)
    for part in ("core", "app", "ingest", "resources", "evaluation"):
        if (code / part).is_dir():
            compileall.compile_dir(str(code / part), quiet=1)


def checkout(src: str | None) -> dict[str, str]:
    code = code_root(src)
    stamp = code / "COMMIT"  # a copy made by git archive has no .git: its commit is written beside it
    commit = stamp.read_text().strip() if stamp.exists() else subprocess.run(
        ["git", "-C", str(code), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    return {"code": str(code), "commit": commit}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000,1000000")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/shelfwise-growth"))
    ap.add_argument("--src", default=None, help="a folder holding shelfwise/ (links to a copy of a checkout): the "
                    "code measured as 'this' (default: this checkout)")
    ap.add_argument("--baseline-src", default=None, help="a folder holding shelfwise/ (links to another "
                    "checkout's core, app, ingest, resources): today's code, measured beside this one")
    ap.add_argument("--baseline-max", type=int, default=100_000, help="the largest size the baseline is run at")
    ap.add_argument("--real", type=int, default=1000, help="passages encoded by the real encoder")
    ap.add_argument("--noise", type=float, default=0.3, help="norm of the noise added to a repeated real vector")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--measure-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    sizes_asked = [int(s) for s in args.sizes.split(",")]
    if args.build_only or args.measure_only:  # one step, for the parent (on whichever code this is)
        from shelfwise.core.models.factory import make_embedder

        emb = make_embedder("embeddinggemma")
        db = build_library(args.dir, sizes_asked[0], real_vectors(args.dir, args.real, emb), emb, args.noise)
        print(json.dumps(measure_warm(db, sizes_asked[0], args.repeat) if args.measure_only else {"db": str(db)}))
        return
    base_dir = args.dir / "today"
    base_dir.mkdir(exist_ok=True)
    settings_file = args.dir / "settings.json"
    save_settings(Settings(use_calibration=False, answer_generate=False), settings_file)
    sizes: dict[str, dict[str, object]] = {}
    common = ["--real", str(args.real), "--noise", str(args.noise), "--repeat", str(args.repeat)]
    for n in sizes_asked:
        row: dict[str, object] = {"passages": n}
        db = Path(str(child(["--build-only", "--sizes", str(n), "--dir", str(args.dir), *common], args.src)["db"]))
        base = args.baseline_src if args.baseline_src and n <= args.baseline_max else None
        if base:
            shutil.copy(args.dir / f"real-{args.real}.npz", base_dir / f"real-{args.real}.npz")
            base_db = Path(str(child(["--build-only", "--sizes", str(n), "--dir", str(base_dir), *common],
                                     base)["db"]))
        question = question_for(db)
        compile_code(args.src)
        if base:
            compile_code(base)
        new_runs, base_runs, new_absent, base_absent = [], [], [], []
        for _ in range(args.repeat):  # alternated, so both see the same load
            new_runs.append(ask_process(db, question, settings_file, args.src))
            new_absent.append(ask_process(db, ABSENT_QUESTION, settings_file, args.src))
            if base:
                base_runs.append(ask_process(base_db, question, settings_file, base))
                base_absent.append(ask_process(base_db, ABSENT_QUESTION, settings_file, base))
        row["ask_process_s"] = round(statistics.median(r[0] for r in new_runs), 3)
        row["ask_process_absent_s"] = round(statistics.median(r[0] for r in new_absent), 3)
        row["ask_process_rss_mb"] = round(max(r[1] for r in new_runs), 1)
        row["ask_process_cpu_s"] = round(statistics.median(r[2] for r in new_runs), 3)
        row.update(child(["--measure-only", "--sizes", str(n), "--dir", str(args.dir), *common], args.src))
        if base:
            today: dict[str, object] = {"ask_process_s": round(statistics.median(r[0] for r in base_runs), 3),
                                        "ask_process_absent_s": round(statistics.median(r[0] for r in base_absent),
                                                                      3),
                                        "ask_process_rss_mb": round(max(r[1] for r in base_runs), 1),
                                        "ask_process_cpu_s": round(statistics.median(r[2] for r in base_runs), 3)}
            today.update(child(["--measure-only", "--sizes", str(n), "--dir", str(base_dir), *common], base))
            row["today"] = today
            row["ratio_today_over_this"] = {k: round(float(today[k]) / float(row[k]), 2)  # type: ignore[arg-type]
                                            for k in ("ask_process_s", "ask_process_absent_s", "ask_process_cpu_s",
                                                      "ask_process_rss_mb",
                                                      "ask_warm_s", "ask_warm_cpu_s",
                                                      "dense_flat_s", "library_mb", "snapshot_build_s")
                                            if float(row.get(k, 0) or 0) > 0}  # type: ignore[arg-type]
        row["load_average"] = [round(x, 1) for x in os.getloadavg()]
        sizes[str(n)] = row
        print(json.dumps({str(n): row}), file=sys.stderr, flush=True)
    result = {"sizes": sizes, "vectors": f"{args.real} real EmbeddingGemma vectors, repeated with noise {args.noise}",
              "this": checkout(args.src), "today": checkout(args.baseline_src) if args.baseline_src else None}
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        for n, row in sizes.items():
            print(n, json.dumps(row))


if __name__ == "__main__":
    main()
