"""``shelfwise eval``: navigation against BM25, dense retrieval and the rerank control on public datasets or your
own questions, and (``--answers``) the answers per mode; on a file of dialogues, each turn's reading. The
options become an ``EvalRequest``; ``run`` (``evaluation/command.py``) runs it and writes the reports;
this prints them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from shelfwise.app.cli.group import JUDGE_OPTION, READOUTS, err, settings_for
from shelfwise.app.cli.shown import raw_stream


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
    from shelfwise.evaluation.command import EvalError, EvalRequest, EvalUsageError, run

    request = EvalRequest(
        dataset, collection=collection, limit=limit, methods=tuple(m.strip() for m in methods.split(",") if m.strip()),
        split=split, lang=lang, query_lang=query_lang, sweep=not no_sweep, fit_prior=fit_prior,
        calibrate=not no_calibrate, calibrate_lm=calibrate_lm, answers=answers, out=out, readout=readout,
        rank_fit=rank_fit, generate=generate, judge=judge)
    bar = None
    state = {"done": 0}

    def progress(done: int, total: int, name: str) -> None:
        nonlocal bar
        if bar is None:
            bar = click.progressbar(length=total, label="evaluating", file=raw_stream(sys.stderr))
            bar.__enter__()
        bar.update(done - state["done"])
        state["done"] = done

    try:
        outcome = run(request, settings_for(ctx), progress=progress, log=err)
    except EvalUsageError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.param_hint) from exc
    except EvalError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    if as_json:
        click.echo(json.dumps(outcome.result, indent=1))
    else:
        click.echo(outcome.markdown)
        if outcome.answers is not None:
            click.echo(json.dumps(outcome.answers, indent=1))
    err("reports: " + ", ".join(str(p) for p in outcome.paths))


COMMANDS = (eval_cmd,)
