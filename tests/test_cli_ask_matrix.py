"""``shelfwise ask`` over every combination of its output modes (text, ``--json``, ``--trace``, ``--no-answer``,
``--no-generate``), scopes (none, ``--in``, ``--type``, ``--since``, ``in:`` in the question) and conversations
(none, a new one, one continued), through the CLI (click's runner, in process) on the sample library the session
ingested with the real models. Each must end without a traceback and show the answer (or, with ``--no-answer``, the
passages) holding the sample's 27 days of annual leave. Issue 50: every scoped question crashed in text mode
(``'StreamedAnswer' object is not callable``; NameError with ``--no-answer``) while 934 tests passed.

The combination ``--no-answer --conversation`` is refused with a usage error that says why (a turn is stored with
its answer). ``--trace`` and ``--in`` run without generation, so the matrix costs one model load per cell; ``text``
is the default (the model writes), kept to show that path too."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from shelfwise.app.cli.main import main
from tests.cli_sample import TRACEBACK, SampleLibrary

pytestmark = pytest.mark.model

QUESTION = "How many days of annual leave do employees get?"
MODES = {"text": [], "json": ["--json", "--no-generate"], "trace": ["--trace", "--no-generate"],
         "no-answer": ["--no-answer"], "no-generate": ["--no-generate"]}
SCOPES = ("none", "--in", "--type", "--since", "in:")
CONVERSATIONS = ("none", "new", "continued")


def scoped(scope: str, files: Path) -> tuple[list[str], str]:
    """The options and the question for ``scope`` (each admits the handbook, which answers)."""
    if scope == "--in":
        return ["--in", str(files / "handbook.pdf")], QUESTION
    if scope == "--type":
        return ["--type", "pdf"], QUESTION
    if scope == "--since":
        return ["--since", "2020-01-01"], QUESTION
    if scope == "in:":
        return [], f"in:handbook.pdf {QUESTION}"
    return [], QUESTION


def ask(lib: SampleLibrary, *args: str) -> Result:
    return CliRunner().invoke(main, ["--db", str(lib.db), "ask", *args])


@pytest.fixture(scope="module")
def conversation(sample_library: SampleLibrary) -> str:
    """A stored conversation with one turn, which the ``continued`` cells add to."""
    r = ask(sample_library, "--conversation", "new", "--json", "--no-generate", "What is the leave policy?")
    assert r.exit_code == 0, r.output
    return str(json.loads(r.stdout)["conversation"]["id"])


def no_traceback(r: Result) -> None:
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert TRACEBACK not in r.output, r.output[-3000:]


def answer_line(output: str) -> str:
    found = re.search(r"^Answer: (.*)$", output, re.MULTILINE)
    assert found is not None, output[-3000:]
    return found.group(1)


@pytest.mark.parametrize("conv", CONVERSATIONS)
@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("mode", list(MODES))
def test_ask_answers_in_every_mode_scope_and_conversation(sample_library: SampleLibrary, conversation: str,
                                                          mode: str, scope: str, conv: str) -> None:
    options, question = scoped(scope, sample_library.files)
    talk = [] if conv == "none" else ["--conversation", "new" if conv == "new" else conversation]
    r = ask(sample_library, *MODES[mode], *options, *talk, question)
    no_traceback(r)
    if mode == "no-answer" and talk:
        assert r.exit_code == 2 and "--no-answer does not apply with --conversation" in r.output, r.output
        return
    assert r.exit_code == 0, r.output[-3000:]
    if mode == "json":
        out = json.loads(r.stdout)
        assert out["passages"] and "27 days" in out["answer"], out["answer"]
        assert out["found"] is True
        if talk:
            assert out["conversation"]["id"] >= 1
        return
    if mode == "no-answer":
        assert "Passages:" in r.output and "27 days" in r.output.split("Passages:", 1)[1], r.output[-3000:]
        return
    assert "27 days" in answer_line(r.output), r.output[-3000:]
    assert "Sources:" in r.output
    if mode == "trace":
        assert "Path:" in r.output and "Level 1" in r.output, r.output[-3000:]
    if scope != "none" and not talk:
        assert "Scope:" in r.output, r.output[-3000:]
