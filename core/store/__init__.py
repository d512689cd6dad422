"""The library store: SQLite schema and migrations (`migrations`), opening a library safely (`opening`: integrity check,
read-only fallbacks, migration), the `Store` class that reads and writes documents, nodes, passages, FTS5 and vectors
(`db`; its FTS5 ranking statements: `ranking`), a parsed document's tree as node rows (`tree_rows`), the row types it
returns (`types`), text helpers for descriptions and FTS queries (`textutil`), the in-memory `Snapshot` of a
collection's tree that queries read (`snapshot`), sqlite-utils over the store's connection for bulk writes, upserts,
the FTS5 rebuild and introspection (`lite`), and a library's rows for `shelfwise export` (`export`). May import
`shelfwise.ingest.model` (the parsed-document types) and nothing else of Shelfwise.
"""
