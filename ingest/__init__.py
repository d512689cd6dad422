"""Shelfwise ingestion: one parser module per file format (no Qt)."""
