"""The backend factory: settings -> a DecisionBackend. Heavy imports happen only for the backend chosen."""

from __future__ import annotations

from shelfwise.core.models.backend import BackendError, DecisionBackend, Embedder
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
    from shelfwise.core.models.llama.on_demand import OnDemandLlama

    # loaded by the first call that reads or writes: a question that only searches never loads it
    return OnDemandLlama(settings.model_path, n_gpu_layers=settings.n_gpu_layers, n_threads=settings.n_threads)


def make_embedder(spec: str | None, *, n_threads: int | None = None, n_gpu_layers: int = -1) -> Embedder:
    """The sentence encoder a setting names: ``http(s)://host:port``, a ``llama-server --embedding``
    (``core/models/remote/embedder.py``) with the same weights in process as its fallback
    (``core/models/remote/fallback.py``); else the in-process llama.cpp encoder (``minilm``, ``embeddinggemma``, a
    GGUF path, None for the default)."""
    from shelfwise.core.models.remote.embedder import is_server_url

    if spec is not None and is_server_url(spec):
        from shelfwise.core.models.remote.fallback import open_served_embedder

        return open_served_embedder(spec, n_threads=n_threads, n_gpu_layers=n_gpu_layers)
    from shelfwise.core.models.encoders.embedder import Embedder as LlamaEmbedder

    return LlamaEmbedder(spec, n_threads=n_threads, n_gpu_layers=n_gpu_layers)
