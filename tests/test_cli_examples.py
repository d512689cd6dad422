"""Every terminal session the user's docs show (each ```console block of README.md and docs/cli.md) runs against
the bundled sample: its ``$ shelfwise ...`` lines are collected from the files, so an example is tested the day it
is written. Each command must end without a traceback, with exit code 0 (or non-zero where the example shows an
``Error:`` or ``Usage:`` line), and print the lines shown in the same order, each starting the same way: its first
word, with numbers masked (``[1/6]``, ``Level 1``, scores and timings change; ``Path:``, ``Answer:``, ``Sources:``,
``Scope:``, ``Note:`` and the walk's ``+``/``-`` rows must stay). A ``...`` line in an example stands for lines left
out; blank lines are not compared. The examples run in a home where LM Studio, Ollama and GPT4All keep
SmolLM2-135M-Instruct (the docs' "your own models" session), laid out as ``tests/test_found_models.py`` does."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli_sample import TRACEBACK, SampleLibrary, run_shelfwise
from tests.test_found_models import lay_out_all

pytestmark = pytest.mark.model

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTED = ("README.md", "docs/cli.md")
_FENCE = re.compile(r"^```console\s*$")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


@dataclass(frozen=True)
class Example:
    """One ``$ shelfwise ...`` line of a doc's console block and the output shown under it."""

    where: str  # "README.md:72"
    args: tuple[str, ...]  # what follows ``shelfwise``
    shown: tuple[str, ...]  # the output lines as written

    @property
    def fails(self) -> bool:
        """The example shows a failing command (an ``Error:`` or ``Usage:`` line)."""
        return any(line.startswith(("Error:", "Usage:")) for line in self.shown)


def console_examples(doc: Path) -> list[Example]:
    """The ``$ shelfwise`` commands of every ```console block in ``doc`` with the lines shown under each (up to the
    next ``$`` line or the block's end). A ``$`` line that is not a shelfwise command is an error: every command a
    user is shown must be one this test runs."""
    out: list[Example] = []
    lines = doc.read_text(encoding="utf-8").splitlines()
    rel = doc.relative_to(ROOT).as_posix()
    i = 0
    while i < len(lines):
        if not _FENCE.match(lines[i]):
            i += 1
            continue
        i += 1
        current: tuple[int, list[str]] | None = None
        shown: list[str] = []
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            if line.startswith("$ "):
                if current is not None:
                    out.append(Example(f"{rel}:{current[0]}", tuple(current[1]), tuple(shown)))
                words = shlex.split(line[2:])
                assert words and words[0] == "shelfwise", f"{rel}:{i + 1}: not a shelfwise command: {line}"
                current, shown = (i + 1, words[1:]), []
            else:
                shown.append(line)
            i += 1
        if current is not None:
            out.append(Example(f"{rel}:{current[0]}", tuple(current[1]), tuple(shown)))
        i += 1
    return out


EXAMPLES = [e for doc in DOCUMENTED for e in console_examples(ROOT / doc)]


def shape(line: str) -> tuple[int, str] | None:
    """How a line starts: its indent and its first word with numbers masked; None for a blank line."""
    words = line.split()
    if not words:
        return None
    return len(line) - len(line.lstrip()), _NUMBER.sub("#", words[0])


def missing_shapes(shown: tuple[str, ...], printed: str) -> list[str]:
    """The lines of ``shown`` whose shape is not found, in order, in ``printed`` (a ``...`` line skips ahead)."""
    got = [s for s in (shape(line) for line in printed.splitlines()) if s is not None]
    at, missing = 0, []
    for line in shown:
        want = shape(line)
        if want is None or line.strip() == "...":
            continue
        try:
            at = got.index(want, at) + 1
        except ValueError:
            missing.append(line)
    return missing


def command(example: Example, lib: SampleLibrary) -> list[str]:
    """The example's arguments on the sample library: its own ``--db`` dropped (the test names the library); for
    ``ingest``, a path that does not exist here (``~/Documents/handbooks``) is the sample's folder."""
    args = list(example.args)
    while "--db" in args:
        at = args.index("--db")
        del args[at:at + 2]
    if args and args[0] == "ingest":
        args = ["ingest", *(str(lib.files) if not a.startswith("-") and not Path(a).expanduser().exists() else a
                            for a in args[1:])]
    return args


def test_the_docs_have_examples_to_run() -> None:
    # a parser that found nothing would pass every example: the docs hold these today
    assert sum(e.where.startswith("README.md") for e in EXAMPLES) >= 4
    assert sum(e.where.startswith("docs/cli.md") for e in EXAMPLES) >= 4
    assert any(e.args[:1] == ("ingest",) for e in EXAMPLES) and any(e.args[:1] == ("ask",) for e in EXAMPLES)


def test_the_shape_rule_catches_a_changed_line() -> None:
    shown = ("Path:", "  documents   0.98  Handbook", "...", "Answer: 27 days [1]", "Sources:")
    assert not missing_shapes(shown, "Path:\n  documents   0.41  Other\n  sections 0.2  x\n\nAnswer: 30 days [2]\n"
                                     "Sources:\n[1] x\n")
    assert missing_shapes(shown, "Path:\n  documents   0.41  Other\nAnswer: x\n") == ["Sources:"]
    assert missing_shapes(shown, "Sources:\nPath:\n  documents 1.0 x\nAnswer: y\n") == ["Sources:"]  # order kept
    assert missing_shapes(("Scope: in:x: 1 of 6 documents",), "Scope:in:x\n") == ["Scope: in:x: 1 of 6 documents"]


@pytest.fixture(scope="module")
def user_home(tmp_path_factory: pytest.TempPathFactory, smollm2_gguf: Path) -> dict[str, str]:
    """The environment the examples run in: a home whose LM Studio, Ollama and GPT4All folders hold SmolLM2, and
    none of the variables that point those tools elsewhere."""
    home = tmp_path_factory.mktemp("examples-home")
    lay_out_all(home, smollm2_gguf)
    return {"HOME": str(home), "OLLAMA_MODELS": "", "SHELFWISE_MODEL_DIRS": "",
            "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CONFIG_HOME": str(home / ".config")}


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"{e.where} {' '.join(e.args)[:60]}" for e in EXAMPLES])
def test_a_documented_example_runs_as_shown(example: Example, sample_library: SampleLibrary,
                                            user_home: dict[str, str]) -> None:
    args = command(example, sample_library)
    # the session's library was made by this very command; an ingest example that is the same is not run twice
    done = sample_library.ingest if args == sample_library.ingest_args() else \
        run_shelfwise(sample_library.db, args, cwd=sample_library.files.parent, env=user_home)
    printed = done.stdout
    assert TRACEBACK not in printed, printed[-3000:]
    assert (done.returncode != 0) == example.fails, (done.returncode, printed[-3000:])
    missing = missing_shapes(example.shown, printed)
    assert not missing, f"{example.where}: these lines shown in the docs are not printed so:\n" + "\n".join(
        missing) + "\n--- printed:\n" + printed[-3000:]
