"""What the ``shelfwise`` program starts before it imports its commands (``app/cli/__init__.py`` calls
:func:`start_early` with the command line): for a question (``shelfwise ask``), the library's sentence encoder
loads on a thread of its own while the rest of the program is imported, which takes about as long on two cores
(``core/api/starting.py``; docs/scale.md, "Session 21: the process"). Only the group's own options are read here
(``--db``, ``--embedder``, ``-v``), with their variables; anything else before the command word, or no ``ask``,
starts nothing. Light on purpose: the standard library only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

PRELOADED_COMMANDS = ("ask",)  # commands that embed a question as soon as the library is open
_WITH_VALUE = ("--db", "--embedder")
_FLAGS = ("-v", "--verbose")


def group_options(argv: Sequence[str]) -> tuple[str | None, dict[str, str]]:
    """The command word and the group options before it (``{"--db": ...}``); (None, ...) when an option other than
    the group's comes first (a help flag, another program's arguments)."""
    given: dict[str, str] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in _WITH_VALUE:
            if not eq:
                if i + 1 >= len(argv):
                    return None, given
                value = argv[i + 1]
                i += 1
            given[name] = value
        elif arg in _FLAGS:
            pass
        elif arg.startswith("-"):
            return None, given
        else:
            return arg, given
        i += 1
    return None, given


def start_early(argv: Sequence[str]) -> None:
    """Start loading the encoder when ``argv`` asks a question (never raises: a guess is all it is)."""
    command, given = group_options(argv)
    if command not in PRELOADED_COMMANDS or any(a in ("-h", "--help") for a in argv):
        return
    try:
        from shelfwise.core.api.starting import preload_library_encoder
        from shelfwise.core.environment import DB, EMBEDDER, variable

        db = given.get("--db") or variable(DB)
        preload_library_encoder(Path(db).expanduser() if db else None, given.get("--embedder") or variable(EMBEDDER))
    except Exception:  # the question loads its encoder as before
        return
