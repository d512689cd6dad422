"""Issue 50 (weak): a DOCX whose Title is 2.4 MB was found by ``search`` but not by ``ask`` ("Not found in your
documents"): the passage's embedded text carried the whole title in front of it, which filled the encoder's window.
Through the real ``shelfwise`` (ingest, search, ask) with the real encoder and SQLite."""

from __future__ import annotations

import random
import string
from pathlib import Path

import docx
import pytest

from shelfwise.core.indexing.vectors import HEAD_CHARS, embedding_text
from shelfwise.core.store.db import NodeRow
from shelfwise.ingest.model import Location
from tests.cli_sample import TRACEBACK, run_shelfwise

pytestmark = pytest.mark.model

FACT = "The parking garage opens at seven in the morning for all staff."


def huge_title_docx(path: Path) -> Path:
    rng = random.Random(5)  # random words: a repeated phrase compresses past the zip-bomb guard
    words = " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))
                     for _ in range(400_000))[:2_400_000]
    doc = docx.Document()
    doc.add_paragraph("Quarterly zebra report " + words, style="Title")
    doc.add_paragraph(FACT)
    doc.save(str(path))
    return path


def test_a_docx_with_a_huge_title_is_found_by_ask_as_by_search(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    huge_title_docx(docs / "big.docx")
    db = tmp_path / "lib.db"
    r = run_shelfwise(db, ["ingest", str(docs)])
    assert r.returncode == 0 and TRACEBACK not in r.stdout, r.stdout[-2000:]
    found = run_shelfwise(db, ["search", "parking garage"])
    assert "garage" in found.stdout, found.stdout[-2000:]
    asked = run_shelfwise(db, ["ask", "When does the parking garage open?", "--no-generate"])
    assert TRACEBACK not in asked.stdout and asked.returncode == 0, asked.stdout[-2000:]
    answer = next(line for line in asked.stdout.splitlines() if line.startswith("Answer:"))
    assert "seven in the morning" in answer, answer[:500]


def test_the_embedded_text_keeps_a_passage_whole_behind_a_long_title() -> None:
    node = NodeRow(id=1, collection_id=1, document_id=1, parent_id=None, kind="passage", ordinal=0, depth=3,
                   title="", description="", text=FACT, location=Location(), heading_path=["h" * 10_000])
    text = embedding_text(node, "t" * 2_400_000)
    assert text.endswith(FACT) and len(text) < 2 * HEAD_CHARS + len(FACT) + 10
