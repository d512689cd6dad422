"""The README's first command, ``bash packaging/run_sample.sh``, as a user runs it on a machine without a display:
it checks the set-up, ingests the bundled sample, asks it a question and says how to open the window. Run here
over a sample library that already holds the sample from another copy of it (a second checkout, a moved one):
before, the second copy was added beside the first and every answer cited each sentence twice ([1] and [2])."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli_sample import TRACEBACK, SampleLibrary, run_shelfwise

pytestmark = pytest.mark.model

ROOT = Path(__file__).resolve().parents[1]


def test_run_sample_answers_from_this_checkouts_sample_once(gemma_sample_copy) -> None:  # type: ignore[no-untyped-def]
    lib = gemma_sample_copy("run-sample")
    assert isinstance(lib, SampleLibrary)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "SHELFWISE_EMBEDDER")}
    env.update(SHELFWISE_DB=str(lib.db), PYTHONIOENCODING="utf-8")
    done = subprocess.run(["bash", str(ROOT / "packaging" / "run_sample.sh")], cwd=ROOT, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, errors="replace", timeout=1200)
    out = done.stdout
    assert done.returncode == 0 and TRACEBACK not in out, out[-3000:]
    assert "6 documents from another copy of the sample; removing them" in out, out[-3000:]
    assert "6 added" in out, out[-3000:]
    answer = out[out.index("Answer:"):]
    assert answer.startswith("Answer: 27 days [1]"), answer[:500]
    assert "[2]" not in answer.split("Sources:")[0], answer[:800]  # the sentence cited once, not once per copy
    assert "No display here. On a desktop, open the window with:" in out
    status = run_shelfwise(lib.db, ["status", "--json"], unset=("SHELFWISE_EMBEDDER",))
    paths = [d["path"] for d in json.loads(status.stdout[status.stdout.index("{"):])["documents"]]
    sample = str((ROOT / "resources" / "sample").resolve()) + os.sep
    assert len(paths) == 6 and all(p.startswith(sample) for p in paths), paths
