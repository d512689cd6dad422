"""`shelfwise ask` and `shelfwise chat` print an answer as it is made: the extracted sentence first, then the
model's answer piece by piece as it is generated (on a terminal), then whether it is kept; a text not kept is
erased and its reason printed in its place, and where the output is not a terminal only a kept text is printed.
In-process (CliRunner) on a small library with the real bundled embedder; the generative model is a scripted
stand-in whose generation looks at the terminal between its pieces, so the test sees what was on screen while it
wrote. The terminal itself, with the bundled model, is tests/test_cli_terminal.py."""

from __future__ import annotations

import sys
import time
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from shelfwise.app.cli import render
from shelfwise.app.cli.main import main
from shelfwise.app.cli.shown import raw_stream
from shelfwise.core.models import factory
from shelfwise.core.models.backend import CancelCheck, Cost, Generation
from shelfwise.core.models.fake import FakeBackend
from shelfwise.core.models.generation import guarded_stream
from tests.terminal_screen import screen

QUESTION = "How many hours a day do cats sleep?"
EXTRACTED = "Answer: sixteen hours a day [1]\nIn the sources: Cats sleep sixteen hours a day. [1]"
KEPT = "Cats sleep sixteen hours a day [1]. Cats eat fish."  # the second sentence is in another shown passage


class Watching(FakeBackend):
    """Answers every answer prompt with ``reply``, word by word, and keeps what the terminal showed before each
    word (``screens``)."""

    def __init__(self, reply: str) -> None:
        super().__init__()
        self.reply = reply
        self.screens: list[str] = []

    def generate(self, prompt: str, *, max_tokens: int = 256, stop: Sequence[str] = (), temperature: float = 0.0,
                 cancel: CancelCheck | None = None, repeat_penalty: float = 1.0) -> Generator[str, None, Generation]:
        if "Sources:" not in prompt:
            return (yield from super().generate(prompt, max_tokens=max_tokens, stop=stop, cancel=cancel))
        cost = Cost(requests=1, tokens=self.count_tokens(prompt))

        def pieces() -> Generator[bytes, None, str]:
            for i, word in enumerate(self.reply.split(" ")):
                sys.stdout.flush()
                screen = raw_stream(sys.stdout)  # what reaches the terminal, under the output door
                self.screens.append(screen.buffer.getvalue().decode())  # type: ignore[attr-defined]
                cost.tokens += 1
                yield (word if i == 0 else " " + word).encode()
            return "eos"

        return (yield from guarded_stream(pieces(), stop, cancel, cost, time.perf_counter()))


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("stream")
    docs = root / "docs"
    docs.mkdir()
    (docs / "cats.md").write_text("# Cats\n\nCats sleep sixteen hours a day.\n\n## Food\n\nCats eat fish.\n")
    (docs / "dogs.md").write_text("# Dogs\n\nDogs bark at the postman.\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(factory, "make_backend", lambda settings: FakeBackend())
        result = CliRunner().invoke(main, ["--db", str(root / "lib.db"), "ingest", str(docs)])
    assert result.exit_code == 0, result.output
    yield root / "lib.db"


def ask(db: Path, reply: str, monkeypatch: pytest.MonkeyPatch, *args: str, stdin: str | None = None,
        columns: int | None = 80) -> tuple[str, Watching]:
    """The command's output and the stand-in model; ``columns``: the width of the terminal the output is taken to
    be (None: not a terminal, a pipe)."""
    backend = Watching(reply)
    monkeypatch.setattr(render, "terminal_columns", lambda: columns)
    monkeypatch.setattr(factory, "make_backend", lambda settings: backend)
    result = CliRunner().invoke(main, ["--db", str(db), *args], input=stdin)
    assert result.exit_code == 0, result.output
    return getattr(result, "stdout", result.output), backend


def test_ask_prints_the_extracted_sentence_then_streams_the_kept_answer(library: Path, monkeypatch) -> None:
    out, backend = ask(library, KEPT, monkeypatch, "ask", QUESTION)
    first, *later = backend.screens
    assert EXTRACTED in first and "Model's answer" not in first  # the sentence is on screen before the model writes
    written = ""
    for seen, word in zip(later, KEPT.split(" "), strict=False):
        written += word if not written else " " + word
        assert seen.rstrip().endswith("Model's answer: " + written)  # each piece on screen as it came
    tail = out[out.index(EXTRACTED):]
    assert tail.startswith(EXTRACTED + f"\n\nModel's answer: {KEPT}\n(kept, checked: its numbers, dates and names "
                           "are in the passages shown; each of its sentences stands in one sentence of a passage; "
                           "it gives a number, as the question asks; its number is one the sentences found give)")
    assert "Sources:\n[1] Cats" in tail and "withdrawn" not in out


@pytest.mark.parametrize(("reply", "why", "gone"), [
    ("Cats sleep sixteen hours [1].", "it says nothing that the answer and the sentence above do not.",
     "Cats sleep sixteen hours [1]."),  # only repeats the sentence
    ("Cats sleep twenty hours [1].", "it says \u201ctwenty\u201d, which no passage shown does.", "twenty hours"),
], ids=["repeats", "withdrawn"])
def test_a_text_not_kept_is_erased_and_its_reason_printed_in_its_place(library: Path, monkeypatch, reply: str,
                                                                        why: str, gone: str) -> None:
    out, backend = ask(library, reply, monkeypatch, "ask", QUESTION, columns=200)
    assert "Model's answer: " + " ".join(reply.split()[:3]) in backend.screens[-1]  # on screen while written
    shown = screen(out, columns=200)
    assert shown[shown.index(EXTRACTED):].startswith(
        EXTRACTED + f"\n\n(The model's answer is not shown: {why})\nSources:")
    assert gone not in shown


def test_a_long_withdrawn_text_is_erased_across_its_wrapped_rows(library: Path, monkeypatch) -> None:
    reply = "Cats sleep twenty hours [1]. " + " ".join(["They nap in the sun all afternoon."] * 6)
    out, _ = ask(library, reply, monkeypatch, "ask", QUESTION, columns=40)
    shown = screen(out, columns=40)
    assert "twenty hours" in out and "twenty hours" not in shown and "nap in the sun" not in shown
    assert EXTRACTED.split("\n")[1][:40] in shown  # the sentence above is not erased with it
    assert "(The model's answer is not shown:" in shown


def test_piped_output_never_holds_a_text_not_kept(library: Path, monkeypatch) -> None:
    out, backend = ask(library, "Cats sleep twenty hours [1].", monkeypatch, "ask", QUESTION, columns=None)
    assert "twenty hours" not in out and "\x1b" not in out and "Model's answer" not in backend.screens[-1]
    assert out[out.index(EXTRACTED):].startswith(
        EXTRACTED + "\n\n(The model's answer is not shown: it says \u201ctwenty\u201d, which no passage shown "
        "does.)\nSources:")
    out, _ = ask(library, KEPT, monkeypatch, "ask", QUESTION, columns=None)
    assert EXTRACTED + "\n\nModel's answer (checked: its numbers, dates and names are in the passages shown" in out
    assert KEPT in out


def test_rows_taken_counts_wrapped_and_wide_characters() -> None:
    assert render.rows_taken("abc", 80) == 1
    assert render.rows_taken("a" * 80, 80) == 1 and render.rows_taken("a" * 81, 80) == 2
    assert render.rows_taken("one\ntwo", 80) == 2 and render.rows_taken("\u732b" * 41, 80) == 2


def test_ask_without_generation_prints_the_extracted_sentence_only(library: Path, monkeypatch) -> None:
    out, backend = ask(library, "unused", monkeypatch, "ask", QUESTION, "--no-generate")
    assert EXTRACTED in out and "Model's answer" not in out and backend.screens == []


def test_chat_streams_the_same_way(library: Path, monkeypatch) -> None:
    out, backend = ask(library, KEPT, monkeypatch, "chat", stdin=QUESTION + "\n/quit\n")
    assert EXTRACTED in backend.screens[0] and "Model's answer: Cats sleep" in backend.screens[-1]
    assert EXTRACTED + f"\n\nModel's answer: {KEPT}\n(kept, checked:" in out


def test_chat_reads_a_question_once(library: Path, monkeypatch) -> None:
    # the door reads the turn's question (only filters? a malformed filter?) and the turn takes it as read: one
    # parse for a first question (was three: the chat loop's check, the turn's check and the walk's own)
    from shelfwise.core.navigation import scope

    calls: list[str] = []
    parse = scope.parse_question
    monkeypatch.setattr(scope, "parse_question", lambda q: (calls.append(q), parse(q))[1])
    out, _ = ask(library, "Cats sleep sixteen hours [1].", monkeypatch, "chat", stdin=QUESTION + "\n/quit\n")
    assert EXTRACTED in out and calls == [QUESTION]
    calls.clear()
    out, _ = ask(library, "unused", monkeypatch, "chat", stdin="type:md\n/quit\n")
    assert "Model's answer" not in out and calls == ["type:md"]  # said at the door, nothing walked
