"""What a ``shelfwise ask --no-generate`` process imports: every module it loads is paid on every question asked
from the command line (docs/scale.md, "Session 21: the process"), so the heavy ones it never uses must stay out:
the window (Qt), the parsers' libraries and their registry, the clustering, the research code, the write path's
sqlite-utils, llama-cpp-python's high-level layer (Jinja2). A real question on the sample library,
through the real console script in a subprocess (the tests' encoder: MiniLM, whose check of its converted file
imports the converter); the module list is read when that process exits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli_sample import SampleLibrary

NEVER_ON_THE_ASK_PATH = (
    "PySide6", "shiboken6", "sklearn", "scipy", "fitz", "pymupdf", "docx", "pptx", "openpyxl", "torch",
    "shelfwise.app.gui", "shelfwise.evaluation", "shelfwise.training",
    "sqlite_utils",  # the write path and doctor's introspection (core/store/lite.py)
    "jinja2", "diskcache", "llama_cpp.llama",  # llama-cpp-python's high-level layer (core/models/llama/bindings.py)
    "shelfwise.ingest.registry",  # the parsers' registry, its sniffing and normalising: only what parses needs it
)

RUN_AND_LIST = """
import atexit, json, sys
out = sys.argv.pop(1)
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
from shelfwise.app.cli.main import main
main()
"""


def test_ask_imports_none_of_the_heavy_modules(sample_library: SampleLibrary, tmp_path: Path) -> None:
    listed = tmp_path / "modules.json"
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run([sys.executable, "-c", RUN_AND_LIST, str(listed), "--db", str(sample_library.db), "ask",
                           "How many days of annual leave do employees get?", "--no-generate"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "annual leave" in done.stdout.lower() or "days" in done.stdout.lower(), done.stdout[-2000:]
    modules = set(json.loads(listed.read_text()))
    assert "shelfwise.core.models.encoders.embedder" in modules and "llama_cpp.llama_cpp" in modules  # it did embed
    heavy = sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in NEVER_ON_THE_ASK_PATH))
    assert not heavy, f"shelfwise ask --no-generate imported {heavy}"
