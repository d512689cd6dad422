"""The backend factory: settings -> a DecisionBackend. Heavy imports happen only for the backend chosen."""

from __future__ import annotations

from shelfwise.core.models.backend import BackendError, DecisionBackend
from shelfwise.core.settings import Settings


def make_backend(settings: Settings) -> DecisionBackend:
    """The in-process llama.cpp model (bundled Gemma 3 270M unless ``model_path``), or a remote server when
    ``backend_url`` is set. The fake backend is never chosen here: it exists for unit tests only."""
    if settings.backend_url:
        try:
            from shelfwise.core.models.remote.backend import RemoteBackend
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise BackendError(f"the remote backend is not available: {exc}") from exc
        return RemoteBackend(settings.backend_url)
    from shelfwise.core.models.llama.backend import LlamaBackend

    return LlamaBackend(settings.model_path, n_gpu_layers=settings.n_gpu_layers, n_threads=settings.n_threads)
