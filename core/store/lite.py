"""sqlite-utils over the store's own connection: the bulk inserts and upserts of the write path, the FTS5 rebuild
and the introspection ``doctor`` and ``status`` print (sqlite-utils: https://sqlite-utils.datasette.io/en/stable/python-api.html).

Every write here runs inside the caller's ``BEGIN IMMEDIATE`` (``Store.transaction``): sqlite-utils then nests its
own work in a savepoint, so a document and its tree still land in one transaction. The connection is used as it
is: no ``PRAGMA recursive_triggers`` (sqlite-utils' default would make ``INSERT OR REPLACE`` fire delete triggers)
and no plugins. The schema itself stays in the named migrations (``migrations.py``): a migration that has shipped
is never edited, so the tables sqlite-utils would create are not the ones a library has.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils

#: The columns of a node row, in the order ``tree_rows`` builds them.
NODE_COLUMNS = ["id", "collection_id", "document_id", "parent_id", "kind", "ordinal", "depth", "title",
                "description", "text", "location", "page", "heading_path", "heading_text"]
#: Rows per multi-row INSERT: sqlite-utils caps it at 999 parameters per statement.
BATCH = 200


def database(conn: sqlite3.Connection) -> sqlite_utils.Database:
    """sqlite-utils' view of ``conn`` (no pragmas set, no plugins run). Imported here, on the first write or
    introspection: a process that only reads (``shelfwise ask``) does not pay for its import."""
    import sqlite_utils

    return sqlite_utils.Database(conn, recursive_triggers=False, execute_plugins=False)


def insert_rows(conn: sqlite3.Connection, table: str, columns: Sequence[str],
                rows: Sequence[Sequence[object]], *, replace: bool = False) -> None:
    """Insert ``rows`` (values in ``columns``' order) into ``table``; ``replace``: ``INSERT OR REPLACE`` (an upsert
    of whole rows by primary key)."""
    if rows:
        database(conn).table(table).insert_all([list(columns), *rows], batch_size=BATCH, replace=replace)


def rebuild_fts(conn: sqlite3.Connection) -> None:
    """Rebuild the full-text index from its source (``nodes_fts`` reads the view of ``fts.py``; the caller's
    connection must have the ``fts.register`` function)."""
    database(conn).table("nodes_fts").rebuild_fts()


@dataclass(frozen=True)
class TableInfo:
    """One table of the library as ``doctor`` lists it."""

    name: str
    rows: int
    columns: int


def tables(conn: sqlite3.Connection) -> list[TableInfo]:
    """The library's tables (FTS5 shadow tables left out) with their row and column counts."""
    db = database(conn)
    hidden = set(db.table_names(fts5=True))
    shadow = {f"{t}_{s}" for t in hidden for s in ("data", "idx", "docsize", "config", "content")}
    return [TableInfo(name, db[name].count, len(db[name].columns)) for name in db.table_names()
            if name not in shadow and name not in hidden and not name.startswith("sqlite_")]


def fts_tables(conn: sqlite3.Connection) -> list[str]:
    """The FTS5 tables of the library (``nodes_fts``)."""
    return database(conn).table_names(fts5=True)
