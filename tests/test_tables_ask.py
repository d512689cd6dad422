"""`shelfwise ask` on the bundled sample's workbook (issue 49): a lookup answers with the cell first and cites it, a
count and an average over a sheet are computed from the stored table (real models, real SQLite, subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli_sample import SampleLibrary

pytestmark = pytest.mark.model


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "shelfwise"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=900)


@pytest.fixture(scope="module")
def sample_db(sample_copy: Callable[[str], SampleLibrary]) -> tuple[Path, dict[str, str]]:
    """The sample as ``shelfwise ingest`` made it (a copy of the session's: tests/conftest.py)."""
    env = dict(os.environ)
    env.setdefault("SHELFWISE_HOME", str(Path.home() / ".cache" / "shelfwise-test-home"))
    return sample_copy("tables").db, env


def test_a_lookup_answers_with_the_cell_and_cites_it(sample_db: tuple[Path, dict[str, str]]) -> None:
    db, env = sample_db
    r = _run(["--db", str(db), "ask", "What is the maximum salary for band L5?", "--json", "--no-generate"], env)
    assert r.returncode == 0, r.stderr[-2000:]
    short = json.loads(r.stdout)["short_answer"]
    assert short["text"] == "102,000" and short["operation"] == "lookup"
    assert short["cells"][0]["address"] == "Salary bands!F6" and short["cells"][0]["number"] >= 1
    # in text mode the row it was read from comes beneath the value (not the walk's first row, L7's), and it is
    # the only source
    r = _run(["--db", str(db), "ask", "What is the maximum salary for band L5?", "--no-generate"], env)
    lines = r.stdout.splitlines()
    at = lines.index("Answer: 102,000")
    row = next(ln for ln in lines[at:] if ln.startswith("In the sources:"))
    assert row.startswith("In the sources: L5, Lead:") and "maximum (EUR/year) 102,000 [1]" in row
    assert "L7" not in "\n".join(lines[at:]) and sum(ln.startswith("[") for ln in lines[at:]) == 1


def test_a_count_and_an_average_over_a_sheet(sample_db: tuple[Path, dict[str, str]]) -> None:
    db, env = sample_db
    r = _run(["--db", str(db), "ask", "How many holidays does the Lisbon office have?", "--no-generate"], env)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    at = lines.index("Answer: 8")  # the value first, then the operation and the cells it counted
    assert "4 for Lisbon" in lines[at + 1] and "4 for All offices" in lines[at + 1]
    # one line a row counted: its name and the cell it was kept by, cited
    assert lines[at + 2].split() == ["cells", "values"], lines[at:at + 4]
    assert any(ln.split() == ["Holidays", "2026!C10,", "D10", "Portugal", "Day", "|", "Lisbon", "[1]"]
               for ln in lines[at + 3:]), lines[at:at + 12]
    # a count over eight rows is answered by the count and its cells: no one row is shown as "the" sentence
    assert not any(ln.startswith(("In the sources:", "Answer: 20")) for ln in lines[at + 1:])
    r = _run(["--db", str(db), "ask", "What is the average midpoint salary of the bands?", "--json",
              "--no-generate"], env)
    short = json.loads(r.stdout)["short_answer"]
    assert short["text"] == "77,571.43" and short["operation"] == "average" and len(short["cells"]) == 7
