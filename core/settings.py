"""User-facing settings shared by the CLI and the GUI, and the one file that keeps them.

The file is ``settings.json`` in the data dir, beside the libraries (``SHELFWISE_SETTINGS`` names another file):
one JSON object with a ``version`` and the fields of :data:`PERSISTED`. Both front ends read it with
:func:`load_settings`; the window writes it from its Settings dialog, the command line only reads it and its
flags override it for that run. Keys this version does not know are kept when the file is written again (a newer
Shelfwise's settings survive an older one); a value of the wrong type is dropped (its default is used), a number
outside the range a command can use (:data:`LIMITS`) is clamped into it, each with a note naming the key; a damaged
file, or one that is not a regular file of settings' size (a FIFO, a device), gives the defaults and a message that
says so, never an exception or a hang. The encoder is not here: it is the library's
(``shelfwise.core.indexing.encoder``).
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

from shelfwise.core.environment import variable

Readout = Literal["fused", "likelihood", "binary", "embedding"]
READOUTS: tuple[Readout, ...] = get_args(Readout)
#: Sentence encoders Shelfwise installs itself (``Settings.embedder_path`` may also be an embedding GGUF's path).
EMBEDDER_NAMES = ("minilm", "embeddinggemma")
#: The encoder every new library gets (an existing library keeps its own: ``shelfwise.core.indexing.encoder``).
DEFAULT_EMBEDDER = "embeddinggemma"


def as_readout(value: str) -> Readout:
    """``value`` as a :data:`Readout`; ValueError naming the choices when it is none of them."""
    for readout in READOUTS:
        if readout == value:
            return readout
    raise ValueError(f"unknown readout {value!r}; choose one of {', '.join(READOUTS)}")


@dataclass(frozen=True)
class Budgets:
    """Per-level budgets of the walk (DecisionRAG Algorithm 1).

    ``first_keep_ratio`` is the share of first-level candidates kept (leans to recall), ``keep`` the number kept at
    every later level, ``passages`` (``r``) how many passages the last level returns, ``request_size`` the most
    candidates one request compares, ``hybrid`` how many dense and lexical candidates are added to the last level
    (0 = off).
    """

    first_keep_ratio: float = 0.3
    keep: int = 4
    passages: int = 10
    request_size: int = 48
    hybrid: int = 20
    branching: int = 24  # most children a node may have before it is grouped (topic clusters)

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, str | int | float] | None) -> Budgets:
        """The known keys of ``data``, each read as its default's type (int or float)."""
        defaults = cls().to_dict()
        known: dict[str, Any] = {k: type(defaults[k])(v) for k, v in (data or {}).items() if k in defaults}
        return cls(**known)


@dataclass(frozen=True)
class Settings:
    db_path: Path | None = None  # None = the user data dir's library.db
    model_path: str | None = None  # None = the bundled Gemma 3 270M
    # The sentence encoder: None = the library's own (DEFAULT_EMBEDDER for a new library); "minilm",
    # "embeddinggemma" or a GGUF path switches the library to it (re-embedded by its next index run).
    embedder_path: str | None = None
    backend_url: str | None = None  # an OpenAI-compatible server instead of the in-process model
    n_gpu_layers: int = -1  # -1: every layer on the GPU when this llama.cpp build can offload, else the CPU
    n_threads: int | None = None
    readout: Readout = "fused"
    budgets: Budgets = field(default_factory=Budgets)
    adaptive: bool = False
    answer_passages: int = 5
    answer_generate: bool = True  # after the extracted sentence, let the model write an answer (shown if grounded)
    use_calibration: bool = True
    # Calibration may refit the ranking on probes (else it fits only the prior's scale and the budgets). Off: refitted
    # rankings lost to the prior on ConditionalQA's tune half (docs/benchmarks.md, "Ranking refit on probes").
    rank_fit: bool = False
    # The relevance judge (core/models/encoders/judges.py): None/"off", "bundled", a GGUF path or a rerank server
    # URL. Off by default: read beside the shipped encoder, the judge that ships costs passage Hit@1 on ConditionalQA's
    # tune half under every rule tried (docs/eval/judge.md).
    judge: str | None = None
    judge_levels: tuple[str, ...] = ("section", "passage")
    judge_top: int = 24  # candidates per level the judge reads (the best by the other evidence)


#: The range of each number the settings hold (``budgets.KEY`` for a budget): what the commands can run with, and
#: what the window's Settings dialog offers. Past it a value is clamped, with a note naming the key: no budget of 0
#: (a walk that keeps nothing answers "Not found"), no branching below 2 (topic clusters need two), no more threads
#: than llama.cpp can start (a value far past it ends the process).
LIMITS: dict[str, tuple[float, float]] = {
    "n_gpu_layers": (-1, 999),
    "n_threads": (1, 256),
    "answer_passages": (1, 20),
    "judge_top": (1, 1000),
    "budgets.first_keep_ratio": (0.01, 1.0),
    "budgets.keep": (1, 1000),
    "budgets.passages": (1, 1000),
    "budgets.request_size": (1, 1000),
    "budgets.hybrid": (0, 1000),
    "budgets.branching": (2, 1000),
}


@dataclass(frozen=True)
class Declared:
    """A setting the front ends show, declared once: its key (a field of :class:`Settings`; ``budgets.KEY`` for a
    budget), the group the window shows it in (``models``, or ``advanced`` under the collapsed Advanced), its label,
    the help both front ends give (the dialog's tooltip, the command line's option help) and its choices. Its type
    and default are the :class:`Settings` field's, its range is in :data:`LIMITS`."""

    key: str
    group: str
    label: str
    help: str
    choices: tuple[str, ...] = ()


#: Every setting the Settings dialog and the commands' options show, in the dialog's order: the dialog's rows and
#: the options' help are built from these (``app/gui/settings_dialog.py``, ``setting_help`` in ``app/cli/group.py``).
DECLARED: tuple[Declared, ...] = (
    Declared("model_path", "models", "Answer model (GGUF)",
             "A GGUF file to use instead of the bundled Gemma 3 270M, or the name of a model of LM Studio, Ollama or "
             "GPT4All as `shelfwise models` lists it."),
    Declared("judge", "models", "Relevance judge",
             "Relevance judge for the walk: bundled, a cross-encoder GGUF path, a rerank server URL, or off "
             "(default: off; SHELFWISE_JUDGE sets it too).", ("off", "bundled")),
    Declared("n_gpu_layers", "models", "GPU layers",
             "Layers offloaded to the GPU: automatic (-1) puts every layer of the answer model and the encoder there "
             "when llama.cpp was built for a GPU (CUDA, Vulkan, Metal); 0 keeps them on the CPU."),
    Declared("n_threads", "models", "Threads", "CPU threads for the models (automatic: one per core)."),
    Declared("readout", "advanced", "Readout",
             "How each candidate is scored: fused evidence (default), query likelihood, Yes/No (binary), or the "
             "embedder alone.", READOUTS),
    Declared("answer_passages", "advanced", "Passages for the answer", "Passages the answer is written from."),
    Declared("adaptive", "advanced", "Adaptive retrieval",
             "Adaptive retrieval (DeepRAG): split the question and let the model decide, per part, whether to search "
             "the documents (several questions typed at once are each searched anyway, no model deciding)."),
    Declared("budgets.first_keep_ratio", "advanced", "first keep ratio",
             "Share of the first level kept (leans to recall)"),
    Declared("budgets.keep", "advanced", "keep", "Candidates kept at every later level"),
    Declared("budgets.passages", "advanced", "passages", "Passages the last level returns (r)"),
    Declared("budgets.request_size", "advanced", "request size", "Most candidates compared in one request"),
    Declared("budgets.hybrid", "advanced", "hybrid", "Dense + lexical candidates added to the last level (0 = off)"),
    Declared("budgets.branching", "advanced", "branching", "Most children a node may have before it is grouped"),
)


def declared(key: str) -> Declared:
    """The declaration of setting ``key`` (KeyError when it is not one the front ends show)."""
    for d in DECLARED:
        if d.key == key:
            return d
    raise KeyError(key)


def whole_range(key: str) -> tuple[int, int]:
    """``LIMITS[key]`` of a whole-number setting, as the front ends' options and spin boxes take it."""
    low, high = LIMITS[key]
    return int(low), int(high)


#: The most a settings file may hold (a few hundred bytes are usual): a larger file is not read.
MAX_SETTINGS_BYTES = 1 << 20

#: The version of the settings file's schema (written as ``version``); a file of a newer version is read for the
#: keys this one knows.
SETTINGS_VERSION = 1
SETTINGS_FILE = "settings.json"
#: The fields of :class:`Settings` the file keeps: not the library (``db_path``, the front end's choice) and not the
#: encoder (the library's own).
PERSISTED = ("model_path", "backend_url", "n_gpu_layers", "n_threads", "readout", "budgets", "adaptive",
             "answer_passages", "answer_generate", "use_calibration", "rank_fit", "judge", "judge_levels",
             "judge_top")


@dataclass(frozen=True)
class LoadedSettings:
    """What reading the settings file gave: the settings, where the file is, whether it was there, and a message
    for the user when it could not be read (empty when it was fine or absent)."""

    settings: Settings
    path: Path
    found: bool = False
    problem: str = ""


def settings_path() -> Path:
    """The settings file: ``SHELFWISE_SETTINGS`` when set, else ``settings.json`` in the data dir."""
    env = variable("SHELFWISE_SETTINGS")
    if env:
        return Path(env).expanduser()
    from shelfwise.core.paths import data_dir

    return data_dir() / SETTINGS_FILE


def _number(key: str, value: object, whole: bool, notes: list[str]) -> float:
    """``value`` as a number in ``LIMITS[key]`` (clamped, with a note); TypeError when it is not a finite number
    (a numeric string is read as its number)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TypeError(f"{key} must be a number")
    try:
        number = float(value) if not isinstance(value, int) else value
    except ValueError:
        raise TypeError(f"{key} must be a number") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise TypeError(f"{key} must be a finite number")
    if whole and isinstance(value, str | float) and not float(number).is_integer():
        raise TypeError(f"{key} must be a whole number")
    low, high = LIMITS.get(key, (-math.inf, math.inf))
    if not low <= number <= high:
        clamped = low if number < low else high
        shown = (lambda x: f"{int(x)}") if whole else (lambda x: f"{x:g}")
        notes.append(f"{key} {_short(value)} is outside {shown(low)}..{shown(high)}; {shown(clamped)} is used")
        number = clamped
    return int(number) if whole else float(number)


def _budgets(value: object, notes: list[str]) -> Budgets:
    """The budgets of the file: each known key checked (:func:`_number`); one that is not a number keeps its
    default, with a note."""
    if not isinstance(value, dict):
        raise TypeError("budgets must be an object")
    base = Budgets()
    defaults = base.to_dict()
    changes: dict[str, Any] = {}  # keyword arguments of replace(), each field's own type
    for key, raw in value.items():
        if key not in defaults:
            continue
        default = defaults[key]
        try:
            changes[key] = _number(f"budgets.{key}", raw, isinstance(default, int), notes)
        except TypeError:
            notes.append(f"budgets.{key} {raw!r} is not a number it can use; the default {default} is used")
    return replace(base, **changes)


def _typed(name: str, value: object, default: object, notes: list[str]) -> object:
    """``value`` as the field ``name`` holds it, a number clamped into :data:`LIMITS` (said in ``notes``);
    ValueError/TypeError when it cannot be."""
    if name == "budgets":
        return _budgets(value, notes)
    if name == "readout":
        return as_readout(str(value))
    if name == "judge_levels":
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise TypeError("judge_levels must be a list of names")
        return tuple(value)
    if name in ("model_path", "backend_url", "judge", "n_threads"):
        if value is None:
            return None
        if name == "n_threads":
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError("n_threads must be a whole number")
            return _number(name, value, True, notes) if value else None  # 0: automatic
        if not isinstance(value, str):
            raise TypeError(f"{name} must be text")
        return value or None
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be true or false")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be a whole number")
        return _number(name, value, True, notes) if name in LIMITS else value
    return value


def settings_from_dict(data: dict[str, object], base: Settings | None = None) -> tuple[Settings, list[str]]:
    """The persisted fields of ``data`` over ``base``, and a note per key whose value was unusable (its default
    stays) or out of range (clamped), each naming the key."""
    base = base or Settings()
    current = asdict(base)
    changes: dict[str, Any] = {}  # keyword arguments of replace(), each field's own type
    notes: list[str] = []
    for name in PERSISTED:
        if name not in data:
            continue
        try:
            changes[name] = _typed(name, data[name], current[name], notes)
        except (TypeError, ValueError):
            notes.append(f"{name} {_short(data[name])} is not a value it can use; the default is used")
    return replace(base, **changes), notes


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def settings_to_dict(settings: Settings) -> dict[str, object]:
    """The persisted fields as JSON values."""
    out: dict[str, object] = {}
    current = asdict(settings)  # the budgets as a dict already
    for name in PERSISTED:
        value = current[name]
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def _kind(mode: int) -> str:
    for test, what in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
                       (stat.S_ISDIR, "a folder"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return "not a regular file"


def _read_text(path: Path) -> str:
    """The text of the regular file at ``path``, opened without waiting (a FIFO with no writer would block the
    open) and read only when it is a regular file of at most :data:`MAX_SETTINGS_BYTES`; OSError (ValueError for
    what it is instead) otherwise."""
    fd = os.open(path, os.O_RDONLY | (os.O_NONBLOCK | os.O_NOCTTY if os.name == "posix" else 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"it is {_kind(st.st_mode)}, not a file")
        if st.st_size > MAX_SETTINGS_BYTES:
            raise ValueError(f"it holds {st.st_size:,} bytes, more than settings take ({MAX_SETTINGS_BYTES:,})")
        with os.fdopen(os.dup(fd), "rb") as fh:
            data = fh.read(MAX_SETTINGS_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_SETTINGS_BYTES:  # grew while read
        raise ValueError(f"it holds more than settings take ({MAX_SETTINGS_BYTES:,} bytes)")
    return data.decode("utf-8")


def _read(path: Path) -> tuple[dict[str, object] | None, str]:
    """The file's object (None when absent or unreadable) and what was wrong with it."""
    try:
        text = _read_text(path)
    except FileNotFoundError:
        return None, ""
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read the settings file {path} ({exc}); using the default settings"
    except ValueError as exc:
        return None, f"the settings file {path} is not read: {exc}; using the default settings"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, (f"the settings file {path} is damaged ({exc.msg}, line {exc.lineno}); using the default "
                      "settings (saving them from the window's Settings writes a new file)")
    if not isinstance(data, dict):
        return None, f"the settings file {path} does not hold settings (not a JSON object); using the defaults"
    return data, ""


def load_settings(path: Path | None = None, base: Settings | None = None) -> LoadedSettings:
    """The settings in the file at ``path`` (default :func:`settings_path`) over ``base``. Never raises for what
    is in the file: a damaged one gives ``base`` and :attr:`LoadedSettings.problem`."""
    path = path if path is not None else settings_path()
    base = base or Settings()
    data, problem = _read(path)
    if data is None:
        return LoadedSettings(base, path, found=path.exists(), problem=problem)
    settings, notes = settings_from_dict(data, base)
    if notes:
        problem = f"the settings file {path}: {'; '.join(notes)}"
    return LoadedSettings(settings, path, found=True, problem=problem)


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Write the persisted fields of ``settings`` to the file (atomically: a temporary file renamed over it),
    keeping the keys of the file this version does not know. Returns the path; OSError when it cannot be
    written."""
    path = path if path is not None else settings_path()
    old, _ = _read(path)
    known = {"version", *PERSISTED}
    data: dict[str, object] = {k: v for k, v in (old or {}).items() if k not in known}
    data.update({"version": SETTINGS_VERSION, **settings_to_dict(settings)})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path

