"""``shelfwise calibrate``: fit the decision model and the per-level budgets on probes made from your documents;
``shelfwise calibrate-adaptive``: fit adaptive retrieval's threshold on labelled questions and export training data
(DeepRAG's tree search, ``core/answers/adaptive_search.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from shelfwise.app.cli.group import CliState, err, require_library, settings_for
from shelfwise.app.cli.shown import json_text


@click.command("calibrate")
@click.option("--collection", default="default", show_default=True)
@click.option("--probes", type=int, default=240, show_default=True, help="Probe queries made from the documents.")
@click.option("--target-recall", type=float, default=0.95, show_default=True,
              help="Recall of the gold branch each level's budget must reach on the probes.")
@click.option("--rank-fit", is_flag=True,
              help="Let the probes refit the ranking (toward the prior); off by default: probe-fitted rankings lost "
                   "on real questions (docs/eval/attempts.md).")
@click.option("--lm", "use_lm", is_flag=True,
              help="Also try the generative model's readout (slow: ~1k tokens per probe, and the model's memory); "
                   "by default calibration uses the embedder and lexical evidence, as the one inside ingest does.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def calibrate_cmd(ctx: click.Context, collection: str, probes: int, target_recall: float, rank_fit: bool,
                  use_lm: bool, as_json: bool) -> None:
    """Fit the decision model and the per-level budgets on probe queries made from your own documents.

    Progress goes to stderr: redrawn on a terminal, a line per tenth otherwise.

    \b
    Example:
        shelfwise calibrate --collection default
        shelfwise calibrate --lm --probes 60
    """
    from shelfwise.app.cli.progress import IndexLine
    from shelfwise.core.api.indexing import IndexProgress
    from shelfwise.core.shelf import Shelf

    require_library(ctx)
    with Shelf(settings_for(ctx, rank_fit=rank_fit)) as shelf:
        coll = shelf.find_collection(collection)
        if coll is None:
            err(f"No collection {collection!r}.")
            sys.exit(2)
        line = IndexLine()
        shelf.refresh(collection, progress=line)
        if shelf.state.read_only:
            raise click.ClickException(f"cannot calibrate: {shelf.state.why_read_only}")

        def progress(done: int, total: int) -> None:
            line(IndexProgress("calibrating", done, total, None))

        model = shelf.calibrate(collection, use_lm=use_lm, probes=probes, target_recall=target_recall,
                                progress=progress)
        line.finish()
        if as_json:
            click.echo(json.dumps(model.report, indent=1))
        else:
            for kind, info in model.report.get("levels", {}).items():
                click.echo(f"{kind:<9} rows={info['rows']:<6} ranking={info['ranking']} "
                           f"held-out probe MRR={info['heldout_probe_mrr'] or '-'} "
                           f"keep={info['keep_for_target']} lm={info['uses_lm']}")


@click.command("calibrate-adaptive")
@click.option("--qa", "qa_file", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help='JSON Lines, one labelled question per line: {"question": "...", "answer": "..." (or a list '
              'of accepted answers), "collection": "..." (optional)}.')
@click.option("--collection", "-c", default="default", show_default=True,
              help="Collection for questions that do not name one.")
@click.option("--max-sub", type=click.IntRange(1, 6), default=3, show_default=True,
              help="Most sub-questions per question.")
@click.option("--max-expansions", type=click.IntRange(1, 256), default=16, show_default=True,
              help="Most tree-search expansions per question.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Only the first N questions.")
@click.option("--dry-run", is_flag=True, help="Fit, but do not store the threshold.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def calibrate_adaptive_cmd(ctx: click.Context, qa_file: Path, collection: str, max_sub: int,
                           max_expansions: int, limit: int | None, dry_run: bool, as_json: bool) -> None:
    """Find the cheapest correct trajectory of each labelled question, fit the retrieve/answer threshold of
    adaptive retrieval (stored per model in the library).

    Each question is split into sub-questions; a best-first search over "answer from the model" vs "retrieve,
    then answer" per sub-question finds the trajectory with the fewest retrievals whose final answer matches the
    gold (normalised; exact or contained). The threshold on P(retrieve) that best reproduces those choices is
    stored. (Training data from the same search: training/adaptive_export.py, outside the product.)

    \b
    Example:
        shelfwise calibrate-adaptive --qa labelled.jsonl --collection handbooks
    """
    from shelfwise.core.api.indexing import load_qa
    from shelfwise.core.settings import Settings
    from shelfwise.core.shelf import Shelf

    try:
        items = load_qa(qa_file)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    items = items[:limit] if limit else items
    if not items:
        raise click.UsageError(f"{qa_file} has no questions.")
    state = ctx.find_object(CliState)
    db = state.db if state is not None and state.db is not None else None
    if db is None:
        from shelfwise.core.paths import default_db

        db = default_db()
    with Shelf(Settings(db_path=Path(db))) as shelf:
        names = {c.name for c in shelf.collections()}
        for name in {it.collection or collection for it in items}:
            if name not in names:
                raise click.UsageError(f"No collection named {name!r}. Ingest documents first.")
            shelf.refresh(name)

        def progress(done: int, total: int, outcome) -> None:
            mark = "solved" if outcome.solved else "unsolved"
            click.echo(f"[{done}/{total}] {mark:<8} retrievals={outcome.tree.retrievals} "
                       f"{outcome.seconds:.1f}s  {outcome.item.question[:70]}", err=True)

        report = shelf.calibrate_adaptive(items, collection, max_sub=max_sub, max_expansions=max_expansions,
                                          save=not dry_run, progress=progress)
    if as_json:
        click.echo(json_text(report.to_json(), indent=1))
        return
    click.echo(f"{report.solved}/{report.questions} questions solved, {report.mean_retrievals} retrievals each "
               f"on average ({report.seconds:.0f} s)")
    if report.threshold is None:
        click.echo("No correct trajectory found: threshold unchanged "
                   f"({report.previous_threshold}).")
    else:
        verb = "stored" if report.saved else "not stored (--dry-run)"
        click.echo(f"Threshold for {report.model}: {report.threshold:.4f} ({verb}; was "
                   f"{report.previous_threshold}), agreement {report.agreement:.0%} on {report.pairs} decisions")
    sys.stdout.flush()


COMMANDS = (calibrate_cmd, calibrate_adaptive_cmd)
