"""Written answers against gold answers: no retrieval vs always retrieve vs adaptive (DeepRAG), side by side.

``run_answer_eval`` answers each question three ways and scores the text (citations stripped; "Not found in your
documents." counts as an empty answer) with SQuAD's answer normalisation (lower case, no punctuation, no articles
"a/an/the", single spaces): **exact match** and token **F1**, each the maximum over the question's gold answers;
plus the mean number of retrievals (tree walks) per question, tokens evaluated and seconds.

Strategies:
- ``no_retrieval``: the model's closed-book answer (``closed_book.txt``), 0 retrievals;
- ``always_retrieve``: :func:`~shelfwise.core.answers.ask.answer_question` as the app answers by default,
  1 retrieval;
- ``adaptive``: ``answer_question(adaptive=True)``: one retrieval per sub-question the decision sends to the tree.

``always_retrieve`` and ``adaptive`` score the answer the app shows (the model's when it passed the grounding check,
else the extracted sentence). ``shelfwise eval conditionalqa --answers`` calls :func:`run_answer_eval_cli`, which
scores the answer modes (:mod:`shelfwise.evaluation.answer_modes`); ConditionalQA's ``query`` is the scenario
followed by the question, its gold ``answers`` short spans or yes/no.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from shelfwise.core.answers.answer import NOT_FOUND_TEXT, stream
from shelfwise.core.answers.ask import answer_question
from shelfwise.core.answers.matching import exact_match, f1_score
from shelfwise.core.json_types import JSONObject
from shelfwise.core.models.backend import DecisionBackend
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.store.db import Store
from shelfwise.evaluation.datasets import EvalQuestion, EvalSet

STRATEGIES = ("no_retrieval", "always_retrieve", "adaptive")


# --------------------------------------------------------------------------- running
@dataclass
class StrategyResult:
    name: str
    metrics: dict[str, float]
    per_query: list[JSONObject] = field(default_factory=list)


@dataclass
class AnswerEvalReport:
    questions: int
    strategies: dict[str, StrategyResult]
    seconds: float = 0.0

    def to_json(self) -> JSONObject:
        return {"questions": self.questions, "seconds": round(self.seconds, 1),
                "strategies": {k: v.metrics for k, v in self.strategies.items()}}

    def markdown(self) -> str:
        cols = ["exact_match", "f1", "retrievals_per_question", "found_rate", "tokens_per_question",
                "seconds_per_question"]
        lines = [f"## Answers ({self.questions} questions)", "", "| strategy | " + " | ".join(cols) + " |",
                 "|---" * (len(cols) + 1) + "|"]
        for name, res in self.strategies.items():
            lines.append(f"| {name} | " + " | ".join(str(res.metrics.get(c, "")) for c in cols) + " |")
        return "\n".join(lines) + "\n"


def closed_book_answer(backend: DecisionBackend, question: str) -> tuple[str, int]:
    """The model's own answer (no documents) and the tokens it cost."""
    from shelfwise.core.answers.adaptive import CLOSED_BOOK_TOKENS, closed_book_prompt

    context, part = closed_book_prompt(question)
    gen = stream(backend, context + part, max_tokens=CLOSED_BOOK_TOKENS, stop=("\n",))
    return gen.text.strip(), gen.cost.tokens


def _questions(eval_set: EvalSet | Sequence[EvalQuestion]) -> list[EvalQuestion]:
    return list(eval_set.questions if isinstance(eval_set, EvalSet) else eval_set)


def run_answer_eval(
    library: LibraryWalk, eval_set: EvalSet | Sequence[EvalQuestion], strategies: Sequence[str] = STRATEGIES,
    limit: int | None = None, *, collection: str | None = None, progress: Callable[[int, int, str], None] | None = None,
) -> AnswerEvalReport:
    """Answer every question (``EvalSet`` or a list of ``EvalQuestion``: ``query``, ``answers``) with each
    strategy and score it. ``library`` is a shelf's ``walk``, or a walk over
    another open store (``LibraryWalk(store, models, collection=...)``)."""
    t0 = time.perf_counter()
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise ValueError(f"unknown strategies {unknown}: use {', '.join(STRATEGIES)}")
    questions = [q for q in _questions(eval_set) if q.answers][: limit or None]
    results: dict[str, StrategyResult] = {}
    total, done = len(questions) * len(strategies), 0
    for name in strategies:
        rows = []
        for q in questions:
            t = time.perf_counter()
            retrievals, found = 0, True
            if name == "no_retrieval":
                text, tokens = closed_book_answer(library.backend, q.query)
            else:
                ans = answer_question(library, q.query, collection=collection, adaptive=name == "adaptive")
                # what the app shows as the answer: the model's when it passed the checks, else the value asked
                # for, else the extracted sentence(s) (answer_modes.py scores each mode separately)
                short = ans.short.text if ans.found and ans.short is not None else ""
                text, tokens, found = ans.generated or short or ans.text, ans.tokens, ans.found
                retrievals = (sum(s.source == "documents" for s in ans.steps) if name == "adaptive" else 1)
            pred = "" if text == NOT_FOUND_TEXT else text
            rows.append({"qid": q.qid, "prediction": pred, "gold": list(q.answers),
                         "exact_match": exact_match(pred, q.answers), "f1": f1_score(pred, q.answers),
                         "retrievals": retrievals, "found": float(found), "tokens": tokens,
                         "seconds": time.perf_counter() - t})
            done += 1
            if progress is not None:
                progress(done, total, name)
        results[name] = StrategyResult(name, summarise(rows), rows)
    return AnswerEvalReport(len(questions), results, time.perf_counter() - t0)


def summarise(rows: Sequence[JSONObject]) -> dict[str, float]:
    if not rows:
        return {"questions": 0}

    def mean(key: str) -> float:
        return statistics.fmean(float(r[key]) for r in rows)

    return {
        "exact_match": round(mean("exact_match"), 4), "f1": round(mean("f1"), 4),
        "retrievals_per_question": round(mean("retrievals"), 3), "found_rate": round(mean("found"), 3),
        "tokens_per_question": round(mean("tokens"), 1), "seconds_per_question": round(mean("seconds"), 2),
        "questions": len(rows),
    }


def run_answer_eval_cli(library: LibraryWalk, dataset: str, *, limit: int | None = None, db_path: Path | None = None,
                        log: Callable[[str], None] | None = None, split: str = "all",
                        collection: str | None = None, lang: str | None = None,
                        query_lang: str | None = None) -> JSONObject:
    """For ``shelfwise eval DATASET --answers``: every answer mode (:mod:`~shelfwise.evaluation.answer_modes`)
    on the evaluation collection ``run_eval`` built (its database under the data dir unless ``db_path``), the
    library's models. ConditionalQA: the ``split`` half's span, yes/no and not-answerable questions (the first
    ``limit`` when given). SQuAD, XQuAD (``lang`` / ``query_lang``): their questions with a gold answer, as
    ``run_eval`` loaded them. A ``.jsonl`` file of labelled questions: its questions over ``collection`` on the
    library's own library."""
    from shelfwise.core.paths import data_dir
    from shelfwise.evaluation.answer_modes import markdown, run_mode_eval
    from shelfwise.evaluation.datasets import load_conditionalqa, load_jsonl
    from shelfwise.evaluation.run import EVAL_DB_VERSION, load_dataset, shared_dir

    def progress(done: int, total: int) -> None:
        if log is not None and (done % 10 == 0 or done == total):
            log(f"answers: {done}/{total}")

    if dataset.endswith(".jsonl"):
        questions = load_jsonl(Path(dataset))[: limit or None]
        report = run_mode_eval(library, questions, collection=collection, progress=progress)
    else:
        if dataset in ("conditionalqa", "conditionalqa_dev"):
            ds = load_conditionalqa(shared_dir() / "evaldata" / "conditionalqa_dev", answerable_only=False,
                                    split=split)
            questions = [q for q in ds.questions if q.answers or q.not_answerable][: limit or None]
        else:  # the set run_eval walked (its questions, its collection), not ConditionalQA's
            ds = load_dataset(dataset, limit, split=split, lang=lang, query_lang=query_lang)
            questions = [q for q in ds.questions if q.answers]
        store = Store(db_path or data_dir() / "eval" / f"{ds.store_name}-v{EVAL_DB_VERSION}.db")
        try:
            parts = LibraryWalk(store, library.models, collection=ds.store_name)
            report = run_mode_eval(parts, questions, collection=ds.store_name, progress=progress)
        finally:
            store.close()
    if log is not None:
        log(markdown(report))
    return {"modes": report.metrics, "split": split,
            "rows": [{k: v for k, v in r.items()} for r in report.rows]}
