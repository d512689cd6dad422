"""Removing documents never races another indexer: ``Shelf.remove_documents`` re-indexes under the one-indexer lock
(``Shelf.index``, waiting for the other one as ``Shelf.ingest`` does). The lock is held here as another indexer
(a background ``shelfwise index``, or an ingest's index step) would hold it; the removal's index step waits for it,
then runs. A fake decision model and the hashing test encoder."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from shelfwise.core.indexing import finish
from shelfwise.core.indexing.state import exclusive_indexer, index_state
from shelfwise.core.models.fake import FakeBackend
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store.db import Store
from tests.fakes import HashEmbedder


def test_removing_documents_indexes_only_when_no_other_indexer_runs(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "lib.db"
    folder = tmp_path / "cats"
    folder.mkdir()
    for i in range(3):
        (folder / f"cat{i}.md").write_text(f"# Cat {i}\n\nThe cat number {i} sleeps all day long.\n")
    with Shelf(Settings(db_path=db), backend=FakeBackend(), embedder=HashEmbedder()) as shelf:
        shelf.ingest([folder], "default", embed=False)
        doc = next(d for d in shelf.documents("default") if d.path.endswith("cat0.md"))

    calls: list[float] = []
    real = finish.finish_index

    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(time.monotonic())
        return real(*args, **kwargs)

    monkeypatch.setattr(finish, "finish_index", recorded)
    errors: list[BaseException] = []

    def remove() -> None:
        try:
            with Shelf(Settings(db_path=db), backend=FakeBackend(), embedder=HashEmbedder()) as shelf:
                shelf.remove_documents([doc.id], "default")
        except BaseException as exc:
            errors.append(exc)

    with exclusive_indexer(db) as alone:  # another indexer of the library is at work
        assert alone
        remover = threading.Thread(target=remove, name="remove")
        remover.start()
        time.sleep(1.5)
        assert remover.is_alive(), "the removal returned without waiting for the other indexer"
        assert not calls, "the removal re-indexed while another indexer held the library"
        released = time.monotonic()
    remover.join(timeout=120)
    assert not remover.is_alive() and not errors, errors
    assert len(calls) == 1 and calls[0] >= released  # it indexed once, after the other indexer finished
    with Store(db) as store:
        coll = store.find_collection("default")
        assert coll is not None
        assert sorted(Path(d.path).name for d in store.documents(coll.id)) == ["cat1.md", "cat2.md"]
        assert not index_state(store, coll.id, HashEmbedder.model_id).unfinished


def test_a_cancelled_removal_stops_waiting_for_the_other_indexer(tmp_path: Path, monkeypatch) -> None:
    """The window's removal job is cancelled (the window closes): it stops waiting, the document is gone, and the
    index is left for the next refresh."""
    db = tmp_path / "lib.db"
    note = tmp_path / "dog.md"
    note.write_text("# Dog\n\nThe dog barks at the postman.\n")
    with Shelf(Settings(db_path=db), backend=FakeBackend(), embedder=HashEmbedder()) as shelf:
        shelf.ingest([note], "default", embed=False)
        doc = shelf.documents("default")[0]
    calls: list[int] = []
    monkeypatch.setattr(finish, "finish_index", lambda *a, **k: calls.append(1))
    with exclusive_indexer(db), Shelf(Settings(db_path=db), backend=FakeBackend(), embedder=HashEmbedder()) as shelf:
        t0 = time.monotonic()
        shelf.remove_documents([doc.id], "default", cancel=lambda: True)
        assert time.monotonic() - t0 < 5
        assert shelf.documents("default") == [] and not calls
