"""llama.cpp's own log never reaches the terminal unless asked: the real CLI (ingest, ask, eval) on the sample
handbook with the real bundled models, run as a user runs it; the lines go to the log file instead, and to stderr
with --verbose."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shelfwise.core.paths import models_dir

ROOT = Path(__file__).resolve().parents[1]
# Prefixes of llama.cpp's loader and context lines (llama_model_loader, load_tensors, llama_context, ...) and the
# warnings the issue quoted.
LLAMA_MARKERS = ("llama_model_loader", "load_tensors", "llama_context", "print_info", "special_eos_id",
                 "control-looking token", "SWA cache", "load: ", "llama_kv_cache", "ggml_")

pytestmark = pytest.mark.model


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SHELFWISE_HOME": str(home), "SHELFWISE_THREADS": os.environ.get("SHELFWISE_THREADS", "1")}
    return subprocess.run([str(Path(sys.executable).parent / "shelfwise"), "--db", str(home / "lib.db"), *args],
                          capture_output=True, text=True, env=env, timeout=1800, cwd=ROOT)


def _llama_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if any(m in ln for m in LLAMA_MARKERS)]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("quiet")
    shutil.copytree(models_dir(), home / "models")  # the converted models, so nothing is rebuilt
    return home


def test_ingest_ask_eval_print_no_llama_log(home: Path) -> None:
    runs = [
        _cli(home, "ingest", str(ROOT / "resources" / "sample")),
        _cli(home, "ask", "How many days of annual leave do employees get?"),
        _cli(home, "eval", str(ROOT / "resources" / "sample_questions.jsonl"), "--limit", "2", "--methods", "bm25",
             "--no-sweep", "--out", str(home / "reports")),
    ]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
        assert _llama_lines(r.stdout + r.stderr) == [], (r.args, _llama_lines(r.stdout + r.stderr)[:5])
    logged = (home / "logs" / "shelfwise.log").read_text(encoding="utf-8")
    assert "shelfwise.llama" in logged  # llama.cpp's warnings went to the log file


def test_verbose_shows_llama_log(home: Path) -> None:
    r = _cli(home, "--verbose", "ask", "By what date must carried-over leave be taken?")
    assert r.returncode == 0, r.stderr[-2000:]
    assert _llama_lines(r.stderr), r.stderr[-2000:]
