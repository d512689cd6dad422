"""The models one library is asked with, loaded on first use: the decision backend, the sentence encoder and the
optional relevance judge. The facade and the walk share one ``Models`` (``core/navigation/walk.py``), so the
answer path reaches the models without going through the facade."""

from __future__ import annotations

import logging
from collections.abc import Callable

from shelfwise.core.environment import variable
from shelfwise.core.models.backend import DecisionBackend, Embedder, RelevanceJudge
from shelfwise.core.settings import Settings

log = logging.getLogger(__name__)


class Models:
    """``backend``, ``embedder`` and ``judge`` handed in are lent: :meth:`close` leaves them open for the caller
    that made them (a test's session-wide model, a benchmark's encoder), as a ``Shelf`` leaves a store it was
    handed; what is loaded here is closed here. ``on_embedder``: called once with the encoder when it is first
    asked for (the facade renames what its library stored under the encoder's name of before the identity rule:
    ``core/indexing/encoder.py``)."""

    def __init__(self, settings: Settings, *, backend: DecisionBackend | None = None,
                 embedder: Embedder | None = None, judge: RelevanceJudge | None = None,
                 on_embedder: Callable[[Embedder], object] | None = None) -> None:
        self.settings = settings
        self._backend = backend
        self._embedder = embedder
        self._on_embedder = on_embedder
        # [judge], or [None] once looked for and none found; None: not looked for yet
        self._judge: list[RelevanceJudge | None] | None = [judge] if judge is not None else None
        self._lent: tuple[object, ...] = tuple(m for m in (backend, embedder, judge) if m is not None)

    @property
    def backend(self) -> DecisionBackend:
        if self._backend is None:
            from shelfwise.core.models.factory import make_backend

            self._backend = make_backend(self.settings)
        return self._backend

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            from shelfwise.core.models.factory import make_embedder

            self._embedder = make_embedder(self.settings.embedder_path, n_threads=self.settings.n_threads,
                                           n_gpu_layers=self.settings.n_gpu_layers)
        if self._on_embedder is not None:
            hook, self._on_embedder = self._on_embedder, None
            hook(self._embedder)
        return self._embedder

    @property
    def judge(self) -> RelevanceJudge | None:
        """The relevance judge the settings name (``Settings.judge``, else ``SHELFWISE_JUDGE``), loaded on first
        need; None when off (the default) or when it cannot be loaded (said once in the log)."""
        if self._judge is None:
            from shelfwise.core.models.encoders.judges import make_judge

            spec = self.settings.judge if self.settings.judge is not None else variable("SHELFWISE_JUDGE")
            try:
                self._judge = [make_judge(spec, n_threads=self.settings.n_threads)]
            except Exception as exc:  # a missing or broken judge must not stop search
                log.warning("relevance judge %r not used: %s", spec, exc)
                self._judge = [None]
        return self._judge[0]

    def close(self) -> None:
        """Close the models loaded here (not the lent ones) and forget them all."""
        for obj in (self._backend, self._embedder, *(self._judge or [])):
            if obj is not None and not any(obj is lent for lent in self._lent):
                obj.close()
        self._backend = None
        self._embedder = None
        self._judge = None


class HoldsModels:
    """What holds a library's :class:`Models` and asks them by name: the facade's parts (``core/api/opened.py``)
    and the walk the answer path is handed (``core/navigation/walk.py``) both read the models through these."""

    models: Models

    @property
    def backend(self) -> DecisionBackend:
        return self.models.backend

    @property
    def embedder(self) -> Embedder:
        return self.models.embedder

    @property
    def judge(self) -> RelevanceJudge | None:
        """The relevance judge the settings name, loaded on first need; None when off or unloadable."""
        return self.models.judge
