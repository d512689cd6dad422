"""``shelfwise eval`` as one call: check the options against the dataset, run the evaluation (retrieval methods,
``answers`` per mode, or a file of dialogues turn by turn), write the reports and return what the command prints.
:func:`run` (what ``shelfwise eval`` calls) opens the library and its models through the facade and calls
:func:`evaluate` with them; the command only parses its options and renders the :class:`EvalOutcome`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shelfwise.core.json_types import JSONObject
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.settings import Settings

DATASETS = "use conditionalqa, squad, xquad, traindata:SET or a .jsonl file"
LM_METHODS = ("navigation", "rerank_control", "navigation_fused", "navigation_likelihood", "navigation_binary")


class EvalUsageError(ValueError):
    """An option that does not fit the dataset; ``param_hint`` names the option (``--lang``, ``DATASET``...)."""

    def __init__(self, message: str, param_hint: str) -> None:
        super().__init__(message)
        self.param_hint = param_hint


class EvalError(RuntimeError):
    """The evaluation cannot run as asked (a dialogue file whose gold is not in the library)."""


@dataclass(frozen=True)
class EvalRequest:
    """What ``shelfwise eval`` was asked (its options, parsed)."""

    dataset: str
    collection: str = "default"
    limit: int | None = None
    methods: tuple[str, ...] = ("bm25", "dense", "hybrid", "rrf", "rerank_control", "navigation")
    split: str | None = None  # None: test for conditionalqa, all otherwise
    lang: str | None = None
    query_lang: str | None = None
    sweep: bool = True
    fit_prior: bool = False
    calibrate: bool = True
    calibrate_lm: bool = False
    answers: bool = False
    out: Path = Path("reports")
    # what the navigation method runs with (None: the user's settings); a file of dialogues ignores them
    readout: str | None = None
    rank_fit: bool = False
    generate: bool | None = None
    judge: str | None = None

    @property
    def dialogues(self) -> bool:
        """A file of dialogues (``{"turns": [...]}`` per line): evaluated turn by turn."""
        from shelfwise.evaluation.dialogues import is_dialogue_file

        return is_dialogue_file(self.dataset)

    @property
    def public(self) -> bool:
        """A public dataset (measured with what a new library gets), not a user's own .jsonl."""
        return not self.dataset.endswith(".jsonl")

    @property
    def uses_model(self) -> bool:
        """Whether a method asks the generative model."""
        return any(n in LM_METHODS for n in self.methods)


@dataclass(frozen=True)
class EvalOutcome:
    """What ``shelfwise eval`` prints: ``result`` with ``--json``, else ``markdown`` (and ``answers``); ``paths``
    the report files written."""

    result: JSONObject
    markdown: str
    paths: list[Path]
    answers: JSONObject | None = None  # the answers' summary (``--answers``), printed after the Markdown


def checked(request: EvalRequest) -> EvalRequest:
    """``request`` with its split resolved; EvalUsageError when an option does not fit the dataset."""
    from dataclasses import replace

    dataset = request.dataset
    if dataset not in ("conditionalqa", "squad", "xquad") and not dataset.endswith(".jsonl") \
            and not dataset.startswith("traindata:"):
        raise EvalUsageError(DATASETS, "DATASET")
    if request.dialogues:
        return replace(request, split=request.split or "all")
    if dataset == "xquad":
        from shelfwise.evaluation.run import shared_dir
        from shelfwise.evaluation.xquad import languages

        present = languages(shared_dir() / "evaldata" / "xquad")
        for hint, value in (("--lang", request.lang), ("--query-lang", request.query_lang)):
            if value is not None and value not in present:
                raise EvalUsageError(f"{value!r} is not one of the XQuAD languages present: "
                                     f"{', '.join(present) or 'none'}", hint)
    elif request.lang or request.query_lang:
        raise EvalUsageError("only xquad has languages", "--lang")
    if request.split is None:
        return replace(request, split="test" if dataset == "conditionalqa" else "all")
    if request.split != "all" and dataset != "conditionalqa":
        raise EvalUsageError("only conditionalqa has a tune/test split", "--split")
    return request


def settings_for_request(request: EvalRequest, base: Settings) -> Settings:
    """The settings ``request`` runs with over the user's ``base``: a file of dialogues with generation off; else
    the command's options, ten passages, and for a public dataset the encoder a new library gets unless one was
    named (a public dataset is measured with what a new library gets, whatever the user's own library uses)."""
    from dataclasses import replace

    from shelfwise.core.settings import DEFAULT_EMBEDDER, Budgets, as_readout

    if request.dialogues:
        return replace(base, answer_generate=False)
    settings = replace(base, budgets=Budgets(passages=10), rank_fit=request.rank_fit)
    if request.readout is not None:
        settings = replace(settings, readout=as_readout(request.readout))
    if request.generate is not None:
        settings = replace(settings, answer_generate=request.generate)
    if request.judge is not None:
        settings = replace(settings, judge=request.judge)
    if request.public and settings.embedder_path is None:
        settings = replace(settings, embedder_path=DEFAULT_EMBEDDER)
    return settings


def evaluate(request: EvalRequest, library: LibraryWalk, settings: Settings, *,
             progress: Callable[[int, int, str], None] | None = None,
             log: Callable[[str], None] = print) -> EvalOutcome:
    """Run the checked ``request`` with ``settings`` over ``library`` (the facade's walk: its store and models),
    write the reports under ``request.out`` and return what to print."""
    if request.dialogues:
        return _dialogues(request, library, log)
    from shelfwise.evaluation.run import run_eval, write_reports

    split = request.split or "all"
    report = run_eval(request.dataset, limit=request.limit, methods=list(request.methods),
                      embedder=library.embedder, db_path=None if request.public else settings.db_path,
                      collection=request.collection, backend=library.backend if request.uses_model else None,
                      settings=settings, sweep=request.sweep, progress=progress, log=log,
                      calibrate=request.calibrate, calibrate_lm=request.calibrate_lm, split=split,
                      fit_prior=request.fit_prior, judge=library.judge, lang=request.lang,
                      query_lang=request.query_lang)
    result = report.to_json()
    answers: JSONObject | None = None
    if request.answers:
        from shelfwise.evaluation.answers import run_answer_eval_cli

        answers = run_answer_eval_cli(library, request.dataset, limit=request.limit, log=log, split=split,
                                      collection=request.collection, lang=request.lang,
                                      query_lang=request.query_lang)
    paths = write_reports(report, request.out)
    if answers is not None:  # every question's texts and verdicts beside the report; the summary in the output
        rows_path = request.out / f"answers-{Path(request.dataset).stem}-{split}.json"
        rows_path.write_text(json.dumps(answers, indent=1, ensure_ascii=False), encoding="utf-8")
        paths = [*paths, rows_path]
        answers = {k: v for k, v in answers.items() if k != "rows"}
        result["answers"] = answers
    return EvalOutcome(result, report.markdown(), paths, answers)


def _dialogues(request: EvalRequest, library: LibraryWalk, log: Callable[[str], None]) -> EvalOutcome:
    """Per turn position and kind, passage / section / document Hit@1 of the question alone, the naive
    concatenation of every turn, and what ships; report files under ``request.out``."""
    from shelfwise.evaluation.dialogues import GoldError, markdown, run_dialogue_eval

    split = request.split or "all"
    try:
        report = run_dialogue_eval(library, request.dataset, collection=request.collection, split=split, log=log)
    except GoldError as exc:
        raise EvalError(str(exc)) from exc
    out = request.out
    out.mkdir(parents=True, exist_ok=True)
    stem = f"dialogues-{Path(request.dataset).stem}-{split}"
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    text = markdown(report)
    (out / f"{stem}.md").write_text(text + "\n", encoding="utf-8")
    return EvalOutcome({k: v for k, v in report.items() if k != "rows"}, text,
                       [out / f"{stem}.json", out / f"{stem}.md"])


def run(request: EvalRequest, settings: Settings, *, progress: Callable[[int, int, str], None] | None = None,
        log: Callable[[str], None] = print) -> EvalOutcome:
    """``shelfwise eval``: ``request`` checked against its dataset (EvalUsageError naming the option), run with the
    user's ``settings`` and the request's options over a :class:`~shelfwise.core.shelf.Shelf` of its own (a file
    of dialogues turn by turn; EvalError when its gold is not in the library), the reports written; returns what
    to print. The evaluation is a client of the facade: the core never imports it."""
    from shelfwise.core.shelf import Shelf

    request = checked(request)
    run_with = settings_for_request(request, settings)
    with Shelf(run_with) as shelf:
        return evaluate(request, shelf.walk, run_with, progress=progress, log=log)
