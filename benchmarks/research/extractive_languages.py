"""The extractive answer in other languages: given the question's own XQuAD paragraph (retrieval taken out), how
often does the extracted answer hold a gold answer span, and how much of the paragraph is it (a "sentence" that is
the whole paragraph holds every span and answers nothing)? Each language's questions, the bundled embedder as the
sentence scorer, as ``shelfwise ask`` uses it. Evaluation only (XQuAD is never tuned on).

``--before REV`` also runs the extractive answer (and the grounding module it imports) as they were at git
revision REV, for a before/after table (figures in docs/eval/xquad.md).

Usage: ``nice -n 10 .venv/bin/python benchmarks/research/extractive_languages.py --limit 300 --before 187a7db``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from shelfwise.core.answers.extractive import embedder_scorer, extract_answer, extract_text
from shelfwise.core.navigation.trace import Hit
from shelfwise.evaluation.run import shared_dir
from shelfwise.evaluation.xquad import languages, load_xquad
from shelfwise.ingest.model import Location

ROOT = Path(__file__).resolve().parents[2]


def old_extractive(rev: str):
    """``core/answers/extractive.py`` (with its ``grounding``) at ``rev``, imported as a module of its own."""
    tmp = Path(tempfile.mkdtemp())
    for name in ("grounding", "extractive"):
        src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:core/answers/{name}.py"], check=True,
                             capture_output=True, text=True).stdout
        src = src.replace("from shelfwise.core.answers.grounding import", "from old_grounding import")
        (tmp / f"old_{name}.py").write_text(src, encoding="utf-8")
    sys.path.insert(0, str(tmp))
    spec = importlib.util.spec_from_file_location("old_extractive", tmp / "old_extractive.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["old_extractive"] = mod
    spec.loader.exec_module(mod)
    return mod


def holds(answer: str, golds: list[str]) -> bool:
    low = answer.casefold()
    return any(g.strip() and g.strip().casefold() in low for g in golds)


def run(lang: str, limit: int, scorer, modules: dict) -> dict[str, float]:
    ds = load_xquad(shared_dir() / "evaldata" / "xquad", lang, limit=limit)
    text = {d.path: d.parsed.children[0].text for d in ds.documents}
    out: dict[str, float] = {}
    for name, mod in modules.items():
        ok = empty = 0
        ratio = 0.0
        for q in ds.questions:
            hit = Hit(node_id=1, document_id=1, text=text[q.gold[0].path], score=1.0, path=q.gold[0].path,
                      title="", heading_path=[], location=Location())
            sentences = mod.extract_answer(q.query, [hit], scorer)
            answer = mod.extract_text(sentences) if sentences else ""
            empty += not answer
            ok += holds(answer, q.answers)
            ratio += len(answer) / max(1, len(hit.text))
        out[f"{name}_holds_answer"] = round(ok / len(ds.questions), 3)
        out[f"{name}_empty"] = round(empty / len(ds.questions), 3)
        # how much of the paragraph the answer is: an answer that holds the whole paragraph "holds" every span
        out[f"{name}_share_of_paragraph"] = round(ratio / len(ds.questions), 3)
    out["questions"] = len(ds.questions)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--before", default="")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    from shelfwise.core.models.encoders.embedder import Embedder
    from shelfwise.core.settings import Settings

    settings = Settings()
    embedder = Embedder(settings.embedder_path, n_threads=settings.n_threads)  # as Shelf.embedder makes it
    scorer = embedder_scorer(embedder)
    now = sys.modules["shelfwise.core.answers.extractive"]
    assert now.extract_answer is extract_answer and now.extract_text is extract_text
    modules = {"now": now}
    if args.before:
        modules = {"before": old_extractive(args.before), **modules}
    result = {"embedder": embedder.model_id, "before": args.before, "languages": {}}
    for lang in languages(shared_dir() / "evaldata" / "xquad"):
        result["languages"][lang] = run(lang, args.limit, scorer, modules)
        print(lang, result["languages"][lang], flush=True)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
