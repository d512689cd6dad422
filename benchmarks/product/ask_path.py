"""Follow one ``shelfwise ask`` from the command to the printed answer and print its stops (issue 51's bar).

The command runs in this process under ``sys.setprofile``; only Shelfwise's own frames count (app/, core/, ingest/,
evaluation/). Two moments are the path's ends: the walk starting (``Navigator.navigate``) and the answer's sentence
being chosen (``extractive_answer``). The Shelfwise call stack at each is a chain of stops from the command down;
the path is the two chains merged (their common start once). A *climb back* is a stop in a file the chain had
already left for another one (A -> B -> A: the question handed back up). ``command calls`` are the calls the
command's own function makes into the core before the walk starts (the question handed back and forth). ``hops``
are every call a stop of the path makes into another Shelfwise file before the sentence is chosen, in order (the
side trips too: reading the question, the index check, the models), and ``returns`` the hops into a file the
sequence had already left.

    usage: python benchmarks/product/ask_path.py --db LIBRARY [QUESTION]
    (a library of the sample: shelfwise --db LIBRARY ingest resources/sample; figures in docs/architecture.md)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import shelfwise.core

ROOT = Path(shelfwise.core.__file__).resolve().parents[1]  # the tree imported (PYTHONPATH may name another)
OURS = tuple(str(ROOT / d) + "/" for d in ("app", "core", "ingest", "evaluation"))
WALK = ("Navigator.navigate", "Navigator.search")  # the walk's entry (named search before issue 51)
ENDS = (*WALK, "extractive_answer")
_REAL: dict[str, str] = {}
QUESTION = "How many days of annual leave do employees get?"


def _file(frame: FrameType) -> str:
    name = frame.f_code.co_filename
    if name not in _REAL:
        _REAL[name] = str(Path(name).resolve())
    return _REAL[name]


def _ours(frame: FrameType) -> bool:
    return _file(frame).startswith(OURS)


def _stop(frame: FrameType) -> tuple[str, str]:
    return Path(_file(frame)).relative_to(ROOT).as_posix(), frame.f_code.co_qualname


def _chain(frame: FrameType | None) -> list[tuple[str, str]]:
    out = []
    while frame is not None:
        if _ours(frame):
            out.append(_stop(frame))
        frame = frame.f_back
    return out[::-1]


def climbs(chain: list[tuple[str, str]]) -> list[int]:
    """Where ``chain`` enters a file it had left for another one (indexes)."""
    left: set[str] = set()
    out = []
    for i in range(1, len(chain)):
        prev, here = chain[i - 1][0], chain[i][0]
        if here != prev:
            left.add(prev)
            if here in left:
                out.append(i)
    return out


def trace(argv: list[str]) -> dict[str, Any]:
    from shelfwise.app.cli.main import main

    found: dict[str, list[tuple[str, str]]] = {}
    command_calls: list[str] = []
    calls: list[tuple[tuple[str, str], tuple[str, str]]] = []  # (caller, callee) across files, in order

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event != "call" or not _ours(frame):
            return
        name = frame.f_code.co_qualname
        if name in ENDS and name not in found:
            found[name] = _chain(frame)
        caller = frame.f_back
        while caller is not None and not _ours(caller):
            caller = caller.f_back
        if caller is not None and "extractive_answer" not in found and _file(caller) != _file(frame):
            calls.append((_stop(caller), _stop(frame)))
        if caller is not None and caller.f_code.co_qualname == "ask_cmd" and not any(w in found for w in WALK) \
                and _file(frame).startswith(str(ROOT / "core") + "/") and name != "<genexpr>":
            command_calls.append(name)

    sys.setprofile(profile)
    try:
        main(argv, standalone_mode=False)
    finally:
        sys.setprofile(None)
    path: list[tuple[str, str]] = []
    for end in ENDS:
        for stop in found.get(end, []):
            if stop not in path:
                path.append(stop)
    on_path = set(path)
    hops = [callee for caller, callee in calls if caller in on_path]
    return {"path": path, "chains": found, "command_calls": command_calls, "hops": hops}


def returns(files: list[str]) -> int:
    """How often a sequence of files enters one it had already left."""
    seen: set[str] = set()
    n = 0
    for i, f in enumerate(files):
        if i and f != files[i - 1]:
            n += f in seen
        seen.add(f)
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("question", nargs="?", default=QUESTION)
    args = ap.parse_args()
    out = trace(["--db", args.db, "ask", args.question, "--no-generate"])
    print("\n--- the path from `shelfwise ask` to the walk and to the answer's sentence ---")
    path = out["path"]
    back = climbs(path)
    for i, (file, func) in enumerate(path, 1):
        print(f"{i:3d} {'^' if i - 1 in back else ' '} {file}: {func}")
    files = {f for f, _ in path}
    per_end = {end: len(chain) for end, chain in out["chains"].items()}
    to_walk = next((n for w, n in per_end.items() if w in WALK), None)
    print(f"stops: {len(path)} in {len(files)} files (to the walk {to_walk}, to the sentence "
          f"{per_end.get('extractive_answer')}); climbs back up into a file already left: {len(back)}")
    hops = out["hops"]
    files_seq = ["app/cli/ask.py", *(f for f, _ in hops)]
    print(f"hops off the path's stops into other files: {len(hops)} into {len({f for f, _ in hops})} files; "
          f"returns to a file already left: {returns(files_seq)}")
    print("  " + "\n  ".join(f"{f}: {n}" for f, n in hops))
    print(f"command calls into the core before the walk: {len(out['command_calls'])} "
          f"({', '.join(out['command_calls'])})")


if __name__ == "__main__":
    main()
