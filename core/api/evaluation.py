"""``shelfwise eval`` as one call: the request checked, run over a library opened for it, the reports written.
The one place the core imports ``core/evaluation`` (its ``command`` module; the evaluation itself when
:func:`evaluate` runs)."""

from __future__ import annotations

from collections.abc import Callable

from shelfwise.core.evaluation.command import EvalError, EvalOutcome, EvalRequest, EvalUsageError
from shelfwise.core.settings import Settings

__all__ = ["EvalError", "EvalOutcome", "EvalRequest", "EvalUsageError", "evaluate"]


def evaluate(request: EvalRequest, settings: Settings, *,
             progress: Callable[[int, int, str], None] | None = None,
             log: Callable[[str], None] = print) -> EvalOutcome:
    """``shelfwise eval``: ``request`` checked against its dataset (EvalUsageError naming the option), run
    with the user's ``settings`` and the request's options over a Shelf of its own (a file of dialogues turn
    by turn; EvalError when its gold is not in the library), the reports written; returns what to print. The
    one import of ``core/evaluation`` in the core, and only when this runs (``core/evaluation/command.py``)."""
    from shelfwise.core.evaluation.command import checked, settings_for_request
    from shelfwise.core.evaluation.command import evaluate as run
    from shelfwise.core.shelf import Shelf

    request = checked(request)
    run_with = settings_for_request(request, settings)
    with Shelf(run_with) as shelf:
        return run(request, shelf.walk, run_with, progress=progress, log=log)
