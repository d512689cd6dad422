"""OCR of scanned PDFs: the logic without the engine (grouping, sizes, limits, the missing-extra message) and the
real thing (the bundled RapidOCR models on the corpus scans, through the worker process, the store, BM25 search,
navigation and `shelfwise ask`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from shelfwise.core.ingestion.runner import IngestProgress, ingest
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.ingest import ocr, pdf_ocr
from shelfwise.ingest.model import Limits, Location, NeedsOCR, ParsedDocument, ParsedNode
from shelfwise.ingest.passages import merge_locations
from shelfwise.ingest.registry import parse

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
SCANS = sorted(CORPUS.glob("scanned-*.pdf")) if CORPUS.is_dir() else []
needs_corpus = pytest.mark.skipif(len(SCANS) != 2, reason="shared corpus not found")  # CI always has it
needs_engine = pytest.mark.skipif(ocr.unavailable() is not None, reason="the ocr extra is not installed")


# ----------------------------------------------------------------------------- logic (no engine)
def _line(text: str, x0: float, y0: float, x1: float, y1: float) -> ocr.OcrLine:
    return ocr.OcrLine(text, 0.9, x0, y0, x1, y1, y1 - y0)


def test_page_text_groups_rows_and_paragraphs() -> None:
    lines = [
        _line("A Big Title", 50, 40, 200, 64),  # 24 pt, narrower than the text: a heading
        _line("first line of the", 50, 100, 200, 112),
        _line("paragraph", 205, 101, 280, 112),  # same row, just right of the previous piece
        _line("second line of it.", 50, 116, 280, 128),
        _line("Next paragraph after a gap.", 50, 160, 280, 172),
    ]
    pt = ocr.page_text(1, 400, 600, lines)
    assert [b.text for b in pt.blocks] == [
        "A Big Title", "first line of the paragraph second line of it.", "Next paragraph after a gap.",
    ]
    ocr.set_sizes([pt], body=11.0)
    sizes = [ln.size for b in pt.blocks for ln in b.lines]
    assert sizes[1:] == [11.0, 11.0, 11.0] and sizes[0] == pytest.approx(22.0)
    # a tall line as wide as the text (a drop capital) stays body text
    pt = ocr.page_text(1, 400, 600, [_line("With a drop capital W", 50, 90, 280, 114), *lines[1:]])
    ocr.set_sizes([pt], body=11.0)
    assert {ln.size for b in pt.blocks for ln in b.lines} == {11.0}


def test_heading_heights_with_and_without_descenders_are_one_size() -> None:
    lines = [
        _line("Travel Expenses", 50, 40, 200, 64),  # 24 pt box: descenders
        _line("body text line one of the page", 50, 80, 300, 92),
        _line("body text line two of the page", 50, 96, 300, 108),
        _line("Meals Allowance", 50, 140, 200, 159),  # 19 pt box: no descenders, same type
        _line("body text line three of the page", 50, 180, 300, 192),
        _line("Huge Title", 50, 200, 150, 240),  # 40 pt: a size of its own
        *[_line(f"more body text, line {i} of the page", 50, 260 + 16 * i, 300, 272 + 16 * i) for i in range(4)],
    ]
    pt = ocr.page_text(1, 400, 600, lines)
    ocr.set_sizes([pt], body=10.0)
    size = {ln.text: ln.size for b in pt.blocks for ln in b.lines}
    assert size["Travel Expenses"] == size["Meals Allowance"] == pytest.approx(20.0)
    assert size["Huge Title"] == pytest.approx(33.0) and size["body text line three of the page"] == 10.0


def test_columns_far_apart_stay_separate_lines() -> None:
    lines = [_line("left column", 50, 100, 200, 112), _line("right column", 400, 100, 550, 112)]
    pt = ocr.page_text(1, 600, 800, lines)
    assert [ln.text for b in pt.blocks for ln in b.lines] == ["left column", "right column"]


def test_tidy_restores_lost_spaces_after_punctuation_only_between_words() -> None:
    assert ocr.tidy("garden,stooping  down.Then he") == "garden, stooping down. Then he"
    assert ocr.tidy("3,000 and 4.5 e.g. www.example.com/a,b") == "3,000 and 4.5 e.g. www.example.com/a,b"


def test_unusable_text_layers() -> None:
    from shelfwise.ingest.pdf_layout import Block, Line, PageText

    def page(text: str) -> PageText:
        return PageText(1, 100, 100, [Block([Line(text, 10, False, 0, 0, 10, 10)])])

    assert pdf_ocr.text_is_unusable(PageText(1, 100, 100))
    assert pdf_ocr.text_is_unusable(page("\ufffd\ufffd\ufffd \ue000\ue001 a"))
    assert not pdf_ocr.text_is_unusable(page("Real words here"))


def test_boxes_survive_merging_and_the_store(tmp_path: Path) -> None:
    a = Location(page=1, boxes=((1, 10.0, 20.0, 100.0, 30.0),))
    b = Location(page=2, boxes=((2, 10.0, 40.0, 100.0, 50.0),))
    merged = merge_locations(a, b)
    assert merged.page == 1 and merged.page_end == 2 and merged.boxes == a.boxes + b.boxes
    doc = ParsedDocument("Scan", "pdf", [ParsedNode("passage", "t", "scanned words", merged)], pages=2, ocr_pages=2)
    with Store(tmp_path / "lib.db") as store:
        coll = store.collection("default")
        doc_id = store.write_document(coll.id, "/x/scan.pdf", FileMeta(1, 1.0, "ab"), doc)
        row = store.document(doc_id)
        assert row is not None and row.ocr_pages == 2 and row.ocr_label() == "OCR 2/2 pages"
        hit = store.search("scanned")[0][0]
        assert hit.location == merged  # boxes come back as tuples, equal to what was written


@needs_corpus
def test_without_the_extra_a_scan_needs_ocr_and_the_message_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "_engine", None)
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)  # import fails as if it were not installed
    assert ocr.unavailable() is not None
    for scan in SCANS:
        with pytest.raises(NeedsOCR) as err:
            parse(scan)
        assert "no text layer" in str(err.value) and "shelfwise[ocr]" in str(err.value)
        assert err.value.status == "needs_ocr"


@needs_corpus
def test_page_limit_and_time_limit_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """No engine needed: the recogniser is replaced by one that is too slow, then by one that reads a line."""
    monkeypatch.setattr(ocr, "unavailable", lambda: None)

    def too_slow(page: Any, dpi: int, seconds: float) -> list[ocr.OcrLine]:
        raise ocr.PageTimeout

    monkeypatch.setattr(ocr, "ocr_lines", too_slow)
    with pytest.raises(NeedsOCR) as err:
        parse(SCANS[0], Limits(ocr_page_seconds=5))
    assert "no text layer" in str(err.value)

    seen: list[str] = []

    def reads(page: Any, dpi: int, seconds: float) -> list[ocr.OcrLine]:
        seen.append(f"{dpi}")
        return [_line("Some recognised words on a scanned page", 50, 100, 300, 112)]

    monkeypatch.setattr(ocr, "ocr_lines", reads)
    doc = parse(SCANS[0], Limits(ocr_dpi=123))
    assert seen == ["123"] and doc.ocr_pages == 1
    with pymupdf.open(SCANS[0]) as pdfdoc:  # two scanned pages, limit one: the second is not read
        pdfdoc.insert_pdf(pymupdf.open(SCANS[1]))
        two = pdfdoc.tobytes()
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"two-scans-{os.getpid()}.pdf"
    path.write_bytes(two)
    try:
        doc = parse(path, Limits(max_ocr_pages=1))
    finally:
        path.unlink()
    assert doc.ocr_pages == 1
    assert any("OCR page limit reached: 1 of 2" in w and "pages 2 were not" in w for w in doc.warnings)


# ----------------------------------------------------------------------------- the real models
SENTENCES = {  # a sentence visible on each scan, as printed
    "scanned-huckfinn-p22.pdf": "We scrouched down and laid still",
    "scanned-wikipedia-ocr-printout.pdf": "Emanuel Goldberg developed a machine that read characters",
}


@pytest.fixture(scope="module")
def scanned_library(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The two corpus scans ingested through the real worker process with the real OCR models, then re-ingested."""
    db = tmp_path_factory.mktemp("ocr") / "lib.db"
    store = Store(db)
    seen: list[IngestProgress] = []
    first = ingest(store, SCANS, progress=seen.append)
    again: list[IngestProgress] = []
    second = ingest(store, SCANS, progress=again.append)
    return {"db": db, "store": store, "first": first, "progress": seen, "second": second, "again": again}


@needs_corpus
@needs_engine
@pytest.mark.model
def test_every_scan_ingests_ok_with_passages_boxes_and_the_ocr_mark(scanned_library: dict[str, Any]) -> None:
    store: Store = scanned_library["store"]
    report = scanned_library["first"]
    assert report.counts["added"] == 2 and not report.failed
    for result in report.results:
        assert result.status == "ok" and result.passages > 0 and result.ocr_pages == 1, result
        doc = store.document(result.document_id)
        assert doc is not None and doc.status == "ok" and doc.ocr_label() == "OCR 1/1 pages"
        assert any("read by OCR" in w for w in doc.warnings) and "read by OCR" in result.message
        passages = store.passages(document_id=doc.id)
        assert passages
        with pymupdf.open(doc.path) as pdfdoc:
            rect = pdfdoc[0].rect
        for n in passages:
            assert n.location.page == 1 and n.location.boxes
            for page, x0, y0, x1, y1 in n.location.boxes:
                assert page == 1 and 0 <= x0 < x1 <= rect.width + 1 and 0 <= y0 < y1 <= rect.height + 1
    ocr_steps = [p for p in scanned_library["progress"] if p.status == "working" and p.message]
    assert [p.message for p in ocr_steps] == ["OCR page 1/1", "OCR page 1/1"]


@needs_corpus
@needs_engine
@pytest.mark.model
def test_reingest_of_unchanged_scans_does_not_redo_ocr(scanned_library: dict[str, Any]) -> None:
    second = scanned_library["second"]
    assert second.counts["skipped"] == 2 and second.counts["added"] == second.counts["updated"] == 0
    assert all(r.ocr_pages == 1 and r.status == "ok" for r in second.results)
    assert not any(p.message.startswith("OCR page") for p in scanned_library["again"])


@needs_corpus
@needs_engine
@pytest.mark.model
@pytest.mark.parametrize("name", sorted(SENTENCES))
def test_bm25_finds_the_scanned_page_of_a_visible_sentence(scanned_library: dict[str, Any], name: str) -> None:
    store: Store = scanned_library["store"]
    hits = store.search(SENTENCES[name])
    assert hits, f"nothing found for {SENTENCES[name]!r}"
    node = hits[0][0]
    doc = store.document(node.document_id)
    assert doc is not None and Path(doc.path).name == name and node.location.page == 1


@needs_corpus
@needs_engine
@pytest.mark.model
def test_ask_no_answer_finds_the_scanned_page(scanned_library: dict[str, Any]) -> None:
    """`shelfwise ask --no-answer --json` (navigation with the bundled embedder, through the Shelf)."""
    env = dict(os.environ)
    env.setdefault("SHELFWISE_HOME", str(Path.home() / ".cache" / "shelfwise-test-home"))
    exe = Path(sys.executable).parent / "shelfwise"
    question = "Who developed a machine that read characters and converted them into telegraph code?"
    r = subprocess.run([str(exe), "--db", str(scanned_library["db"]), "ask", question, "--no-answer", "--json"],
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    top = json.loads(r.stdout)["passages"][0]
    assert top["path"].endswith("scanned-wikipedia-ocr-printout.pdf") and top["location"]["page"] == 1
    assert "Goldberg" in top["text"] and top["location"]["boxes"]


@needs_corpus
@pytest.mark.gui
def test_preview_paints_the_stored_boxes_on_a_page_without_text_layer(qtbot: Any) -> None:
    from shelfwise.app.gui.preview import render_pdf_page

    scan = str(SCANS[0])
    _image, highlights, pages, _y, _sentence = render_pdf_page(scan, 1, "words the page has no text layer for", 400)
    assert highlights == 0 and pages == 1  # nothing to find by text on a scan
    boxes = ((1, 50.0, 100.0, 300.0, 112.0), (1, 50.0, 116.0, 280.0, 128.0), (2, 0.0, 0.0, 9.0, 9.0))
    _image, highlights, pages, first_y, _sentence = render_pdf_page(
        scan, 1, "words the page has no text layer for", 400, boxes
    )
    assert highlights == 2  # the two boxes on page 1, not the one on page 2
    with pymupdf.open(scan) as doc:
        assert first_y == pytest.approx(100.0 / doc[0].rect.height)


@pytest.mark.gui
def test_window_shows_ocr_progress_and_marks_ocr_documents(qtbot: Any, tmp_path: Path) -> None:
    from shelfwise.app.gui.ingest_bar import IngestBar
    from shelfwise.app.gui.library import LibraryView
    from shelfwise.core.shelf import Shelf

    bar = IngestBar()
    qtbot.addWidget(bar)
    bar.start()
    bar.update_progress(IngestProgress(0, 2, "/x/scan.pdf", "working", "OCR page 2/5", None, 3.0))
    assert bar.file_label.text() == "scan.pdf · OCR page 2/5"
    store = Store(tmp_path / "lib.db")
    coll = store.collection("Scans")
    page = Location(page=1, boxes=((1, 1.0, 2.0, 3.0, 4.0),))
    scan = ParsedDocument("A scan", "pdf", [ParsedNode("passage", "t", "read from the image", page)], pages=2,
                          ocr_pages=1)
    store.write_document(coll.id, str(tmp_path / "scan.pdf"), FileMeta(1, 1.0, "a"), scan)
    view = LibraryView()
    qtbot.addWidget(view)
    view.refresh(Shelf(store=store))
    (item,) = view.document_items()
    assert item.text(0) == "scan.pdf · OCR" and "OCR 1/2 pages read by OCR" in item.toolTip(0)


@needs_corpus
@needs_engine
@pytest.mark.model
def test_cancel_during_ocr_stores_nothing(tmp_path: Path) -> None:
    """Cancel as soon as the worker reports the first OCR page: the worker is stopped, nothing is written."""
    store = Store(tmp_path / "lib.db")
    seen: list[str] = []
    report = ingest(store, [SCANS[1]], progress=lambda p: seen.append(p.message),
                    cancel=lambda: any(m.startswith("OCR page") for m in seen))
    assert report.cancelled and "OCR page 1/1" in seen
    assert store.documents() == []


def _scanned_pdf(path: Path) -> Path:
    """A page with a 22 pt heading and 11 pt paragraphs, rasterised at 150 dpi and put back as an image-only page."""
    body = ("Employees who travel for work book trains and flights through the travel desk. Receipts are kept "
            "for every expense over twenty pounds and attached to the claim within thirty days.")
    src = pymupdf.open()
    page = src.new_page()
    page.insert_text((72, 100), "Travel Expenses", fontsize=22, fontname="helv")
    page.insert_textbox(pymupdf.Rect(72, 130, 520, 260), body, fontsize=11, fontname="helv")
    page.insert_text((72, 300), "Meals Allowance", fontsize=22, fontname="helv")
    page.insert_textbox(pymupdf.Rect(72, 330, 520, 460), "Meals are paid up to forty pounds a day when staying "
                        "away from home overnight, with itemised receipts.", fontsize=11, fontname="helv")
    pix = page.get_pixmap(dpi=150)
    out = pymupdf.open()
    scan = out.new_page(width=page.rect.width, height=page.rect.height)
    scan.insert_image(scan.rect, pixmap=pix)
    out.save(str(path))
    return path


@needs_engine
@pytest.mark.model
def test_ocr_headings_by_size_become_sections(tmp_path: Path) -> None:
    doc = parse(_scanned_pdf(tmp_path / "policy-scan.pdf"))
    assert doc.ocr_pages == 1
    # both headings at one level (one has descenders, the other not); spaces compared loosely: the recogniser
    # sometimes runs two words of large type together ("MealsAllowance")
    titles = [n.title.replace(" ", "") for n in doc.children if n.kind == "section"]
    assert titles == ["TravelExpenses", "MealsAllowance"], [(n.kind, n.title) for n in doc.nodes()]
    first = " ".join(n.text for n in doc.children[0].children)
    assert "Receipts are kept for every expense over twenty pounds" in first
    assert all(n.location.boxes for n in doc.nodes() if n.kind == "passage")
