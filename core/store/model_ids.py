"""Renaming a model in a library: every vector, cached vector and meta entry stored under one model id moved to
another, in one transaction (``core/indexing/encoder.py``'s ``adopt_identity`` uses it when an encoder's name
changed rule, ``core/models/identity.py``)."""

from __future__ import annotations

from shelfwise.core.store.db import Store

VECTOR_TABLES = ("embeddings", "vector_cache")
TAG = "#"  # a tagged name: ``ID#sentences`` holds the answer sentences' vectors of model ID


def stored_models(store: Store) -> set[str]:
    """The model names the library's vectors are stored under, tags taken off (``ID#sentences`` -> ``ID``)."""
    names: set[str] = set()
    for table in VECTOR_TABLES:
        names.update(str(row[0]).split(TAG, 1)[0] for row in store.conn.execute(f"SELECT DISTINCT model FROM {table}"))
    return names


def rename_model(store: Store, old: str, new: str) -> int:
    """Move what is stored under model ``old`` (and its tagged names) to ``new``: vectors and cached vectors (a row
    ``new`` has already is kept), and every meta key or value that holds ``old`` (calibrations, index states,
    signatures). Returns the vectors moved."""
    moved = 0
    with store.transaction() as conn:
        for table in VECTOR_TABLES:
            where = "model = ? OR substr(model, 1, ?) = ?"
            args = (old, len(old) + 1, old + TAG)
            cur = conn.execute(f"UPDATE OR IGNORE {table} SET model = ? || substr(model, ?) WHERE {where}",
                               (new, len(old) + 1, *args))
            moved += max(cur.rowcount, 0)
            conn.execute(f"DELETE FROM {table} WHERE {where}", args)  # rows ``new`` had already
        rows = conn.execute("SELECT key, value FROM meta WHERE instr(key, ?) > 0 OR instr(value, ?) > 0",
                            (old, old)).fetchall()
        for key, value in rows:
            conn.execute("DELETE FROM meta WHERE key = ?", (key,))
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                         (str(key).replace(old, new), None if value is None else str(value).replace(old, new)))
    return moved


__all__ = ["rename_model", "stored_models"]
