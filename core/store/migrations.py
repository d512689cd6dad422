"""Named, transactional schema migrations for the Shelfwise store.

Each migration is a function that receives the open :class:`sqlite3.Connection` and issues SQL. The runner applies
the pending ones in order, each inside its own ``BEGIN IMMEDIATE`` ... ``COMMIT`` together with its row in the
``migrations(name, applied_at)`` table, so a crash mid-migration leaves the database at the previous version.
Before migrating an existing, non-empty database from an older version, the runner copies it (SQLite backup API,
so the copy is consistent even in WAL mode) to ``<db>.<timestamp>.before-<migration>.bak`` next to it.

To change the schema, append a new function to :data:`MIGRATIONS`; never edit one that has shipped.

Why a runner of our own and not sqlite-utils' ``Migrations`` (sqlite-utils 4.2): that class reads the pending list
outside any lock and runs each migration in a deferred ``BEGIN``, so two processes opening an old library at once
(the window and the command line) can both start the same migration, and the second fails; here each migration
takes ``BEGIN IMMEDIATE`` and re-checks inside the write lock. The backup and the refusal of a newer schema would
still have to wrap it. (sqlite-utils was dropped once, when the store used it for nothing else; it is a dependency
again for the store's writes, FTS5 rebuild, introspection and export, ``lite.py``, and this reasoning still keeps
the runner ours.)

The tables are created here in SQL, not with sqlite-utils' ``create``: a shipped migration is never edited (a
library made by it and one made by a rewrite would differ in their schema text), and the external-content FTS5
table over a view with its own tokenizer (``fts.py``) is not what sqlite-utils' ``enable_fts`` makes. What
sqlite-utils does as it was done here, the FTS5 index's rebuild (one ``INSERT INTO nodes_fts(nodes_fts) VALUES
('rebuild')`` either way, now inside a savepoint of the migration's transaction), goes through it
(``lite.rebuild_fts``, the same call ``Store.rebuild_fts`` and ``shelfwise doctor`` make).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from shelfwise.core.store.lite import rebuild_fts

Migration = tuple[str, Callable[[sqlite3.Connection], None]]


class SchemaTooNew(RuntimeError):
    """The database has migrations this version of Shelfwise does not know (it was made by a newer one)."""


class NotALibrary(SchemaTooNew):
    """The SQLite file is another program's database: tables, but no Shelfwise migrations."""


def foreign_tables(conn: sqlite3.Connection) -> list[str]:
    """The tables of a database that is not a Shelfwise library, else []. A Shelfwise library has a ``migrations``
    table (name, applied_at) whose first row is Shelfwise's first migration; another program's database may have a
    ``migrations`` table too (Rails, Django, Flyway...), with other names in it. An empty database, or one with
    only an empty ``migrations`` table (a first open that stopped there), is a new library."""
    names = [str(r[0]) for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    if not names:
        return []
    if "migrations" not in names:
        return names
    try:
        cols = {str(r[1]) for r in conn.execute("PRAGMA table_info(migrations)")}
        first = conn.execute("SELECT name FROM migrations ORDER BY rowid LIMIT 1").fetchone() if {
            "name", "applied_at"} <= cols else ("",)
    except sqlite3.DatabaseError:
        return names
    if first is None:  # an empty migrations table: ours only when nothing else is there
        return [] if names == ["migrations"] else names
    return [] if first[0] == MIGRATIONS[0][0] else names


def refuse_foreign(conn: sqlite3.Connection) -> None:
    """Raise :class:`NotALibrary` for another program's database, before anything is added to it."""
    names = foreign_tables(conn)
    if names:
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        raise NotALibrary(f"it is not a Shelfwise library but another program's SQLite database (tables: {shown}); "
                          "nothing was changed. Give a new file name with --db")


def _m001_tree(conn: sqlite3.Connection) -> None:
    """Collections, documents, the node tree and the key/value meta table."""
    for sql in (
        """CREATE TABLE collections (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL,
            root_node_id INTEGER
        )""",
        """CREATE TABLE documents (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            size INTEGER NOT NULL DEFAULT 0,
            mtime REAL NOT NULL DEFAULT 0,
            sha256 TEXT NOT NULL DEFAULT '',
            format TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL CHECK (status IN ('ok', 'error', 'needs_ocr')),
            message TEXT NOT NULL DEFAULT '',
            title TEXT NOT NULL DEFAULT '',
            pages INTEGER NOT NULL DEFAULT 0,
            sections INTEGER NOT NULL DEFAULT 0,
            passages INTEGER NOT NULL DEFAULT 0,
            ingested_at TEXT NOT NULL,
            warnings TEXT NOT NULL DEFAULT '[]',
            UNIQUE (collection_id, path)
        )""",
        # parent_id has no ON DELETE action: deleting a node that still has children fails instead of silently
        # dropping a subtree (e.g. a topic cluster with documents under it). A document's nodes are always deleted
        # together (by document_id), which satisfies the check at the end of the statement.
        """CREATE TABLE nodes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            collection_id INTEGER NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
            document_id INTEGER REFERENCES documents(id) ON DELETE CASCADE,
            parent_id INTEGER REFERENCES nodes(id),
            kind TEXT NOT NULL CHECK (kind IN ('collection', 'cluster', 'document', 'section', 'passage')),
            ordinal INTEGER NOT NULL DEFAULT 0,
            depth INTEGER NOT NULL DEFAULT 0,
            title TEXT NOT NULL DEFAULT '',
            description TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL DEFAULT '',
            location TEXT NOT NULL DEFAULT '{}',
            page INTEGER,
            heading_path TEXT NOT NULL DEFAULT '[]',
            heading_text TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX idx_nodes_parent ON nodes(parent_id, ordinal)",
        "CREATE INDEX idx_nodes_document ON nodes(document_id)",
        "CREATE INDEX idx_nodes_kind ON nodes(collection_id, kind)",
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
    ):
        conn.execute(sql)


def _m002_search(conn: sqlite3.Connection) -> None:
    """Full-text index over nodes (kept in sync by triggers) and per-model embeddings."""
    for sql in (
        # External-content FTS5 table: the text lives once, in `nodes`; snippet() reads it from there.
        # `heading_text` is the heading path joined with " / " (a plain-text copy of the JSON list).
        """CREATE VIRTUAL TABLE nodes_fts USING fts5(
            title, heading_text, text,
            content='nodes', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        )""",
        # Bulk writers (Store.write_document) put a row in fts_bulk_insert, insert their nodes, index them with one
        # INSERT ... SELECT and remove the row, all in one transaction: FTS5 inserted row by row from a trigger
        # is slower, because each trigger step flushes FTS5's pending terms (docs/benchmarks.md, "Store").
        "CREATE TABLE fts_bulk_insert (active INTEGER NOT NULL)",
        """CREATE TRIGGER nodes_fts_insert AFTER INSERT ON nodes
        WHEN NOT EXISTS (SELECT 1 FROM fts_bulk_insert) BEGIN
            INSERT INTO nodes_fts(rowid, title, heading_text, text)
            VALUES (new.id, new.title, new.heading_text, new.text);
        END""",
        """CREATE TRIGGER nodes_fts_delete AFTER DELETE ON nodes BEGIN
            INSERT INTO nodes_fts(nodes_fts, rowid, title, heading_text, text)
            VALUES ('delete', old.id, old.title, old.heading_text, old.text);
        END""",
        """CREATE TRIGGER nodes_fts_update AFTER UPDATE OF title, heading_text, text ON nodes BEGIN
            INSERT INTO nodes_fts(nodes_fts, rowid, title, heading_text, text)
            VALUES ('delete', old.id, old.title, old.heading_text, old.text);
            INSERT INTO nodes_fts(rowid, title, heading_text, text)
            VALUES (new.id, new.title, new.heading_text, new.text);
        END""",
        """CREATE TABLE embeddings (
            node_id INTEGER NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (node_id, model)
        )""",
        "CREATE INDEX idx_embeddings_model ON embeddings(model)",
    ):
        conn.execute(sql)
    rebuild_fts(conn)  # the nodes a library had before it (none in a new one) indexed


def _m003_ocr_pages(conn: sqlite3.Connection) -> None:
    """How many pages of a document were read by OCR (0 for every document stored before)."""
    conn.execute("ALTER TABLE documents ADD COLUMN ocr_pages INTEGER NOT NULL DEFAULT 0")


def _m004_vector_cache(conn: sqlite3.Connection) -> None:
    """Vectors keyed by (model, sha256 of the text embedded): re-ingesting a changed file, or a file moved
    elsewhere, makes new nodes whose unchanged texts take their vectors from here instead of the embedder. Bounded by
    :meth:`Store.prune_vector_cache` (least recently used first)."""
    conn.execute(
        """CREATE TABLE vector_cache (
            model TEXT NOT NULL,
            sha TEXT NOT NULL,
            dim INTEGER NOT NULL,
            vector BLOB NOT NULL,
            used REAL NOT NULL,
            PRIMARY KEY (model, sha)
        ) WITHOUT ROWID"""
    )
    conn.execute("CREATE INDEX idx_vector_cache_used ON vector_cache(model, used)")


def _m005_fts_scripts(conn: sqlite3.Connection) -> None:
    """The full-text index in every script (``core/store/fts.py``): rebuilt through the view that segments CJK and
    Thai-like runs, with a tokenizer that keeps combining marks in words. Needs :func:`fts.register` on ``conn``."""
    from shelfwise.core.store import fts

    for name in fts.TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    conn.execute("DROP TABLE IF EXISTS nodes_fts")
    f = fts.FUNCTION
    conn.execute(f"""CREATE VIEW {fts.SOURCE_VIEW} AS
        SELECT id, {f}(title) AS title, {f}(heading_text) AS heading_text, {f}(text) AS text FROM nodes""")
    conn.execute(f"""CREATE VIRTUAL TABLE nodes_fts USING fts5(
        title, heading_text, text, content='{fts.SOURCE_VIEW}', content_rowid='id', tokenize="{fts.TOKENIZE}")""")
    fts.create_triggers(conn)
    rebuild_fts(conn)


def _m006_failure_retry(conn: sqlite3.Connection) -> None:
    """Whether a document's failure may pass (disk full, worker killed, a time cap): 1 makes the next plain ingest
    try the file again although it is unchanged. Failures stored before are about their files (0)."""
    conn.execute("ALTER TABLE documents ADD COLUMN retry INTEGER NOT NULL DEFAULT 0")


def _m007_conversations(conn: sqlite3.Connection) -> None:
    """Conversations and their turns (question, how it was read, the walk's trace, answer, citations as JSON);
    a turn is one row, written in one transaction, so a killed process keeps every finished turn. A conversation
    names its collection by name, so it outlives a collection rebuilt under the same name."""
    conn.execute(
        """CREATE TABLE conversations (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            collection TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )"""
    )
    conn.execute(
        """CREATE TABLE conversation_turns (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            question TEXT NOT NULL,
            reading TEXT NOT NULL DEFAULT '{}',
            answer TEXT NOT NULL DEFAULT '',
            generated TEXT NOT NULL DEFAULT '',
            found INTEGER NOT NULL DEFAULT 0,
            citations TEXT NOT NULL DEFAULT '[]',
            hits TEXT NOT NULL DEFAULT '[]',
            trace TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            UNIQUE (conversation_id, position)
        )"""
    )
    conn.execute("CREATE INDEX idx_conversations_updated ON conversations(updated_at)")


def _m008_turn_vectors(conn: sqlite3.Connection) -> None:
    """The vector a turn's walk read for its own query text (float32 bytes) and the embedder that made it: the next
    turn mixes it in without embedding that text again, after a restart too. Turns stored before have none (the next
    turn embeds the text, as before)."""
    conn.execute("ALTER TABLE conversation_turns ADD COLUMN query_vector BLOB")
    conn.execute("ALTER TABLE conversation_turns ADD COLUMN vector_model TEXT NOT NULL DEFAULT ''")


def _m009_document_languages(conn: sqlite3.Connection) -> None:
    """Each document's languages (ISO 639-1 codes, main first, comma-separated; NULL until detected: the next index
    run detects them, ``core/indexing/languages.py``)."""
    conn.execute("ALTER TABLE documents ADD COLUMN languages TEXT")


def _m010_tables(conn: sqlite3.Connection) -> None:
    """Tables found as tables (docs/tables.md): one row per table (its section node, title, sheet, columns with
    their kinds as JSON), one per data row (its kind, data or total, the passage holding it, its sheet row), and one
    per filled cell (text as shown, number when it is one), keyed (table, column, row) so a column is one range.
    Rows and cells go with their table, tables with their document. Documents read before this version, of a format
    that can hold tables, are marked to be read again (``retry``) by the next ingest, which stores their tables."""
    for sql in (
        """CREATE TABLE doc_tables (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            node_id INTEGER NOT NULL,
            ordinal INTEGER NOT NULL DEFAULT 0,
            title TEXT NOT NULL DEFAULT '',
            sheet TEXT NOT NULL DEFAULT '',
            first_col INTEGER NOT NULL DEFAULT 0,
            header_row INTEGER NOT NULL DEFAULT 0,
            columns TEXT NOT NULL DEFAULT '[]',
            n_rows INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX idx_doc_tables_document ON doc_tables(document_id)",
        "CREATE INDEX idx_doc_tables_node ON doc_tables(node_id)",
        """CREATE TABLE table_rows (
            table_id INTEGER NOT NULL REFERENCES doc_tables(id) ON DELETE CASCADE,
            row INTEGER NOT NULL,
            kind TEXT NOT NULL DEFAULT 'data',
            node_id INTEGER,
            sheet_row INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (table_id, row)
        ) WITHOUT ROWID""",
        """CREATE TABLE table_cells (
            table_id INTEGER NOT NULL REFERENCES doc_tables(id) ON DELETE CASCADE,
            col INTEGER NOT NULL,
            row INTEGER NOT NULL,
            text TEXT NOT NULL,
            number REAL,
            PRIMARY KEY (table_id, col, row)
        ) WITHOUT ROWID""",
        "UPDATE documents SET retry = 1 WHERE status = 'ok' AND format IN ('xlsx', 'xlsm', 'docx', 'pptx', 'pdf', "
        "'md', 'markdown')",
    ):
        conn.execute(sql)


def _m011_int8_vectors(conn: sqlite3.Connection) -> None:
    """Node vectors and cached text vectors as int8, one byte a dimension (``core/store/vectors.py``: a quarter of
    the float32 bytes; what it costs in retrieval: docs/scale.md, "Vectors"). Rewritten 500 rows at a time; the
    pages freed are reused by later writes (``VACUUM`` would give them back to the disk, outside a migration)."""
    from shelfwise.core.store.vectors import blob, decode_float

    for table, a, b in (("embeddings", "node_id", "model"), ("vector_cache", "model", "sha")):  # their keys
        keys = conn.execute(f"SELECT {a}, {b} FROM {table} WHERE length(vector) = 4 * dim").fetchall()
        for start in range(0, len(keys), 500):
            rows = [conn.execute(f"SELECT dim, vector FROM {table} WHERE {a} = ? AND {b} = ?", k).fetchone()
                    for k in keys[start:start + 500]]
            conn.executemany(f"UPDATE {table} SET vector = ? WHERE {a} = ? AND {b} = ?",
                             [(blob(decode_float([r[1]], int(r[0]))[0]), *k)
                              for r, k in zip(rows, keys[start:start + 500], strict=True)])


MIGRATIONS: list[Migration] = [
    ("0001_tree", _m001_tree),
    ("0002_search", _m002_search),
    ("0003_ocr_pages", _m003_ocr_pages),
    ("0004_vector_cache", _m004_vector_cache),
    ("0005_fts_scripts", _m005_fts_scripts),
    ("0006_failure_retry", _m006_failure_retry),
    ("0007_conversations", _m007_conversations),
    ("0008_turn_vectors", _m008_turn_vectors),
    ("0009_document_languages", _m009_document_languages),
    ("0010_tables", _m010_tables),
    ("0011_int8_vectors", _m011_int8_vectors),
]


def applied(conn: sqlite3.Connection) -> list[str]:
    """Names of the migrations already applied, in order."""
    has = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='migrations'").fetchone()
    if not has:
        return []
    return [r[0] for r in conn.execute("SELECT name FROM migrations ORDER BY rowid")]


def _is_empty(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' AND name != 'migrations'"
    ).fetchone()
    return int(row[0]) == 0


def free_sibling(path: Path, name: Callable[[str], str]) -> Path:
    """Where to keep an old copy of the library at ``path``: the sibling called ``name(stamp)``, the stamp being the
    time now (``20261201-045502``), with ``-2``, ``-3``... added to it while such a file exists. Used for the
    backup before a migration and for the old library a rebuild keeps beside the new one
    (:func:`shelfwise.core.ingestion.rebuild.swap_in`)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(name(stamp))
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(name(f"{stamp}-{n}"))
    return target


def backup(conn: sqlite3.Connection, db_path: Path, label: str) -> Path:
    """Copy the database to ``<db>.<timestamp>.<label>.bak`` (consistent copy via the backup API)."""
    target = free_sibling(db_path, lambda stamp: f"{db_path.name}.{stamp}.{label}.bak")
    dest = sqlite3.connect(str(target))
    try:
        conn.backup(dest)
    finally:
        dest.close()
    return target


def migrate(
    conn: sqlite3.Connection, db_path: Path | None, migrations: list[Migration] | None = None
) -> tuple[list[str], Path | None]:
    """Apply pending migrations. Returns (names applied now, backup path or None).

    ``conn`` must be in autocommit mode (``isolation_level=None``). ``db_path`` is None for in-memory databases
    (no backup then).
    """
    steps = MIGRATIONS if migrations is None else migrations
    refuse_foreign(conn)
    conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    done = set(applied(conn))
    unknown = sorted(done - {name for name, _ in steps})
    if unknown:
        raise SchemaTooNew(f"it was written by a newer version of Shelfwise (schema {', '.join(unknown)})")
    pending = [(name, fn) for name, fn in steps if name not in done]
    backup_path: Path | None = None
    if pending and db_path is not None and not _is_empty(conn):
        backup_path = backup(conn, db_path, f"before-{pending[0][0]}")
    ran: list[str] = []
    for name, fn in pending:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-check inside the write lock: another process may have migrated meanwhile.
            if conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                conn.execute("COMMIT")
                continue
            fn(conn)
            conn.execute(
                "INSERT INTO migrations(name, applied_at) VALUES (?, ?)",
                (name, time.strftime("%Y-%m-%dT%H:%M:%S")),
            )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLite may have rolled it back itself (a full disk)
                conn.execute("ROLLBACK")
            raise
        ran.append(name)
    return ran, backup_path
