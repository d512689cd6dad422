"""The scope options ``ask`` and ``search`` share: ``--in``, ``--type``, ``--since``, ``--until`` (the question's
inline ``in:`` / ``type:`` / ``since:`` / ``until:`` filters mean the same; ``core/navigation/scope.py`` reads both)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

from shelfwise.core.api.asking import FORMATS, Scope, ScopeError, make_scope

F = TypeVar("F", bound=Callable[..., object])  # the command, returned as it came (click's decorators' typing)


def scope_options(f: F) -> F:
    """Add the four scope options to a command; the command gets them as ``in_paths``, ``types``, ``since``,
    ``until``."""
    for option in reversed((
        click.option("--in", "in_paths", multiple=True, metavar="PATH",
                     help="Only this file or folder (repeatable); a document's or folder's name in the library works "
                          "too. Inline: in:handbook.pdf"),
        click.option("--type", "types", multiple=True, metavar="|".join(FORMATS),
                     help="Only documents of this type (repeatable). Inline: type:pptx"),
        click.option("--since", default=None, metavar="DATE",
                     help="Only files modified on or after DATE (YYYY-MM-DD, YYYY-MM, YYYY, today, 7d, 6m ...). "
                          "Inline: since:2025-01-01"),
        click.option("--until", default=None, metavar="DATE",
                     help="Only files modified up to DATE. Inline: until:2025-06"),
    )):
        f = option(f)
    return f


def scope_from(in_paths: tuple[str, ...], types: tuple[str, ...], since: str | None, until: str | None) -> Scope:
    """The options as a Scope; a malformed one is a usage error that names it and what it accepts."""
    try:
        return make_scope(in_paths, types, since, until)
    except ScopeError as exc:
        raise click.UsageError(f"--{exc.key} {exc.value!r}: {exc.problem}; it {exc.accepts}") from exc


def scope_message(exc: ScopeError) -> str:
    """What a malformed inline filter is told as: the filter, what is wrong, what it accepts."""
    return f"{exc.filter} in the question: {exc.problem}; {exc.key}: {exc.accepts}. Nothing was searched."


def scope_error(exc: ScopeError) -> click.UsageError:
    """A malformed inline filter, said as such (the question is not sent without it)."""
    return click.UsageError(scope_message(exc))
