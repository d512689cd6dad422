"""The value shown first, re-chosen by the code on the path for the sentences an evaluation run showed (issue 48).

``shelfwise eval ... --answers`` writes, per question, the sentences it showed (``texts.extractive``, each passage's
sentences followed by its ``[n]``) and the value (``texts.short``). This script asks the ``short_answer`` of
whatever ``shelfwise`` is importable (this tree, or a frozen checkout through ``PYTHONPATH``) for a value from those
same sentences, and grades both as ``benchmarks/product/answers.py`` does (the value holds a gold answer as whole
words). So the code before a change and after it are compared on one walk's sentences: the span chosen from the
sentence, nothing else. It imports only what every release since the short answer has (``short_answer``), so it
runs on the code before too:

    .venv/bin/python benchmarks/research/short_replay.py ROWS.json --dataset xquad-en --out after.json
    PYTHONPATH=<shim of the frozen checkout> .venv/bin/python benchmarks/research/short_replay.py ROWS.json \\
        --dataset xquad-en --out before.json

The sentences of one passage are read back as one text (their boundaries are not in the rows), so a replayed value
can differ from what the run itself showed; the rows' own value is reported beside it. Rows written since session 23
keep the sentences as found and the walk's evidence (``evidence``: each sentence's cosine and lead, each passage's
cosine); those are replayed exactly, the evidence given to whatever code reads it. ``--kind yes_no`` replays the
rows whose gold is a yes or no instead.

Graded two ways: ``precision`` / ``short_contains_gold``, the value holds a gold answer as whole words (as
``answers.py``); ``right_when_shown`` / ``right_recall``, it holds one or lies within one (as ``short_tune.py`` and
``short_show.py`` grade the training data: "10 days" of "within 10 days" is right).

``--read`` (session 25): the bundled answer model also weighs the phrases for a thing, as ``ask`` does with
generation on; ``--show-all``: every value put first is shown (no gate), the ranker graded alone.

``--items FILE`` (written by ``short_tune.py --items-out``: the training questions with the sentence holding their
gold and the kind the new code reads) grades the code on the path on those instead: values shown, right when shown
(holds the gold or lies within it), recall, for the questions asking for a thing and for the rest.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import inspect
import json
import re
from pathlib import Path
from typing import Any

from shelfwise.core.answers.matching import answer_matches, normalize_answer

try:  # where short_answer is since session 23; a tree before it has it in short.py
    from shelfwise.core.answers.first_value import short_answer
except ImportError:
    from shelfwise.core.answers.short import short_answer  # type: ignore[no-redef]
from shelfwise.core.answers.types import Extracted

CITE = re.compile(r"(.*?)\s*\[(\d+)\](?:\s|$)", re.S)


def sentences_of(extractive: str) -> list[Extracted]:
    """The shown sentences back as :class:`Extracted`, in the order shown (the ranker's), one per ``[n]``."""
    found = [m for m in CITE.finditer(extractive) if m.group(1).strip()]
    return [Extracted(m.group(1).strip(), int(m.group(2)), 0, len(m.group(1).strip()), 1.0 - 0.01 * i)
            for i, m in enumerate(found)]


def questions(dataset: str) -> dict[str, str]:
    from shelfwise.evaluation.run import load_dataset

    if dataset.endswith(".jsonl"):  # a user's own questions (the sample's: resources/sample_questions.jsonl)
        from shelfwise.evaluation.datasets import load_jsonl

        return {q.qid: q.question for q in load_jsonl(Path(dataset))}
    name, _, rest = dataset.partition("-")
    if name == "xquad":  # xquad-de: German over German; xquad-de-en: the German questions over English paragraphs
        asked_in, _, lang = rest.partition("-")
        ds = load_dataset("xquad", lang=lang or asked_in, query_lang=asked_in)
    elif name == "conditionalqa":
        ds = load_dataset("conditionalqa", split=rest or "all")
    else:
        ds = load_dataset(name)
    return {q.qid: q.question for q in ds.questions}


_FIELDS = {f.name for f in dataclasses.fields(Extracted)}
_PASSAGES = "passages" in inspect.signature(short_answer).parameters
READS = "model" in inspect.signature(short_answer).parameters  # since session 25: the answer model reads phrases
OPTIONS: dict[str, Any] = {}  # what every short_answer call gets (``--read``: the model; ``--show-all``: no gate)


def sentences_kept(evidence: dict[str, Any]) -> list[Extracted]:
    """The sentences a run kept in its rows' ``evidence`` (since session 23), as whatever ``Extracted`` is
    importable takes them (a tree before session 23 takes no ``cosine`` or ``lead``)."""
    return [Extracted(**{k: v for k, v in s.items() if k in _FIELDS}) for s in evidence["sentences"]]


def value_of(question: str, row: dict[str, Any]) -> Any:
    """The value the code on the path shows for ``row``'s question and sentences: from the sentences and the walk's
    evidence the row kept when it kept them (read exactly), else from its shown text (see the module doc)."""
    if not row["found"]:
        return None
    kept = row.get("evidence")
    if kept and kept["sentences"]:
        extra = {"passages": kept["passages"]} if _PASSAGES else {}
        return short_answer(question, sentences_kept(kept), **extra, **OPTIONS)
    return short_answer(question, sentences_of(row["texts"]["extractive"]), **OPTIONS)


def replay(rows: list[dict[str, Any]], asked: dict[str, str], kinds: tuple[str, ...] = ("span",),
           facts: bool = False) -> dict[str, Any]:
    """``facts``: a value holds a free-text gold as ``fact_match`` grades (the sample's), else as whole words."""
    from shelfwise.evaluation.answer_modes import fact_match

    holds = fact_match if facts else answer_matches
    span = [r for r in rows if r["kind"] in kinds]
    out = []
    for r in span:
        got = value_of(asked[r["qid"]], r)
        value = got.text if got else ""
        out.append({"qid": r["qid"], "question": asked[r["qid"]], "gold": r["gold"], "value": value,
                    "holds": holds(value, r["gold"]) if value else False,
                    "right": any(right(value, g) for g in r["gold"]) if value else False,
                    "run_value": r["texts"].get("short", ""),
                    "run_holds": answer_matches(r["texts"].get("short", ""), r["gold"])
                    if r["texts"].get("short") else False,
                    "sentence_holds": answer_matches(r["texts"]["extractive"], r["gold"])})
    n = len(out) or 1
    shown = [x for x in out if x["value"]]
    return {"span_questions": len(out),
            "short_contains_gold": round(sum(x["holds"] for x in out) / n, 4),
            "value_shown": len(shown),
            "precision": round(sum(x["holds"] for x in shown) / (len(shown) or 1), 4),
            "right_when_shown": round(sum(x["right"] for x in shown) / (len(shown) or 1), 4),
            "right_recall": round(sum(x["right"] for x in out) / n, 4),
            "run_short_contains_gold": round(sum(x["run_holds"] for x in out) / n, 4),
            "sentence_contains_gold": round(sum(x["sentence_holds"] for x in out) / n, 4),
            "rows": out}


class CachedReadings:
    """The model's ``continuations``, kept per phrase (context, option) in ``path`` (a pickle): a second replay of
    the same rows (the gate off, ``--show-all``), or one whose candidates changed, reads only the phrases it has not
    read. ``seeds``: other such caches read first (session 25's, kept per whole batch, are taken apart)."""

    def __init__(self, model: Any, path: Path | None, seeds: tuple[Path, ...] = ()) -> None:
        import pickle

        self.model, self.path = model, path
        self.kept: dict[tuple[str, str], tuple[float, float]] = {}
        for p in (*seeds, *((path,) if path is not None else ())):
            if p.exists():
                for (context, option), got in pickle.loads(p.read_bytes()).items():
                    if isinstance(option, tuple):  # a whole batch (session 25's caches)
                        read = zip(option, got.total, got.mean, strict=True)
                        self.kept.update({(context, o): (t, m) for o, t, m in read})
                    else:
                        self.kept[(context, option)] = got

    def continuations(self, context: str, options: Any, *, cancel: Any = None) -> Any:
        from shelfwise.core.models.backend import Likelihoods

        need = [o for o in dict.fromkeys(options) if (context, o) not in self.kept]
        if need:
            got = self.model.continuations(context, need, cancel=cancel)
            self.kept.update({(context, o): (t, m) for o, t, m in zip(need, got.total, got.mean, strict=True)})
        read = [self.kept[(context, o)] for o in options]
        return Likelihoods(total=[t for t, _ in read], mean=[m for _, m in read], n_tokens=0)

    def save(self) -> None:
        import pickle

        if self.path is not None:
            self.path.write_bytes(pickle.dumps(self.kept))


def cost(rows: list[dict[str, Any]], asked: dict[str, str], model: Any) -> dict[str, Any]:
    """The seconds the model's reading adds to each question's value, side by side in one run: the value chosen by
    the ranker alone, then with ``model`` (loaded before, as ``ask`` with generation loads it anyway)."""
    import time

    per = []
    for r in rows:
        if r["qid"] not in asked or not r["found"]:
            continue
        OPTIONS.pop("model", None)
        t0 = time.perf_counter()
        alone = value_of(asked[r["qid"]], r)
        t1 = time.perf_counter()
        OPTIONS["model"] = model
        read = value_of(asked[r["qid"]], r)
        t2 = time.perf_counter()
        per.append({"question": asked[r["qid"]], "ranker_s": round(t1 - t0, 4), "read_s": round(t2 - t1, 4),
                    "added_s": round((t2 - t1) - (t1 - t0), 4), "alone": alone.text if alone else "",
                    "read": read.text if read else ""})
    added = sorted(p["added_s"] for p in per)
    return {"questions": len(per), "added_mean_s": round(sum(added) / max(len(added), 1), 4),
            "added_median_s": added[len(added) // 2] if added else 0.0, "added_max_s": max(added, default=0.0),
            "rows": per}


def right(pred: str, gold: str) -> bool:
    """A value that holds the gold or whose words all lie in it (as ``short_tune.py`` grades)."""
    p, g = normalize_answer(pred).split(), normalize_answer(gold).split()
    return bool(p) and (answer_matches(pred, [gold]) or not (collections.Counter(p) - collections.Counter(g)))


def grade_items(items: list[list[str]]) -> dict[str, Any]:
    groups: dict[str, list[int]] = {}
    for question, sentence, gold, kind in items:
        got = short_answer(question, [Extracted(sentence, 1, 0, len(sentence), 1.0)])
        value = got.text if got else ""
        group = "thing" if kind in ("name", "place", "list", "thing") else "value"
        for key in (group, "all"):
            g = groups.setdefault(key, [0, 0, 0])
            g[0] += 1
            g[1] += bool(value)
            g[2] += bool(value) and right(value, gold)
    return {k: {"questions": n, "shown": shown, "precision": round(ok / (shown or 1), 4), "recall": round(ok / n, 4)}
            for k, (n, shown, ok) in groups.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rows", type=Path, nargs="?", help="an evaluation run's answers-*.json")
    ap.add_argument("--dataset", help="xquad-en, xquad-de, xquad-de-en, squad, conditionalqa-test, ..., or a .jsonl "
                                      "of questions "
                                      "(graded by fact_match, as the sample's free-text golds)")
    ap.add_argument("--items", type=Path, help="training items from short_tune.py --items-out (instead of rows)")
    ap.add_argument("--kind", default="span", help="the rows' kind of gold: span (a value), or yes_no")
    ap.add_argument("--out", type=Path, default=Path("/tmp/short-replay.json"))
    ap.add_argument("--read", action="store_true", help="the answer model reads the phrases (as `ask` with "
                    "generation; the code on the path must take it: session 25 on)")
    ap.add_argument("--show-all", action="store_true", help="every value put first shown (no gate)")
    ap.add_argument("--cache", type=Path, help="with --read: keep the model's readings here (a rerun reads none)")
    ap.add_argument("--seed-cache", type=Path, nargs="*", default=[], help="with --read: readings kept by an "
                    "earlier replay, read first")
    ap.add_argument("--cost", action="store_true", help="with --read: the seconds the reading adds per question "
                    "(the ranker alone, then with the model, side by side)")
    args = ap.parse_args()
    if args.read:
        if not READS:
            ap.error("the code on the path takes no model")
        from shelfwise.core.models.llama.backend import LlamaBackend
        from shelfwise.core.paths import models_dir

        model = LlamaBackend(str(models_dir() / "gemma-3-270m-q4_k_m.gguf"), n_threads=2)
        OPTIONS["model"] = model if args.cost else CachedReadings(model, args.cache, tuple(args.seed_cache))
    if args.show_all:
        from shelfwise.core.answers.short_confidence import SHOW_ALL

        OPTIONS["show"] = SHOW_ALL
    if args.items:
        graded = grade_items(json.loads(args.items.read_text()))
        args.out.write_text(json.dumps(graded, indent=1))
        print(json.dumps(graded))
        return
    if args.rows is None or not args.dataset:
        ap.error("give ROWS and --dataset, or --items")
    if args.cost:
        measured = cost(json.loads(args.rows.read_text())["rows"], questions(args.dataset), OPTIONS["model"])
        args.out.write_text(json.dumps(measured, indent=1))
        print(json.dumps({k: v for k, v in measured.items() if k != "rows"}))
        return
    result = replay(json.loads(args.rows.read_text())["rows"], questions(args.dataset), (args.kind,),
                    facts=args.dataset.endswith(".jsonl"))
    args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}))
    if isinstance(OPTIONS.get("model"), CachedReadings):
        OPTIONS["model"].save()


if __name__ == "__main__":
    main()
