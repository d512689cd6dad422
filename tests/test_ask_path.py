"""Issue 51's bar on the path of a question: following ``shelfwise ask`` from the command to the printed answer takes
at most 12 stops and never climbs back up into a file the path had left. ``benchmarks/product/ask_path.py`` traces
the command with ``sys.setprofile`` (the figures before and after: docs/eval/restructure-issue51.md); this runs it on
the sample library the session ingested with the real models, so a change that hands the question back up the path
fails here."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tests.cli_sample import SampleLibrary

pytestmark = pytest.mark.model

ROOT = Path(__file__).resolve().parents[1]
MAX_STOPS = 12


def ask_path() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ask_path", ROOT / "benchmarks" / "product" / "ask_path.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_climb_count_finds_a_climb_back() -> None:
    chain = [("app/cli/ask.py", "ask_cmd"), ("core/shelf.py", "Shelf.ask"), ("core/answers/ask.py", "answer"),
             ("core/shelf.py", "Shelf.search"), ("core/shelf.py", "Shelf.walk")]
    assert ask_path().climbs(chain) == [3]
    assert ask_path().returns(["a.py", "b.py", "b.py", "a.py", "c.py", "b.py"]) == 2


def test_shelfwise_ask_reaches_its_answer_in_few_stops_and_no_climb_back(sample_library: SampleLibrary,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    path_script = ask_path()
    out = path_script.trace(["--db", str(sample_library.db), "ask", path_script.QUESTION, "--no-generate"])
    printed = capsys.readouterr().out
    assert "27 days" in printed  # the command ran to its answer
    chains = out["chains"]
    assert "extractive_answer" in chains and any(w in chains for w in path_script.WALK), chains  # both ends seen
    path = out["path"]
    shown = "\n".join(f"{file}: {func}" for file, func in path)
    assert path[0][0] == "app/cli/group.py" and ("app/cli/ask.py", "ask_cmd") in path, shown
    assert len(path) <= MAX_STOPS, shown
    assert path_script.climbs(path) == [], shown
