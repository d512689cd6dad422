"""Files are opened once, safely (issue 50): a file swapped for a symlink to a secret outside the folder after the
walk listed it is refused with a message, whether the swap comes before the main process reads it, before the parse
worker opens it, or while the parser reads it. Real parse workers, real SQLite, real parsers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shelfwise.core.ingestion.files import REPLACED, identity
from shelfwise.core.ingestion.runner import IngestProgress, ingest
from shelfwise.core.ingestion.worker import ParseWorker
from shelfwise.core.store.db import Store
from shelfwise.ingest.model import IngestError

SECRET = "The vault code is zanzibar-4471."


@pytest.fixture
def folder(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Alpha\n\nAlpha notes about kites.\n")
    (docs / "b.md").write_text("# Beta\n\nBeta notes about gliders.\n")
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text(f"# Secret\n\n{SECRET}\n")
    return docs, secret


def _swap(path: Path, secret: Path) -> None:
    path.unlink()
    path.symlink_to(secret)


def _texts(store: Store) -> str:
    return " ".join(str(r[0]) for r in store.conn.execute("SELECT text FROM nodes WHERE text IS NOT NULL"))


def test_a_file_swapped_for_a_link_after_the_walk_is_refused(folder: tuple[Path, Path], tmp_path: Path) -> None:
    docs, secret = folder

    def progress(p: IngestProgress) -> None:  # between the walk's listing and the reading of b.md
        if p.status == "working" and p.path.endswith("b.md") and not (docs / "b.md").is_symlink():
            _swap(docs / "b.md", secret)

    store = Store(tmp_path / "lib.db")
    try:
        report = ingest(store, [docs], progress=progress)
        by_name = {Path(r.path).name: r for r in report.results}
        assert by_name["a.md"].action == "added"
        assert by_name["b.md"].action == "failed" and REPLACED in by_name["b.md"].message
        assert "zanzibar" not in _texts(store) and "kites" in _texts(store)
    finally:
        store.close()


def test_the_worker_refuses_a_file_that_is_not_the_one_listed(folder: tuple[Path, Path]) -> None:
    docs, secret = folder
    listed = identity(docs / "b.md")
    _swap(docs / "b.md", secret)  # after the main process's own check, before the worker opens it
    with ParseWorker() as worker, pytest.raises(IngestError, match="replaced between listing and reading"):
        worker(docs / "b.md", identity=listed)
    with ParseWorker() as worker:  # the file that was listed is read as before
        assert worker(docs / "a.md", identity=identity(docs / "a.md")).count("passage") >= 1


def test_a_swap_while_the_parser_reads_changes_nothing(folder: tuple[Path, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    docs, secret = folder
    if not os.path.exists("/proc/self/fd"):
        pytest.skip("the open file is pinned through /proc/self/fd (Linux); elsewhere the identity is checked after")
    monkeypatch.setenv("SHELFWISE_TEST_SWAP", f"{docs / 'b.md'}|{secret}")
    with ParseWorker(parser="tests.misbehaving_parser:swapping") as worker:
        doc = worker(docs / "b.md", identity=identity(docs / "b.md"))
    text = " ".join(n.text for n in doc.nodes())
    assert "gliders" in text and "zanzibar" not in text
    assert (docs / "b.md").is_symlink()  # the parser did swap it


def test_without_proc_the_identity_is_checked_again_after_parsing(folder: tuple[Path, Path],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from shelfwise.core.ingestion import files

    docs, secret = folder
    real_exists = os.path.exists
    monkeypatch.setattr(files.os.path, "exists", lambda p: False if str(p).startswith("/proc/self/fd/")
                        else real_exists(p))  # as on macOS or Windows: no /proc to pin the open file through
    listed = identity(docs / "b.md")
    with pytest.raises(files.NotAFile, match="replaced between listing and reading"):
        with files.pinned(docs / "b.md", listed) as path:
            assert path == docs / "b.md"
            _swap(docs / "b.md", secret)  # while the parser reads
    with files.pinned(docs / "a.md", identity(docs / "a.md")) as path:  # a file left alone passes
        assert "kites" in path.read_text()
