"""The library store: SQLite schema and migrations (`migrations`), opening a library safely (`opening`: integrity
check, read-only fallbacks, migration), the `Store` class that reads and writes documents, nodes, passages, FTS5
and vectors (`db`), a parsed document's tree as node rows (`tree_rows`), the row types it returns (`types`), text
helpers for descriptions and FTS queries (`textutil`), and the in-memory `Snapshot` of a collection's tree that
queries read (`snapshot`). May import `shelfwise.ingest.model` (the parsed-document types) and nothing else of
Shelfwise.
"""
