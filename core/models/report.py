"""What ``shelfwise models`` shows: the answer model, the sentence encoder, whether llama.cpp can offload to a GPU,
the GGUFs LM Studio, Ollama and GPT4All keep (``core/models/found.py``), and (``check``) each model file against
its recorded sha256 and each model run once. The facade's ``models_report`` in ``core/api/models.py`` calls
:func:`models_report`; the command renders the :class:`ModelsReport` it returns."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from shelfwise.core.json_types import JSONObject
from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.found import FoundModel, ModelFolder, find_models, model_folders
from shelfwise.core.settings import Settings


@dataclass(frozen=True)
class AnswerModelShown:
    """The answer model as the report shows it, read once from the backend's own description (``info``, which
    ``--json`` prints whole): its name, size, where it runs and its file (or its server's URL)."""

    info: JSONObject  # ``DecisionBackend.info()``: what this backend says about itself
    name: str
    n_params: int | None  # None: served (``url``), not loaded here
    url: str
    path: str
    n_gpu_layers: int

    @classmethod
    def from_info(cls, info: JSONObject) -> AnswerModelShown:
        n_params = info.get("n_params")
        return cls(info, str(info.get("model", info.get("name", ""))),
                   int(n_params) if n_params is not None else None, str(info.get("url", "")),
                   str(info.get("path", "")), int(info.get("n_gpu_layers") or 0))


@dataclass(frozen=True)
class EncoderShown:
    """The sentence encoder the command runs with: ``name`` as a library records it (``minilm``, ``embeddinggemma``,
    a path or a URL), ``used_for`` "new libraries" or "this command" (the settings named it)."""

    name: str
    model_id: str
    dim: int
    path: str  # the GGUF, or for a server what it ran
    n_gpu_layers: int
    server: bool
    used_for: str

    def as_json(self) -> JSONObject:
        return {"name": self.name, "model_id": self.model_id, "dim": self.dim, "path": self.path,
                "n_gpu_layers": self.n_gpu_layers, "server": self.server, "for": self.used_for}


@dataclass(frozen=True)
class LibraryShown:
    """This invocation's library and the encoder it is built with."""

    path: str
    embedder: str

    def as_json(self) -> JSONObject:
        return {"path": self.path, "embedder": self.embedder}


@dataclass(frozen=True)
class ModelsCheck:
    """``--check``: both models ran (``generated``: the answer model's few tokens, in ``seconds``) and each file's
    verdict against its recorded sha256 (``files``)."""

    ok: bool
    generated: str
    seconds: float
    files: dict[str, str]

    def as_json(self) -> JSONObject:
        return {"ok": self.ok, "generated": self.generated, "seconds": self.seconds, "files": dict(self.files)}


@dataclass(frozen=True)
class ModelsReport:
    """The models of a command's settings: ``shelfwise models`` renders these objects as a table and (``as_json``)
    as its ``--json``."""

    generative: AnswerModelShown
    embedder: EncoderShown
    library: LibraryShown | None  # None: no library
    gpu_offload: bool
    check: ModelsCheck | None = None
    found: tuple[FoundModel, ...] = ()  # the GGUFs of LM Studio, Ollama and GPT4All (``core/models/found.py``)
    folders: tuple[ModelFolder, ...] = ()  # where they were looked for

    def as_json(self) -> JSONObject:
        out: JSONObject = {"generative": self.generative.info, "embedder": self.embedder.as_json(),
                           "library": self.library.as_json() if self.library is not None else None,
                           "gpu_offload": self.gpu_offload, "found": [m.as_json() for m in self.found],
                           "folders": [{"tool": f.tool, "path": str(f.path), "why": f.why, "exists": f.exists}
                                       for f in self.folders]}
        if self.check is not None:
            out["check"] = self.check.as_json()
        return out


def models_report(settings: Settings, encoder: str, library: tuple[Path, str] | None, *,
                  check: bool = False) -> ModelsReport:
    """The models ``settings`` name (``encoder``: the sentence encoder, as the library records one) and
    ``library`` (its path and its own encoder); ``check`` also checks each file's sha256 (:func:`check_model_files`)
    and runs both models once. BackendError when a model is missing, damaged or does not run."""
    from shelfwise.core.models.encoders.embedder import Embedder
    from shelfwise.core.models.factory import make_backend, make_embedder
    from shelfwise.core.models.llama.engine import gpu_offload_supported

    files: dict[str, str] = {}
    if check:
        files = check_model_files(replace(settings, embedder_path=encoder))
    backend = make_backend(settings)
    emb = make_embedder(encoder, n_threads=settings.n_threads)  # an http:// URL: the encoder server
    local = emb if isinstance(emb, Embedder) else None
    embedder = EncoderShown(
        name=encoder, model_id=emb.model_id,
        dim=local.dim if local is not None else int(emb.embed_one("dim").shape[0]),
        path=str(local.path) if local is not None else emb.ran,
        n_gpu_layers=local.n_gpu_layers if local is not None else 0, server=local is None,
        used_for="new libraries" if settings.embedder_path is None else "this command")
    checked: ModelsCheck | None = None
    if check:
        # loading alone does not run llama.cpp's compute kernels: a build for another CPU (pip's cached wheel)
        # loads, then dies on the first evaluated token; packaging/setup.sh rebuilds it when this fails
        t0 = time.perf_counter()
        text = "".join(backend.generate("The capital of France is", max_tokens=3))
        vec = emb.embed(["Shelfwise checks its embedder."])
        checked = ModelsCheck(ok=bool(vec.shape == (1, embedder.dim)), generated=text,
                              seconds=round(time.perf_counter() - t0, 2), files=files)
        if not checked.ok:
            raise BackendError(f"the embedder returned {vec.shape}, not (1, {embedder.dim})")
    emb.close()
    folders = model_folders()
    return ModelsReport(AnswerModelShown.from_info(backend.info()), embedder,
                        LibraryShown(str(library[0]), library[1]) if library is not None else None,
                        gpu_offload_supported(), checked, tuple(find_models(folders)), tuple(folders))


def check_model_files(settings: Settings) -> dict[str, str]:
    """Each model file against the sha256 recorded for it: the bundled answer model is re-assembled when it does
    not match; a user's GGUF with a ``.sha256`` beside it, or EmbeddingGemma, that does not match raises
    BackendError."""
    from shelfwise.core.models.encoders.embeddinggemma import (
        INSTALL_COMMAND,
        embeddinggemma_path,
        is_installed,
    )
    from shelfwise.core.models.llama.bundled import (
        BUNDLED_FILENAME,
        bundled_model_path,
        resolve_model,
        verify_model_file,
    )
    from shelfwise.core.paths import models_dir

    out: dict[str, str] = {}
    if settings.model_path is None:
        target = models_dir() / BUNDLED_FILENAME
        before = target.stat().st_mtime_ns if target.exists() else None
        path = bundled_model_path(deep=True)
        out["answer model"] = ("sha256 matches its record" if before == path.stat().st_mtime_ns else
                               "re-assembled from its package: it did not match its recorded sha256")
    else:
        out["answer model"] = verify_model_file(resolve_model(settings.model_path))
    spec = str(settings.embedder_path or "minilm")
    if spec.lower() == "embeddinggemma":
        path = embeddinggemma_path()
        if not is_installed(path, deep=True):
            raise BackendError(f"EmbeddingGemma ({path}) does not match its recorded sha256: the file is "
                               f"damaged; install it again with: {INSTALL_COMMAND}")
        out["embedder"] = "sha256 matches its record"
    elif spec.lower().startswith(("http://", "https://")):
        out["embedder"] = "on the encoder server (its file is checked there)"
    elif spec.lower() == "minilm":
        out["embedder"] = "sha256 matches its record (checked at every load)"
    else:
        out["embedder"] = verify_model_file(Path(spec).expanduser())
    return out


def install_embeddinggemma(wheels: Path, progress: Callable[[str, float], None] | None = None) -> Path:
    """Verify, assemble and convert EmbeddingGemma-300M from its 25 wheels in ``wheels`` (``packaging/setup.sh``);
    BackendError when they are not what they should be."""
    from shelfwise.core.models.encoders.chunked_zip import SupplyError
    from shelfwise.core.models.encoders.embeddinggemma import install

    try:
        return install(wheels, progress=progress)
    except SupplyError as exc:
        raise BackendError(str(exc)) from exc
