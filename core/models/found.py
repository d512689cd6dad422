"""The GGUF models a person already has: those LM Studio, Ollama and GPT4All keep in their model folders.

Each tool lays its folder out its own way, and :func:`model_folders` knows where each keeps it on Linux, macOS and
Windows, with the places a person can move it to:

* **LM Studio**: ``models`` in its home: the one ``~/.lmstudio-home-pointer`` names, and ``~/.lmstudio``
  (``~/.cache/lm-studio`` before LM Studio 0.3; on Windows both under ``%USERPROFILE%``); or the folder a
  ``settings.json`` names as ``downloadsFolder`` (in that home, or in the app's own folder: ``~/.config/LM Studio``,
  ``~/Library/Application Support/LM Studio``, ``%APPDATA%\\LM Studio``). Inside: ``publisher/model/file.gguf``.
* **Ollama**: ``OLLAMA_MODELS`` when set, else ``~/.ollama/models`` (and ``/usr/share/ollama/.ollama/models``, where
  the Linux service keeps them). Inside: ``manifests/HOST/NAMESPACE/MODEL/TAG`` JSON files, each naming its layers by
  digest; the layer of media type ``application/vnd.ollama.image.model`` is the GGUF, stored as
  ``blobs/sha256-HEX`` (``sha256:HEX`` in older versions).
* **GPT4All**: the ``modelPath`` of its ``GPT4All.ini`` when set, else its download folder
  (``~/.local/share/nomic.ai/GPT4All``; ``~/Library/Application Support/nomic.ai/GPT4All``;
  ``%LOCALAPPDATA%\\nomic.ai\\GPT4All``), and ``~/.cache/gpt4all`` of its Python bindings. Inside: ``file.gguf``.
* ``SHELFWISE_MODEL_DIRS``: more folders of GGUF files (separated like ``PATH``).

:func:`find_models` lists the GGUFs there with what their headers say (:func:`~shelfwise.core.models.gguf_meta.
read_header`: name, quantisation, whether a chat template is inside; only the header is read, never the weights);
:func:`find_model` resolves a name ``shelfwise models`` printed (``smollm2:135m``, ``ollama:smollm2:135m``) to its
file. Nothing here downloads or starts a tool; a folder that is missing is skipped, a file that is not a model is
listed with the reason it cannot be used.
"""

from __future__ import annotations

import configparser
import json
import os
import platform
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from shelfwise.core import environment
from shelfwise.core.json_types import JSONObject
from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.gguf_meta import GgufHeader, NotGguf, read_header

LM_STUDIO, OLLAMA, GPT4ALL, FOLDER = "LM Studio", "Ollama", "GPT4All", "folder"
#: The prefix of each tool in a model's reference (``ollama:smollm2:135m``).
TOOL_KEYS = {LM_STUDIO: "lmstudio", OLLAMA: "ollama", GPT4ALL: "gpt4all", FOLDER: "folder"}
OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model"
OLLAMA_REGISTRY = "registry.ollama.ai"
#: Architectures of GGUFs that hold no text model of their own (a vision projector beside a model).
NOT_TEXT = frozenset({"clip", "mllama_vision"})
_MAX_DEPTH = 4  # LM Studio's publisher/model/file.gguf, with a level to spare


@dataclass(frozen=True)
class ModelFolder:
    """A folder one tool keeps its models in, and why it is looked at (``default``, ``OLLAMA_MODELS``...)."""

    tool: str
    path: Path
    why: str

    @property
    def exists(self) -> bool:
        return _is_dir(self.path)


@dataclass(frozen=True)
class FoundModel:
    """A GGUF found in a tool's model folder, described from its header."""

    tool: str
    name: str  # as the tool shows it: "smollm2:135m" (Ollama), "publisher/model/file.gguf" (LM Studio), the file's
    path: Path
    size: int
    header: GgufHeader | None  # None: the header could not be read (``problem`` says why)
    problem: str = ""

    @property
    def ref(self) -> str:
        """The name with its tool: what ``--model`` takes when two tools have a model of the same name."""
        return f"{TOOL_KEYS[self.tool]}:{self.name}"

    @property
    def quantisation(self) -> str:
        return self.header.quantisation if self.header is not None else ""

    @property
    def has_chat_template(self) -> bool:
        return bool(self.header is not None and self.header.chat_template)

    @property
    def title(self) -> str:
        """The model's own name from its header (``SmolLM2 135M Instruct``), else the name in the tool."""
        return self.header.name if self.header is not None and self.header.name else self.name

    @property
    def why_not(self) -> str:
        """Why it cannot be the answer model ("" when it can)."""
        if self.problem:
            return self.problem
        assert self.header is not None
        if self.header.kind == "encoder":
            return f"a sentence encoder ({self.header.architecture}), not a generative model"
        if self.header.architecture in NOT_TEXT:
            return f"a vision projector ({self.header.architecture}), not a text model"
        return ""

    @property
    def usable(self) -> bool:
        return not self.why_not

    def as_json(self) -> JSONObject:
        return {"tool": self.tool, "name": self.name, "ref": self.ref, "model": self.title, "path": str(self.path),
                "size": self.size, "quantisation": self.quantisation, "chat_template": self.has_chat_template,
                "architecture": self.header.architecture if self.header is not None else "",
                "usable": self.usable, "why_not": self.why_not}


# --------------------------------------------------------------------------- where each tool keeps its models


def _env_path(env: Mapping[str, str], key: str) -> Path | None:
    value = env.get(key, "").strip()
    return Path(value).expanduser() if value else None


def _lm_studio_app_data(system: str, env: Mapping[str, str], home: Path) -> Path:
    """Where the LM Studio app (Electron) keeps its own settings."""
    if system == "Windows":
        return (_env_path(env, "APPDATA") or home / "AppData" / "Roaming") / "LM Studio"
    if system == "Darwin":
        return home / "Library" / "Application Support" / "LM Studio"
    return (_env_path(env, "XDG_CONFIG_HOME") or home / ".config") / "LM Studio"


def _lm_studio(system: str, env: Mapping[str, str], home: Path) -> Iterator[ModelFolder]:
    homes: list[tuple[Path, str]] = []
    pointer = home / ".lmstudio-home-pointer"
    try:
        pointed = pointer.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        pointed = ""
    if pointed:
        homes.append((Path(pointed.splitlines()[0].strip()).expanduser(), pointer.name))
    homes += [(home / ".lmstudio", "default"), (home / ".cache" / "lm-studio", "default before LM Studio 0.3")]
    for settings in [h / "settings.json" for h, _ in homes] + [_lm_studio_app_data(system, env, home) /
                                                                  "settings.json"]:
        try:
            data = json.loads(settings.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        folder = data.get("downloadsFolder") if isinstance(data, dict) else None
        if isinstance(folder, str) and folder.strip():
            yield ModelFolder(LM_STUDIO, Path(folder.strip()).expanduser(), f"downloadsFolder in {settings}")
    for lms_home, why in homes:
        yield ModelFolder(LM_STUDIO, lms_home / "models", why)


def _ollama(system: str, env: Mapping[str, str], home: Path) -> Iterator[ModelFolder]:
    chosen = _env_path(env, "OLLAMA_MODELS")
    if chosen is not None:  # Ollama then keeps its models there only
        yield ModelFolder(OLLAMA, chosen, "OLLAMA_MODELS")
        return
    yield ModelFolder(OLLAMA, home / ".ollama" / "models", "default")
    if system == "Linux":
        yield ModelFolder(OLLAMA, Path("/usr/share/ollama/.ollama/models"), "default of the Linux service")


def _gpt4all(system: str, env: Mapping[str, str], home: Path) -> Iterator[ModelFolder]:
    if system == "Windows":
        ini = (_env_path(env, "APPDATA") or home / "AppData" / "Roaming") / "nomic.ai" / "GPT4All.ini"
        default = (_env_path(env, "LOCALAPPDATA") or home / "AppData" / "Local") / "nomic.ai" / "GPT4All"
    elif system == "Darwin":
        ini = home / ".config" / "nomic.ai" / "GPT4All.ini"
        default = home / "Library" / "Application Support" / "nomic.ai" / "GPT4All"
    else:
        ini = (_env_path(env, "XDG_CONFIG_HOME") or home / ".config") / "nomic.ai" / "GPT4All.ini"
        default = (_env_path(env, "XDG_DATA_HOME") or home / ".local" / "share") / "nomic.ai" / "GPT4All"
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(ini, encoding="utf-8")
        chosen = parser.get("General", "modelPath", fallback="").strip().strip('"')
    except (configparser.Error, UnicodeDecodeError):
        chosen = ""
    if chosen:
        yield ModelFolder(GPT4ALL, Path(chosen).expanduser(), f"modelPath in {ini}")
    yield ModelFolder(GPT4ALL, default, "default")
    yield ModelFolder(GPT4ALL, home / ".cache" / "gpt4all", "default of its Python bindings")


def model_folders(system: str | None = None, env: Mapping[str, str] | None = None,
                  home: Path | None = None) -> list[ModelFolder]:
    """The folders each tool keeps its models in on ``system`` (``Linux``, ``Darwin``, ``Windows``; default: this
    one), with ``env`` (default: the environment) and ``home`` (default: the user's) -- every place, whether or not
    it exists, each once."""
    system = system or platform.system()
    env = environment.system() if env is None else env
    home = home if home is not None else Path.home()
    out: list[ModelFolder] = []
    seen: set[tuple[str, Path]] = set()
    for source in (_lm_studio, _ollama, _gpt4all):
        for folder in source(system, env, home):
            if (folder.tool, folder.path) not in seen:
                seen.add((folder.tool, folder.path))
                out.append(folder)
    sep = ";" if system == "Windows" else ":"
    for part in env.get("SHELFWISE_MODEL_DIRS", "").split(sep):
        if part.strip() and (FOLDER, Path(part.strip())) not in seen:
            seen.add((FOLDER, Path(part.strip())))
            out.append(ModelFolder(FOLDER, Path(part.strip()).expanduser(), "SHELFWISE_MODEL_DIRS"))
    return out


# --------------------------------------------------------------------------- what is in them

def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; False when it cannot be looked at (``Path.is_file`` raises for a permission
    denied, as for the Linux service's ``/usr/share/ollama`` seen by another user)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


_headers: dict[tuple[Path, int, int], tuple[GgufHeader | None, str]] = {}


def _described(tool: str, name: str, path: Path) -> FoundModel | None:
    """The model at ``path`` with its header read (cached by path, size and time of change); None when the file is
    gone or cannot be listed."""
    try:
        st = path.stat()
    except OSError:
        return None
    key = (path, st.st_size, st.st_mtime_ns)
    if key not in _headers:
        try:
            _headers[key] = (read_header(path), "")
        except NotGguf as exc:
            _headers[key] = (None, f"not a usable GGUF: {exc}")
        except OSError as exc:
            _headers[key] = (None, f"cannot be read: {exc.strerror or exc}")
    header, problem = _headers[key]
    return FoundModel(tool, name, path, st.st_size, header, problem)


def _gguf_files(root: Path, depth: int = _MAX_DEPTH) -> Iterator[Path]:
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.suffix.lower() == ".gguf" and _is_file(entry):
            yield entry
        elif depth > 1 and _is_dir(entry):
            yield from _gguf_files(entry, depth - 1)


def _in_folder(folder: ModelFolder) -> Iterator[FoundModel]:
    depth = 1 if folder.tool == GPT4ALL else _MAX_DEPTH
    for path in _gguf_files(folder.path, depth):
        found = _described(folder.tool, path.relative_to(folder.path).as_posix(), path)
        if found is not None:
            yield found


def ollama_name(host: str, namespace: str, model: str, tag: str) -> str:
    """The name Ollama shows for a manifest: ``model:tag`` from its own library, ``namespace/model:tag`` from its
    registry, ``host/namespace/model:tag`` from another (``hf.co/...``)."""
    if host == OLLAMA_REGISTRY:
        return f"{model}:{tag}" if namespace == "library" else f"{namespace}/{model}:{tag}"
    return f"{host}/{namespace}/{model}:{tag}"


def _in_ollama(folder: ModelFolder) -> Iterator[FoundModel]:
    manifests = folder.path / "manifests"
    try:
        files = sorted(p for p in manifests.glob("*/*/*/*") if _is_file(p))
    except OSError:
        return
    for manifest in files:
        host, namespace, model, tag = manifest.relative_to(manifests).parts
        name = ollama_name(host, namespace, model, tag)
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue  # not a manifest (a stray file), or one being written
        layers = data.get("layers") if isinstance(data, dict) else None
        digest = next((layer.get("digest") for layer in layers or () if isinstance(layer, dict)
                       and layer.get("mediaType") == OLLAMA_MODEL_LAYER), None)
        if not isinstance(digest, str) or ":" not in digest:
            continue  # a model of another format (safetensors layers): no GGUF to give llama.cpp
        blobs = [folder.path / "blobs" / digest.replace(":", "-", 1), folder.path / "blobs" / digest]
        blob = next((b for b in blobs if _is_file(b)), None)
        if blob is None:
            yield FoundModel(OLLAMA, name, blobs[0], 0, None, f"its manifest names {digest[:19]}..., which is not "
                             "in Ollama's blobs (a pull that did not finish)")
            continue
        found = _described(OLLAMA, name, blob)
        if found is not None:
            yield found


def ollama_chat(blob: Path) -> bool | None:
    """Whether Ollama prompts the GGUF at ``blob`` (a file of its ``blobs``) as a chat model: True when a manifest
    naming it as its model has a template of turns (a model pulled to chat with), False when its template is the
    bare prompt (``{{ .Prompt }}``, Ollama's ``-text`` base models) or it has none; None when ``blob`` is not in an
    Ollama store. The blob's own name says nothing (``sha256-HEX``), so the manifest is what knows."""
    if blob.parent.name != "blobs" or not blob.name.startswith("sha256"):
        return None
    digest = "sha256:" + blob.name[len("sha256") + 1:]
    store = blob.parent.parent
    try:
        manifests = sorted(p for p in (store / "manifests").glob("*/*/*/*") if _is_file(p))
    except OSError:
        return None
    answer: bool | None = None
    for manifest in manifests:
        try:
            layers = json.loads(manifest.read_text(encoding="utf-8")).get("layers") or []
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            continue
        kinds = {layer.get("mediaType"): layer.get("digest") for layer in layers if isinstance(layer, dict)}
        if kinds.get(OLLAMA_MODEL_LAYER) != digest:
            continue
        template = kinds.get("application/vnd.ollama.image.template")
        text = ""
        if isinstance(template, str):
            for name in (template.replace(":", "-", 1), template):
                try:
                    text = (store / "blobs" / name).read_text(encoding="utf-8", errors="replace")
                    break
                except OSError:
                    continue
        chat = bool(text.strip()) and "".join(text.split()) not in ("{{.Prompt}}", "{{.Prompt}}{{.Response}}")
        answer = answer or chat
    return answer


def find_models(folders: list[ModelFolder] | None = None) -> list[FoundModel]:
    """Every GGUF in ``folders`` (default: :func:`model_folders`), in the order of the folders, then by name; a
    folder reached twice (a link, or ``SHELFWISE_MODEL_DIRS`` naming a tool's folder) is read once."""
    out: list[FoundModel] = []
    seen: set[Path] = set()
    for folder in model_folders() if folders is None else folders:
        real = Path(os.path.realpath(folder.path))  # a folder that is a symlink loop: as it is (resolve() raises)
        if real in seen or not _is_dir(folder.path):
            continue
        seen.add(real)
        found = _in_ollama(folder) if folder.tool == OLLAMA else _in_folder(folder)
        out += sorted(found, key=lambda m: m.name.lower())
    return out


def find_model(spec: str, models: list[FoundModel] | None = None) -> FoundModel | None:
    """The found model ``spec`` names: its reference (``ollama:smollm2:135m``) or its name in its tool
    (``smollm2:135m``), either in any case; None when none is named so. BackendError when the name is two tools'
    (the reference tells them apart) or the model cannot be the answer model."""
    models = find_models() if models is None else models
    key = spec.strip().lower()
    hits = [m for m in models if m.ref.lower() == key] or [m for m in models if m.name.lower() == key]
    if not hits:
        return None
    if len(hits) > 1:
        raise BackendError(f"{spec!r} names {len(hits)} models: give one of " + ", ".join(m.ref for m in hits))
    if not hits[0].usable:
        raise BackendError(f"{hits[0].ref} ({hits[0].path}) cannot be the answer model: {hits[0].why_not}")
    return hits[0]
