"""``shelfwise remove`` through the command line on a copy of the sample library: a file's document and everything
under a folder leave the library (also when the files are gone from disk; ``--no-index`` leaves the index for the
next run), the files stay, and a path nothing was ingested from says so with exit code 1."""

from __future__ import annotations

import json

import pytest

from tests.cli_sample import TRACEBACK, SampleLibrary, run_shelfwise

pytestmark = pytest.mark.model


def _paths(lib: SampleLibrary) -> list[str]:
    done = run_shelfwise(lib.db, ["status", "--json"])
    return [d["path"] for d in json.loads(done.stdout[done.stdout.index("{"):])["documents"]]


def test_remove_a_file_then_a_gone_folder_and_nothing_stored(sample_copy, tmp_path) -> None:  # type: ignore[no-untyped-def]
    lib = sample_copy("cli-remove")
    assert isinstance(lib, SampleLibrary)
    faq = lib.files / "new-starter-faq.txt"
    done = run_shelfwise(lib.db, ["remove", str(faq)])
    assert done.returncode == 0 and TRACEBACK not in done.stdout, done.stdout
    assert done.stdout.startswith("Removed 1 document from 'default':") and str(faq) in done.stdout, done.stdout
    assert faq.exists() and len(_paths(lib)) == 5 and str(faq) not in _paths(lib)
    searched = run_shelfwise(lib.db, ["search", "buddy programme"])  # words only the FAQ holds
    assert "new-starter-faq" not in searched.stdout, searched.stdout
    again = run_shelfwise(lib.db, ["remove", str(faq), str(tmp_path / "never-ingested")])
    assert again.returncode == 1 and "Nothing in collection 'default' was ingested from" in again.stdout, again.stdout
    # a folder whose files are gone from disk: everything stored under it goes (relative paths as typed)
    moved = lib.files.rename(lib.files.parent / "moved-away")
    try:
        gone = run_shelfwise(lib.db, ["remove", "sample", "--no-index"], cwd=lib.files.parent)
        assert gone.returncode == 0 and gone.stdout.startswith("Removed 5 documents"), gone.stdout
        assert _paths(lib) == []
        status = run_shelfwise(lib.db, ["status", "--json"])
        indexes = json.loads(status.stdout[status.stdout.index("{"):])["indexes"]
        assert indexes and indexes[0]["unfinished"], indexes  # --no-index: left for the next run to finish
    finally:
        moved.rename(lib.files)
    wrong = run_shelfwise(lib.db, ["remove", str(faq), "--collection", "nope"])
    assert wrong.returncode == 2 and "No collection named 'nope'" in wrong.stdout, wrong.stdout
