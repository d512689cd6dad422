"""``shelfwise app``: open the window (``app/gui/main.py``)."""

from __future__ import annotations

import sys

import click

from shelfwise.app.cli.group import CliState


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


COMMANDS = (app_cmd,)
