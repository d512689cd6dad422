"""``shelfwise doctor``: checking a library file in full, rebuilding or salvaging a damaged one (built beside it and
swapped in only when complete), and the old libraries kept beside it (named, restored). Plain functions of a path:
nothing here needs an open library or a model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from shelfwise.core.ingestion.rebuild import (
    FTS_NOT_CHECKED,
    Diagnosis,
    RebuildFailed,
    RebuildRefused,
    RebuildReport,
    Salvage,
    diagnose,
    kept_copies,
    rebuild,
    rebuild_running,
    remove_leftovers,
    restore,
    salvage,
)
from shelfwise.core.store.db import Store

__all__ = ["Diagnosis", "LibraryCheck", "RebuildFailed", "RebuildRefused", "RebuildReport", "Salvage", "check_library",
           "kept_copies", "rebuild", "rebuild_running", "remove_leftovers", "restore", "salvage"]


@dataclass(frozen=True)
class LibraryCheck:
    """What :func:`check_library` found (``shelfwise doctor``): SQLite's full check and the word index's own
    (``diagnosis``), whether the library opens read-only (``read_only_reason`` says why; ``damage`` what
    ``quick_check`` found on opening), and ``words_rebuilt``: the word index's check failure when it was out of
    step with the passages and was rebuilt from them (empty: it was not)."""

    diagnosis: Diagnosis
    read_only: bool
    read_only_reason: str
    damage: str
    words_rebuilt: str = ""


def check_library(db: Path, *, repair_words: bool = True) -> LibraryCheck:
    """``shelfwise doctor``'s check of the library at ``db``: SQLite's full ``integrity_check`` and the word
    index's own check (StoreError when the file cannot be opened as a library). A word index out of step with
    the passages (``repair_words``, a writable library whose pages are intact) is rebuilt from them through
    sqlite-utils (``Store.rebuild_fts``) and checked again; ``LibraryCheck.words_rebuilt`` says it was."""
    with Store(db, check=True, trust_clean_close=False) as store:  # doctor always reads every page
        read_only, reason, damage = store.read_only, store.why_read_only(), store.damage
    diag = diagnose(db, not read_only)
    rebuilt = ""
    if repair_words and not read_only and diag.integrity == ["ok"] and diag.fts not in ("ok", FTS_NOT_CHECKED):
        with Store(db) as store:
            store.rebuild_fts()
        rebuilt, diag = diag.fts, diagnose(db, True)
    return LibraryCheck(diag, read_only, reason, damage, rebuilt)
