"""``shelfwise eval``: navigation against BM25, dense retrieval and the rerank control on public datasets or your
own questions, and (``--answers``) the answers per mode; on a file of dialogues, each turn's reading
(:func:`eval_dialogues`)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import click

from shelfwise.app.cli.group import JUDGE_OPTION, READOUTS, err, settings_for
from shelfwise.app.cli.shown import raw_stream
from shelfwise.core.settings import DEFAULT_EMBEDDER, Budgets


@click.command("eval")
@click.argument("dataset")
@click.option("--collection", default="default", show_default=True,
              help="For a .jsonl of your own questions: the collection of your library they are about.")
@click.option("--limit", type=int, default=None, help="Only the first N questions (spread out for SQuAD).")
@click.option("--methods", default="bm25,dense,hybrid,rrf,rerank_control,navigation",
              show_default=True, help="Comma-separated: bm25, dense, hybrid, rrf, rerank_control, navigation, "
              "navigation_<readout>.")
@click.option("--split", type=click.Choice(["tune", "test", "all"]), default=None,
              help="ConditionalQA's questions by guide: test (the default; where figures are reported), tune "
                   "(where choices are made) or all. Retrieval always runs over all 59 guides.")
@click.option("--lang", default=None,
              help="xquad: the language of the paragraphs (de, zh, ...; every xquad.<lang>.json present). Default en.")
@click.option("--query-lang", default=None,
              help="xquad: the language of the questions (default: --lang); e.g. --query-lang en --lang de asks the "
                   "English questions over the German paragraphs.")
@click.option("--readout", type=READOUTS, default=None, help="Readout of the 'navigation' method.")
@click.option("--no-sweep", is_flag=True, help="Skip the first-level budget sweep.")
@click.option("--fit-prior", is_flag=True,
              help="Re-derive the decision model's prior weights and the hybrid weight (conditionalqa --split tune "
                   "only); written to the report's JSON.")
@click.option("--no-calibrate", is_flag=True, help="Use the prior decision weights (no self-calibration).")
@click.option("--rank-fit", is_flag=True,
              help="Let self-calibration refit the ranking on probes (off by default; see `calibrate --rank-fit`).")
@click.option("--calibrate-lm", is_flag=True,
              help="Let self-calibration try the generative model's readout too (slow: ~1k tokens per probe).")
@click.option("--answers", is_flag=True,
              help="Also evaluate the answers per mode: extractive, generated, grounded-generated, shown.")
@click.option("--generate/--no-generate", default=None,
              help="With --answers: let the model write answers too (default) or score the extractive answer only.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("reports"),
              show_default=True, help="Folder for the Markdown, JSON and PNG report.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with every method's figures.")
@JUDGE_OPTION
@click.pass_context
def eval_cmd(ctx: click.Context, dataset: str, collection: str, limit: int | None, methods: str,
             readout: str | None,
             no_sweep: bool, no_calibrate: bool, calibrate_lm: bool, answers: bool, out: Path,
             as_json: bool, split: str | None, fit_prior: bool, rank_fit: bool, generate: bool | None,
             judge: str | None, lang: str | None, query_lang: str | None) -> None:
    """Evaluate navigation against BM25, dense retrieval and the rerank control.

    DATASET is conditionalqa, squad, xquad (with --lang / --query-lang), traindata:SET (covidqa, medquad, pubmedqa,
    orsharc: a training set as a collection, for tuning only), or a .jsonl file of your own questions
    about your library (one object per line: {"question": ..., "file": "handbook.pdf", "evidence": "a sentence of
    the gold passage", "answer": ...}).

    \b
    Example:
        shelfwise eval conditionalqa --split test --json
        shelfwise eval squad --limit 200
        shelfwise eval traindata:covidqa --limit 300
        shelfwise eval xquad --lang de --limit 300
        shelfwise eval xquad --query-lang en --lang de
        shelfwise eval resources/sample_questions.jsonl --collection default
    """
    if dataset not in ("conditionalqa", "squad", "xquad") and not dataset.endswith(".jsonl") \
            and not dataset.startswith("traindata:"):
        raise click.BadParameter("use conditionalqa, squad, xquad, traindata:SET or a .jsonl file",
                                 param_hint="DATASET")
    from shelfwise.core.evaluation.dialogues import is_dialogue_file

    if is_dialogue_file(dataset):  # multi-turn: {"turns": [...]} per line
        eval_dialogues(ctx, dataset, collection, split or "all", out, as_json)
        return
    if dataset == "xquad":
        from shelfwise.core.evaluation.run import shared_dir
        from shelfwise.core.evaluation.xquad import languages

        present = languages(shared_dir() / "evaldata" / "xquad")
        for hint, value in (("--lang", lang), ("--query-lang", query_lang)):
            if value is not None and value not in present:
                raise click.BadParameter(f"{value!r} is not one of the XQuAD languages present: "
                                         f"{', '.join(present) or 'none'}", param_hint=hint)
    elif lang or query_lang:
        raise click.BadParameter("only xquad has languages", param_hint="--lang")
    if split is None:
        split = "test" if dataset == "conditionalqa" else "all"
    elif split != "all" and dataset != "conditionalqa":
        raise click.BadParameter("only conditionalqa has a tune/test split", param_hint="--split")
    from shelfwise.core.evaluation.run import run_eval, write_reports
    from shelfwise.core.shelf import Shelf

    settings = settings_for(ctx, readout=readout, budgets=Budgets(passages=10), rank_fit=rank_fit,
                            answer_generate=generate, judge=judge)
    if not dataset.endswith(".jsonl") and settings.embedder_path is None:
        # a public dataset is measured with what a new library gets, whatever the user's own library uses
        settings = replace(settings, embedder_path=DEFAULT_EMBEDDER)
    names = [m.strip() for m in methods.split(",") if m.strip()]
    with Shelf(settings) as shelf:
        bar = None
        state = {"done": 0}

        def progress(done: int, total: int, name: str) -> None:
            nonlocal bar
            if bar is None:
                bar = click.progressbar(length=total, label="evaluating", file=raw_stream(sys.stderr))
                bar.__enter__()
            bar.update(done - state["done"])
            state["done"] = done

        own_db = settings.db_path if dataset.endswith(".jsonl") else None
        report = run_eval(dataset, limit=limit, methods=names, embedder=shelf.embedder, db_path=own_db,
                          collection=collection,
                          backend=shelf.backend if any(n in ("navigation", "rerank_control", "navigation_fused",
                                                             "navigation_likelihood", "navigation_binary")
                                                       for n in names) else None,
                          settings=settings, sweep=not no_sweep, progress=progress, log=err,
                          calibrate=not no_calibrate, calibrate_lm=calibrate_lm, split=split,
                          fit_prior=fit_prior, judge=shelf.judge, lang=lang, query_lang=query_lang)
        if bar is not None:
            bar.__exit__(None, None, None)
        result = report.to_json()
        if answers:
            from shelfwise.core.evaluation.answers import run_answer_eval_cli

            result["answers"] = run_answer_eval_cli(shelf.walk, dataset, limit=limit, log=err, split=split,
                                                    collection=collection)
        paths = write_reports(report, out)
        if answers:  # every question's texts and verdicts beside the report; the summary in the output
            rows_path = out / f"answers-{Path(dataset).stem}-{split}.json"
            rows_path.write_text(json.dumps(result["answers"], indent=1, ensure_ascii=False), encoding="utf-8")
            paths = [*paths, rows_path]
            result["answers"] = {k: v for k, v in result["answers"].items() if k != "rows"}
        if as_json:
            click.echo(json.dumps(result, indent=1))
        else:
            click.echo(report.markdown())
            if answers:
                click.echo(json.dumps(result["answers"], indent=1))
        err("reports: " + ", ".join(str(p) for p in paths))


def eval_dialogues(ctx: click.Context, dataset: str, collection: str, split: str, out: Path, as_json: bool) -> None:
    """``shelfwise eval DIALOGUES.jsonl``: per turn position and kind, passage / section / document Hit@1 of the
    question alone, the naive concatenation of every turn, and what ships; report files under ``out``."""
    from shelfwise.core.evaluation.dialogues import GoldError, markdown, run_dialogue_eval
    from shelfwise.core.shelf import Shelf

    with Shelf(settings_for(ctx, answer_generate=False)) as shelf:
        try:
            report = run_dialogue_eval(shelf.walk, dataset, collection=collection, split=split, log=err)
        except GoldError as exc:
            raise click.ClickException(str(exc)) from exc
    out.mkdir(parents=True, exist_ok=True)
    stem = f"dialogues-{Path(dataset).stem}-{split}"
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    (out / f"{stem}.md").write_text(markdown(report) + "\n", encoding="utf-8")
    if as_json:
        click.echo(json.dumps({k: v for k, v in report.items() if k != "rows"}, indent=1))
    else:
        click.echo(markdown(report))
    err(f"reports: {out / (stem + '.json')}, {out / (stem + '.md')}")


COMMANDS = (eval_cmd,)
