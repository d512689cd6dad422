"""A real SQLite library in memory holding one document ("Employee Handbook", section "Leave") of the passages a
test gives: for the tests of what the not-found rules read (tests/test_coverage.py, tests/test_answerable.py)."""

from __future__ import annotations

from collections.abc import Sequence

from shelfwise.core.store.db import FileMeta, Store
from shelfwise.ingest.model import Location, ParsedDocument, ParsedNode


def handbook_store(passages: Sequence[str]) -> Store:
    """The library, open (the caller closes it)."""
    s = Store(":memory:")
    c = s.collection("default")
    leave = ParsedNode("section", "Leave", "", Location(line=1), children=[
        ParsedNode("passage", "", text, Location(line=i + 2)) for i, text in enumerate(passages)])
    s.write_document(c.id, "/handbook.md", FileMeta(size=1, mtime=1.0, sha256="c" * 64),
                     ParsedDocument(title="Employee Handbook", format="md", children=[leave]))
    return s
