"""Issue 50 (weak): a PDF whose outline is 10,000 levels deep was refused whole ("corrupt file: structure nested
too deeply"); its outline is now left out with a warning and its text read, through the real parser (PyMuPDF) and
the real ``shelfwise ingest``."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from shelfwise.ingest.pdf import MAX_OUTLINE_DEPTH
from shelfwise.ingest.registry import parse
from tests.cli_sample import TRACEBACK, run_shelfwise

TEXT = "The deep outline document says the parking garage opens at seven."


def deep_pdf(path: Path, levels: int) -> Path:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), TEXT)
    doc.set_toc([[i + 1, f"Level {i + 1}", 1] for i in range(levels)])
    doc.save(path)
    doc.close()
    return path


def test_an_outline_10000_levels_deep_is_left_out_and_the_text_kept(tmp_path: Path) -> None:
    parsed = parse(deep_pdf(tmp_path / "deep.pdf", 10_000))
    texts = " ".join(n.text for n in parsed.nodes() if n.kind == "passage")
    assert "parking garage opens at seven" in texts
    assert any("10000 levels deep" in w and "left out" in w for w in parsed.warnings), parsed.warnings


def test_an_outline_within_the_depth_is_kept(tmp_path: Path) -> None:
    parsed = parse(deep_pdf(tmp_path / "ok.pdf", MAX_OUTLINE_DEPTH))
    assert not any("levels deep" in w for w in parsed.warnings)
    headings = [n.title for n in parsed.nodes() if n.kind == "section"]
    assert f"Level {MAX_OUTLINE_DEPTH}" in headings


@pytest.mark.model
def test_shelfwise_ingest_reads_it_and_says_so(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    deep_pdf(docs / "deep.pdf", 10_000)
    r = run_shelfwise(tmp_path / "lib.db", ["ingest", str(docs)])
    assert TRACEBACK not in r.stdout and r.returncode == 0, r.stdout[-2000:]
    status = run_shelfwise(tmp_path / "lib.db", ["status"])
    assert "ok" in status.stdout and "levels deep" in status.stdout, status.stdout
