"""The full-text index in every script: what FTS5 reads of a node, and the SQL function that makes it.

FTS5's ``unicode61`` tokenizer splits at spaces and punctuation, so a Chinese or Japanese clause (no spaces) is one
token and a word inside it cannot be found; it also treats combining marks as separators, which cut Devanagari
words at every vowel sign. The index therefore reads each node through the view :data:`SOURCE_VIEW`, whose columns
are :func:`shelfwise.core.languages.fts_index_text` of the node's (the SQL function :data:`FUNCTION`, registered on
every connection by :func:`register`), with the tokenizer :data:`TOKENIZE` (marks kept inside tokens, the
segmenting separator declared). Queries are made from the same rules (``textutil.fts_query``), and
:func:`clean_snippet` takes the separators out of a snippet. Migration ``0005_fts_scripts`` builds this over a
library made before it.

A connection without the function cannot write nodes (their triggers call it) and fails with "no such function"
instead of indexing text the queries would not find; every connection Shelfwise opens on a library registers it.
"""

from __future__ import annotations

import sqlite3

from shelfwise.core.languages import FTS_SEPARATOR, fts_index_text

FUNCTION = "shelfwise_fts_text"
SOURCE_VIEW = "nodes_fts_source"
TOKENIZE = f"porter unicode61 remove_diacritics 2 categories 'L* N* Co M*' separators '{FTS_SEPARATOR}'"
TRIGGERS = ("nodes_fts_insert", "nodes_fts_delete", "nodes_fts_update")


def register(conn: sqlite3.Connection) -> sqlite3.Connection:
    """Make :data:`FUNCTION` known to ``conn`` (returns ``conn``)."""
    conn.create_function(FUNCTION, 1, fts_index_text, deterministic=True)
    return conn


def trigger_sql() -> list[str]:
    """The statements that create the three triggers keeping ``nodes_fts`` in step with ``nodes`` (a bulk writer
    that fills ``fts_bulk_insert`` indexes its rows itself, see ``tree_rows``)."""
    f = FUNCTION
    return [
        f"""CREATE TRIGGER nodes_fts_insert AFTER INSERT ON nodes
        WHEN NOT EXISTS (SELECT 1 FROM fts_bulk_insert) BEGIN
            INSERT INTO nodes_fts(rowid, title, heading_text, text)
            VALUES (new.id, {f}(new.title), {f}(new.heading_text), {f}(new.text));
        END""",
        f"""CREATE TRIGGER nodes_fts_delete AFTER DELETE ON nodes BEGIN
            INSERT INTO nodes_fts(nodes_fts, rowid, title, heading_text, text)
            VALUES ('delete', old.id, {f}(old.title), {f}(old.heading_text), {f}(old.text));
        END""",
        f"""CREATE TRIGGER nodes_fts_update AFTER UPDATE OF title, heading_text, text ON nodes BEGIN
            INSERT INTO nodes_fts(nodes_fts, rowid, title, heading_text, text)
            VALUES ('delete', old.id, {f}(old.title), {f}(old.heading_text), {f}(old.text));
            INSERT INTO nodes_fts(rowid, title, heading_text, text)
            VALUES (new.id, {f}(new.title), {f}(new.heading_text), {f}(new.text));
        END""",
    ]


def create_triggers(conn: sqlite3.Connection) -> None:
    for sql in trigger_sql():
        conn.execute(sql)


def clean_snippet(snippet: str) -> str:
    """A snippet as the user reads it: without the separators the index put between CJK characters."""
    return snippet.replace(FTS_SEPARATOR, "")
