"""Searchable at once: how soon after ``shelfwise ingest FOLDER --no-wait`` returns does a search answer?

    python benchmarks/product/searchable.py --json            # 500 files
    python benchmarks/product/searchable.py --files 100
    python benchmarks/product/searchable.py --files 100 --embedders minilm embeddinggemma --wait-index 0 --json

A folder of ``--files`` Markdown files of real text is written to a temporary directory: the ConditionalQA guides
(headings and passages as parsed) and SQuAD paragraphs, four consecutive paragraphs of one article per file. The real
CLI, as separate processes, on a fresh library (``SHELFWISE_HOME`` in the temp dir, the installed models copied):

1. ``shelfwise ingest FOLDER --no-wait``: parses, then starts the background indexer and returns;
2. right after it returns, ``shelfwise search WORDS --json`` for ``--queries`` probes (six words of a random
   passage each, seeded), timed from the ingest's return; a probe is found when its file is in the top 3;
3. ``shelfwise status --json`` until the index is finished, to report how long the background indexing took.

The machine's load is reported: the background indexer competes with the searches for the cores. With
``--embedders`` the same folder and probes run once per sentence encoder (``SHELFWISE_EMBEDDER``), each on its own
fresh library, one after the other, so the figures sit side by side in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from shelfwise.core.paths import models_dir
from shelfwise.evaluation.run import load_dataset
from shelfwise.ingest.model import ParsedNode

WORD = re.compile(r"[A-Za-z]{4,}")


def _markdown(nodes: list[ParsedNode], depth: int) -> list[str]:
    out: list[str] = []
    for n in nodes:
        if n.kind == "section":
            out.append(f"{'#' * min(depth, 6)} {n.title}")
            out.extend(_markdown(n.children, depth + 1))
        elif n.text.strip():
            out.append(n.text.strip())
    return out


def write_folder(folder: Path, n_files: int) -> dict[Path, list[str]]:
    """Markdown files of real text; returns each file's passages (for the probes)."""
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[Path, list[str]] = {}
    for i, doc in enumerate(load_dataset("conditionalqa").documents):
        if len(files) >= n_files:
            return files
        p = folder / f"guide-{i:03d}.md"
        p.write_text("\n\n".join([f"# {doc.parsed.title}", *_markdown(doc.parsed.children, 2)]) + "\n",
                     encoding="utf-8")
        files[p] = [n.text for n in doc.parsed.nodes() if n.kind == "passage" and n.text.strip()]
    articles: dict[str, list[str]] = {}
    for doc in load_dataset("squad").documents:
        article = doc.path.split("//", 1)[-1].split("/")[0]
        articles.setdefault(article, []).extend(n.text for n in doc.parsed.nodes() if n.kind == "passage")
    for article, paras in articles.items():
        for k in range(0, len(paras), 4):
            if len(files) >= n_files:
                return files
            p = folder / f"article-{int(article):03d}-{k // 4:02d}.md"
            p.write_text("\n\n".join([f"# Article {article}, part {k // 4 + 1}", *paras[k:k + 4]]) + "\n",
                         encoding="utf-8")
            files[p] = paras[k:k + 4]
    return files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--queries", type=int, default=5)
    ap.add_argument("--wait-index", type=float, default=1800.0, help="seconds to wait for the background index")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--embedders", nargs="+", default=None,
                    help="run once per sentence encoder (minilm, embeddinggemma), side by side")
    args = ap.parse_args(argv)
    if not args.embedders:
        out = measure(args, None)
    else:
        out = {"load_average": os.getloadavg(), "cores": os.cpu_count(),
               "by_embedder": {name: measure(args, name) for name in args.embedders}}
        out["load_average_after"] = os.getloadavg()
    print(json.dumps(out, indent=1) if args.json else out)
    return 0


def measure(args: argparse.Namespace, embedder: str | None) -> dict[str, Any]:
    rng = random.Random(16)
    out: dict[str, Any] = {"load_average": os.getloadavg(), "cores": os.cpu_count(), "embedder": embedder or "default"}
    with tempfile.TemporaryDirectory(prefix="shelfwise-searchable-") as tmp:
        home = Path(tmp) / "home"
        shutil.copytree(models_dir(), home / "models")
        files = write_folder(Path(tmp) / "folder", args.files)
        out["files"] = len(files)
        out["bytes"] = sum(p.stat().st_size for p in files)
        env = {**os.environ, "SHELFWISE_HOME": str(home)}
        if embedder:
            env["SHELFWISE_EMBEDDER"] = embedder
        cli = [sys.executable, "-c", "from shelfwise.app.cli.main import main; main()", "--db", str(home / "lib.db")]

        def run(*a: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([*cli, *a], capture_output=True, text=True, env=env, timeout=3600, check=False)

        t0 = time.perf_counter()
        ing = run("ingest", str(Path(tmp) / "folder"), "--no-wait", "--json")
        t_ret = time.perf_counter()
        report = json.loads(ing.stdout)
        out.update({"ingest_exit_code": ing.returncode, "ingest_wall_seconds": round(t_ret - t0, 2),
                    "parse_seconds": round(report["seconds"], 2), "counts": report["counts"],
                    "passages": sum(r["passages"] for r in report["results"])})
        probes = []
        for path in rng.sample(sorted(files), args.queries):
            text = rng.choice(files[path])
            words = WORD.findall(text)
            start = rng.randrange(max(1, len(words) - 6))
            probes.append((path, " ".join(words[start:start + 6])))
        searches = []
        for path, query in probes:
            s = run("search", *query.split(), "--json", "--limit", "3")
            hits = json.loads(s.stdout) if s.returncode == 0 else []
            searches.append({"query": query, "seconds_since_ingest_returned": round(time.perf_counter() - t_ret, 2),
                             "found_in_top3": any(Path(h["path"]).name == path.name for h in hits),
                             "hits": len(hits)})
        out["searches"] = searches
        out["first_search_seconds_after_parsing"] = searches[0]["seconds_since_ingest_returned"]
        out["all_searches_seconds_after_parsing"] = searches[-1]["seconds_since_ingest_returned"]
        out["found_in_top3"] = sum(s["found_in_top3"] for s in searches)
        # a question (the walk: the sentence encoder loads and embeds it) right after the searches, no answer text
        path, query = probes[0]
        t_q = time.perf_counter()
        a = run("ask", query, "--no-answer", "--json")
        answer = json.loads(a.stdout) if a.returncode == 0 else {}
        passages = answer.get("passages") or []
        out["first_question"] = {
            "query": query, "exit_code": a.returncode, "seconds": round(time.perf_counter() - t_q, 2),
            "seconds_since_ingest_returned": round(time.perf_counter() - t_ret, 2),
            "found_in_top3": any(Path(str(h.get("path", ""))).name == path.name for h in passages[:3]),
        }
        st = json.loads(run("status", "--json").stdout)
        out["pending_after_searches"] = sum(ix["pending"] for ix in st["indexes"])
        deadline = time.perf_counter() + args.wait_index
        finished = None
        while time.perf_counter() < deadline:
            st = json.loads(run("status", "--json").stdout)
            if not any(ix["unfinished"] for ix in st["indexes"]):
                finished = time.perf_counter() - t_ret
                break
            time.sleep(5)
        out["background_index_seconds"] = round(finished, 1) if finished is not None else None
        for ix in st["indexes"]:  # a background indexer still running (wait ran out): stop it, this is a temp dir
            if ix["running"] and ix["pid"]:
                try:
                    os.kill(int(ix["pid"]), 15)
                except OSError:
                    pass
    out["load_average_after"] = os.getloadavg()
    return out


if __name__ == "__main__":
    sys.exit(main())
