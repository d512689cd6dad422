"""`shelfwise ask` on the bundled sample's workbook (issue 49): a lookup answers with the cell first and cites it, a
count and an average over a sheet are computed from the stored table (real models, real SQLite, subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shelfwise.resources import path as resource_path

pytestmark = pytest.mark.model


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "shelfwise"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=900)


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    db = tmp_path_factory.mktemp("tables") / "sample.db"
    env = dict(os.environ)
    env.setdefault("SHELFWISE_HOME", str(Path.home() / ".cache" / "shelfwise-test-home"))
    r = _run(["--db", str(db), "ingest", str(resource_path("sample"))], env)
    assert r.returncode == 0, r.stderr[-2000:]
    return db, env


def test_a_lookup_answers_with_the_cell_and_cites_it(sample_db: tuple[Path, dict[str, str]]) -> None:
    db, env = sample_db
    r = _run(["--db", str(db), "ask", "What is the maximum salary for band L5?", "--json", "--no-generate"], env)
    assert r.returncode == 0, r.stderr[-2000:]
    short = json.loads(r.stdout)["short_answer"]
    assert short["text"] == "102000" and short["operation"] == "lookup"
    assert short["cells"][0]["address"] == "Salary bands!F6" and short["cells"][0]["number"] >= 1


def test_a_count_and_an_average_over_a_sheet(sample_db: tuple[Path, dict[str, str]]) -> None:
    db, env = sample_db
    r = _run(["--db", str(db), "ask", "How many holidays does the Lisbon office have?", "--no-generate"], env)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    at = lines.index("8")  # the value first, then the operation and the cells, then the answer
    assert "4 for Lisbon" in lines[at + 1] and "4 for All offices" in lines[at + 1]
    assert any(ln.strip().startswith("Holidays 2026!D") for ln in lines[at + 2:])
    assert any(ln.startswith("Answer:") for ln in lines[at:])
    r = _run(["--db", str(db), "ask", "What is the average midpoint salary of the bands?", "--json",
              "--no-generate"], env)
    short = json.loads(r.stdout)["short_answer"]
    assert short["text"] == "77571.43" and short["operation"] == "average" and len(short["cells"]) == 7
