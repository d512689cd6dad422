"""Who closes a model: a backend, encoder or judge handed to a ``Shelf`` is lent (its maker closes it, as a test's
session-wide model or a benchmark's encoder is); what the ``Shelf`` loads itself is closed with it. Fakes that
count ``close``: a unit test of the ownership rule (``core/models/loaded.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shelfwise.core.models import factory
from shelfwise.core.models.fake import FakeBackend
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from tests.fakes import HashEmbedder


class CountingBackend(FakeBackend):
    def __init__(self) -> None:
        super().__init__()
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_lent_models_stay_open_and_usable_after_the_shelf_closes(tmp_path: Path) -> None:
    backend, embedder = CountingBackend(), CountingEmbedder()
    with Shelf(Settings(db_path=tmp_path / "lib.db"), backend=backend, embedder=embedder) as shelf:
        assert shelf.backend is backend and shelf.embedder is embedder
    assert (backend.closed, embedder.closed) == (0, 0)
    # the next library is asked with the same models, as the tests' session-wide answer model is
    with Shelf(Settings(db_path=tmp_path / "other.db"), backend=backend, embedder=embedder) as shelf:
        assert shelf.walk.backend is backend and shelf.walk.embedder is embedder
    assert (backend.closed, embedder.closed) == (0, 0)


def test_models_the_shelf_loads_are_closed_with_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loaded: list[CountingBackend | CountingEmbedder] = []

    def backend_for(settings: Settings) -> CountingBackend:
        loaded.append(CountingBackend())
        return loaded[-1]  # type: ignore[return-value]

    def embedder_for(spec: str | None, **kwargs: object) -> CountingEmbedder:
        loaded.append(CountingEmbedder())
        return loaded[-1]  # type: ignore[return-value]

    monkeypatch.setattr(factory, "make_backend", backend_for)
    monkeypatch.setattr(factory, "make_embedder", embedder_for)
    lent = CountingEmbedder()
    with Shelf(Settings(db_path=tmp_path / "lib.db"), embedder=lent) as shelf:
        assert shelf.backend is loaded[0] and shelf.embedder is lent
    assert [m.closed for m in loaded] == [1] and lent.closed == 0
    with Shelf(Settings(db_path=tmp_path / "lib.db", embedder_path="minilm"), backend=CountingBackend()) as shelf:
        assert shelf.embedder is loaded[1]
    assert [m.closed for m in loaded] == [1, 1]
