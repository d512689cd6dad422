"""Two ingests into one library never race each other's index: ``Shelf.ingest``'s own index step runs under the
one-indexer lock (``Shelf.index``), as ``shelfwise index`` and the CLI's ingest do. Two threads, each with its own
Shelf on the same SQLite file (the window's ingest worker beside a second one), a fake decision model and the
hashing test encoder; the indexer is timed so that unlocked index steps would overlap."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from shelfwise.core.indexing import finish
from shelfwise.core.indexing.state import index_state
from shelfwise.core.models.fake import FakeBackend
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store.db import Store
from tests.fakes import HashEmbedder


def test_two_ingests_index_one_at_a_time(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "lib.db"
    folders = []
    for name in ("cats", "dogs"):
        folder = tmp_path / name
        folder.mkdir()
        for i in range(3):
            (folder / f"{name}{i}.md").write_text(f"# {name} {i}\n\nThe {name} number {i} sleeps all day long.\n")
        folders.append(folder)
    Store(db).close()  # the library exists before both start (as when the window and a command share it)

    active, most, calls = [0], [0], []
    lock = threading.Lock()
    real = finish.finish_index

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
            calls.append(threading.current_thread().name)
        try:
            time.sleep(0.5)  # long enough that two unlocked index steps overlap
            return real(*args, **kwargs)
        finally:
            with lock:
                active[0] -= 1

    monkeypatch.setattr(finish, "finish_index", timed)
    errors: list[BaseException] = []

    def run(folder: Path) -> None:
        try:
            with Shelf(Settings(db_path=db), backend=FakeBackend(), embedder=HashEmbedder()) as shelf:
                shelf.ingest([folder], "default", embed=False)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(f,), name=f.name) for f in folders]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    assert sorted(calls) == ["cats", "dogs"]  # each ingest indexed (the second after the first, or found it done)
    assert most[0] == 1, "two ingests indexed the library at the same time"
    with Store(db) as store:
        coll = store.find_collection("default")
        assert coll is not None and len(store.documents(coll.id)) == 6
        assert not index_state(store, coll.id, HashEmbedder.model_id).unfinished
