"""The ``shelfwise`` command line: a thin click layer over the store and the engine.

This module is the entry point (``shelfwise = shelfwise.app.cli.main:main``): it adds every command module's
commands to the group. Each command lives in the module named after it (``ingest.py``, ``ask.py``, ``eval.py``...;
``calibrate.py`` holds ``calibrate`` and ``calibrate-adaptive``). Adding
commands from another module: create ``app/cli/<name>.py`` that does ::

    from shelfwise.app.cli.group import open_library

    @click.command("ask")
    @click.pass_context
    def ask_cmd(ctx: click.Context, ...) -> None:
        '''Answer a question.  Example: shelfwise ask "How do I claim travel meals?"'''
        shelf = open_library(ctx)

    COMMANDS = (ask_cmd,)

and add the module to :data:`COMMAND_MODULES` at the end of this file. Command modules import
:mod:`shelfwise.app.cli.group`, never this module, so the imports have no cycle. Import heavy dependencies
(llama.cpp, Qt) inside the command function, not at module level. Every command's help must contain an example
(``tests/test_cli.py`` checks).
"""

from __future__ import annotations

from shelfwise.app.cli import (
    app,
    ask,
    calibrate,
    chat,
    doctor,
    export,
    index,
    ingest,
    models,
    remove,
    search,
    status,
    tree,
)
from shelfwise.app.cli import eval as evaluate
from shelfwise.app.cli.group import main

COMMAND_MODULES = (ingest, remove, status, tree, search, index, ask, calibrate, evaluate, models, doctor, app, chat,
                   export)
for _module in COMMAND_MODULES:
    for _command in _module.COMMANDS:
        main.add_command(_command)

__all__ = ["main"]
