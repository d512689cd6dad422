"""The tree of a PDF without bookmarks (real files made with PyMuPDF), and text as a reader reads it in every format
(ligatures, full-width forms, symbol glyphs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shelfwise.ingest.model import ParsedDocument, ParsedNode
from shelfwise.ingest.normalize import fold_compat, garble_counts, is_garbled, strip_glyphs
from shelfwise.ingest.pdf_toc import parse_entry
from shelfwise.ingest.registry import parse

BODY = ("The committee reviews every request for funding within ten working days and writes to the person who "
        "asked, giving reasons when a request is refused.")


def _sections(doc: ParsedDocument) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []

    def walk(nodes: list[ParsedNode], depth: int) -> None:
        for n in nodes:
            if n.kind == "section":
                out.append((depth, n.title))
                walk(n.children, depth + 1)

    walk(doc.children, 1)
    return out


def _text(doc: ParsedDocument) -> str:
    return "\n".join(n.text for n in doc.nodes() if n.kind == "passage")


CHAPTERS = [("1", "Funding requests", ["1.1 Who may apply", "1.2 Deadlines"]),
            ("2", "Reviews", ["2.1 The committee", "2.2 Appeals"]),
            ("3", "Payments", ["3.1 Schedules", "3.2 Refunds"])]


@pytest.fixture(scope="module")
def manual(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 9-page manual without bookmarks: a title page, a printed contents page (dot leaders, page numbers), then
    chapters with numbered sections; a running header and page numbers on every body page."""
    import pymupdf

    doc = pymupdf.open()
    cover = doc.new_page()
    cover.insert_text((72, 200), "Grants Handbook", fontsize=28, fontname="hebo")
    cover.insert_text((72, 240), "Edition 2026", fontsize=11, fontname="helv")
    contents = doc.new_page()
    contents.insert_text((72, 100), "Contents", fontsize=18, fontname="hebo")
    y = 140.0
    page = 3
    for number, title, subs in CHAPTERS:
        for label, size in [(f"{number} {title}", 12), *((s, 11) for s in subs)]:
            contents.insert_text((72, y), f"{label} " + ". " * 20 + str(page), fontsize=size, fontname="helv")
            y += 20
        page += 2
    for number, title, subs in CHAPTERS:
        for half in range(2):
            pg = doc.new_page()
            pg.insert_text((72, 40), "Grants Handbook - internal use", fontsize=9, fontname="helv")
            pg.insert_text((300, 810), str(doc.page_count - 2), fontsize=9, fontname="helv")
            y = 100.0
            if half == 0:
                pg.insert_text((72, y), f"{number} {title}", fontsize=20, fontname="hebo")
                y += 40
            for sub in subs[half:half + 1]:
                pg.insert_text((72, y), sub, fontsize=14, fontname="hebo")
                y += 26
                for _ in range(6):
                    pg.insert_text((72, y), BODY[:95], fontsize=10, fontname="helv")
                    pg.insert_text((72, y + 13), BODY[95:], fontsize=10, fontname="helv")
                    y += 30
    path = tmp_path_factory.mktemp("tree") / "handbook.pdf"
    doc.save(str(path))
    doc.close()
    return path


def test_headings_from_typography_and_numbering(manual: Path) -> None:
    doc = parse(manual)
    assert _sections(doc) == [
        (1, "1 Funding requests"), (2, "1.1 Who may apply"), (2, "1.2 Deadlines"),
        (1, "2 Reviews"), (2, "2.1 The committee"), (2, "2.2 Appeals"),
        (1, "3 Payments"), (2, "3.1 Schedules"), (2, "3.2 Refunds"),
    ]  # no wrapper section for the title page, no section for the contents page or its lines
    assert doc.title == "Grants Handbook"


def test_contents_and_furniture_are_not_passages(manual: Path) -> None:
    doc = parse(manual)
    text = _text(doc)
    assert ". . ." not in text and "Funding requests" not in text  # the printed contents are not stored
    assert "internal use" not in text  # the running header
    assert not any(line.strip().isdigit() for line in text.splitlines())  # page numbers
    assert any("contents" in w for w in doc.warnings)
    reviews = next(n for n in doc.nodes() if n.title == "2.1 The committee")
    assert reviews.children and reviews.children[0].text.startswith("The committee reviews")


def test_a_pdf_without_headings_stays_a_flat_run(tmp_path: Path) -> None:
    import pymupdf

    doc = pymupdf.open()
    for _ in range(3):
        page = doc.new_page()
        for i in range(8):
            page.insert_text((72, 100 + 30 * i), BODY[:90], fontsize=10, fontname="helv")
    path = tmp_path / "plain.pdf"
    doc.save(str(path))
    parsed = parse(path)
    assert _sections(parsed) == [] and parsed.count("passage") >= 1
    assert {n.location.page for n in parsed.nodes()} == {1, 2, 3}


def test_contents_entries_are_read() -> None:
    entry = parse_entry("1.2 Deadlines . . . . . . . . 7")
    assert entry is not None and (entry.number, entry.title, entry.page) == ("1.2", "Deadlines", 7)
    entry = parse_entry("Appendix B Invoking R . . . 92")
    assert entry is not None and (entry.number, entry.title) == ("Appendix B", "Invoking R")
    assert parse_entry("4 認証とアクセスの制御 91") is not None
    assert parse_entry("just a sentence of text") is None


def test_compatibility_characters_are_folded() -> None:
    assert fold_compat("quali\ufb01cation \ufb02ow o\ufb03ce \ufb00") == "qualification flow office ff"
    assert fold_compat("ＡＢＣ（１）ｶﾀｶﾅ") == "ABC(1)カタカナ"
    assert fold_compat("m² ½ … ①") == "m² ½ … ①"  # characters that carry meaning stay


def test_symbol_glyphs_are_dropped() -> None:
    assert strip_glyphs("\x02 Security fundamentals\nplain") == ("- Security fundamentals\nplain", 1)
    assert strip_glyphs("price \uf0b7 list") == ("price  list", 1)


@pytest.mark.parametrize(("text", "garbled"), [
    ("]üìÜüéê •ìê °ê£ë†£ûÜüéê †ë ∞†¶£ èÜ•ÜáÜ§ê †°ê£Ü•î†ü§", True),  # a wrong character map (IBM redpaper, p. 3)
    ("Příliš žluťoučký kůň úpěl ďábelské ódy, a zase úžasné", False),  # Czech
    ("Árvíztűrő tükörfúrógép és öt húsz évé", False),  # Hungarian
    ("L'élève a été à Noël chez sa sœur à côté du théâtre", False),  # French
    ("Tôi là người Việt Nam, tôi yêu đất nước của tôi", False),  # Vietnamese
    ("Информационная безопасность — это «важно»", False),  # Cyrillic
    ("• • • • • • • • • • • • • • • • • • • • • • • •", False),  # a font of bullets alone
])
def test_mojibake_is_told_from_accented_text(text: str, garbled: bool) -> None:
    assert is_garbled(*garble_counts(text)) is garbled


@pytest.mark.parametrize("kind", ["md", "docx", "pptx", "xlsx"])
def test_every_format_stores_folded_text(tmp_path: Path, kind: str) -> None:
    text = "Proof of quali\ufb01cation: ＩＤ card"
    path = tmp_path / f"f.{kind}"
    if kind == "md":
        path.write_text(f"# Intro\n\n{text}\n", encoding="utf-8")
    elif kind == "docx":
        import docx

        d = docx.Document()
        d.add_paragraph(text)
        d.save(str(path))
    elif kind == "pptx":
        import pptx

        prs = pptx.Presentation()
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = "Intro"
        slide.placeholders[1].text = text
        prs.save(str(path))
    else:
        import openpyxl

        wb = openpyxl.Workbook()
        wb.active.append(["Item", "Note"])
        wb.active.append(["card", text])
        wb.save(str(path))
    body = _text(parse(path))
    assert "qualification" in body and "ID card" in body and "\ufb01" not in body


def test_animation_builds_are_stored_once(tmp_path: Path) -> None:
    import pptx

    prs = pptx.Presentation()
    bodies = [("Refactoring", "class Foo {\n}"), ("Refactoring", "class Foo {\n}\nclass Bar {\n}"),
              ("Findings", "Programmers refactor often\n" + "R\n" * 8 + "Tools are underused")]
    for title, body in bodies:
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    path = tmp_path / "deck.pptx"
    prs.save(str(path))
    doc = parse(path)
    passages = [n.text for n in doc.nodes() if n.kind == "passage"]
    assert sum("class Foo" in p for p in passages) == 1  # the build step and its last step: once
    assert any("class Bar" in p and "}" in p for p in passages)  # braces of code are text
    findings = next(p for p in passages if "Programmers" in p)
    assert "\nR\n" not in findings and "Tools are underused" in findings  # the diagram's glyphs are not
    assert any("animation build" in w for w in doc.warnings)


def test_word_file_without_heading_styles(tmp_path: Path) -> None:
    import docx
    from docx.enum.text import WD_ALIGN_PARAGRAPH

    d = docx.Document()
    title = d.add_paragraph()
    title.add_run("SERVICE AGREEMENT").bold = True
    title.alignment = WD_ALIGN_PARAGRAPH.CENTER
    for number, name, subs in [("1.", "SCOPE", ["1.1. The supplier must:"]), ("2.", "PRICE", [])]:
        d.add_paragraph().add_run(f"{number}\t{name}").bold = True
        d.add_paragraph("The supplier delivers the maintenance work described in the annex.")
        for sub in subs:
            d.add_paragraph().add_run(sub).bold = True
            p = d.add_paragraph("keep the site clean, ")
            p.add_run("always").bold = True  # bold inside a sentence: not a heading
    path = tmp_path / "agreement.docx"
    d.save(str(path))
    assert _sections(parse(path)) == [
        (1, "SERVICE AGREEMENT"), (1, "1. SCOPE"), (2, "1.1. The supplier must:"), (1, "2. PRICE")]


@pytest.mark.parametrize("bookmarks", [False, True])
def test_a_cover_title_that_runs_as_a_header_is_not_a_passage(tmp_path: Path, bookmarks: bool) -> None:
    """The title page sets the title that every page carries as its running footer (Debian's reference, the IBM
    redpaper's covers): it stays the document's title, not a passage; a heading its pages' header repeats stays a
    section, and a sentence that names the title stays text."""
    import pymupdf

    doc = pymupdf.open()
    cover = doc.new_page()
    cover.insert_text((72, 200), "Grants", fontsize=28, fontname="hebo")
    cover.insert_text((72, 236), "Handbook", fontsize=28, fontname="hebo")
    cover.insert_text((72, 280), "Edition 2026, prepared by the funding office", fontsize=11, fontname="helv")
    toc = []
    for chapter in ("Funding requests", "Reviews"):
        for half in range(3):
            pg = doc.new_page()
            pg.insert_text((72, 40), chapter, fontsize=9, fontname="helv")
            pg.insert_text((72, 810), "Grants Handbook", fontsize=9, fontname="helv")
            y = 100.0
            if half == 0:
                pg.insert_text((72, y), chapter, fontsize=20, fontname="hebo")
                toc.append([1, chapter, doc.page_count])
                y += 40
            for i in range(10):
                line = "Read the Grants Handbook before you apply." if i == 0 and half == 1 else BODY[:90]
                pg.insert_text((72, y + 20 * i), line, fontsize=10, fontname="helv")
    if bookmarks:
        doc.set_toc(toc)
    path = tmp_path / "handbook.pdf"
    doc.save(str(path))
    parsed = parse(path)
    assert [t for _d, t in _sections(parsed)] == ["Funding requests", "Reviews"]
    passages = [n.text for n in parsed.nodes() if n.kind == "passage"]
    assert not any(line.strip() in ("Grants Handbook", "Grants", "Handbook", "Funding requests", "Reviews")
                   for p in passages for line in p.splitlines())
    assert any(p.startswith("Edition 2026") for p in passages)  # the rest of the cover is kept
    assert any("Read the Grants Handbook before you apply." in p for p in passages)
    assert parsed.title == "Grants Handbook"


def test_a_short_guide_keeps_headings_that_end_in_a_preposition_and_its_one_page_subheadings(tmp_path: Path) -> None:
    """A 6-page guide (as GOV.UK writes them): "Who to talk to" is a heading, not a sentence broken over lines;
    its three third-level headings, all on one page, each open a paragraph and stay sections, while a diagram's
    labels in a style of their own (label after label) are still not headings."""
    import pymupdf

    doc = pymupdf.open()
    plan = [("Overview", ["Who to talk to", "What you can apply for"]), ("Apply", ["Fees"]),
            ("Payments", ["Set up payments"]), ("Deposits", ["Cheques"]), ("Diagram", []), ("Close", ["Wills"])]
    for number, (h1, h2s) in enumerate(plan):
        page = doc.new_page()
        page.insert_text((72, 80), h1, fontsize=17, fontname="hebo")
        y = 110.0
        if h1 == "Diagram":
            for label in ("FOR ROWS", "WHERE", "ENFORCED FOR ALL ACCESS", "ENABLE"):
                page.insert_text((72, y), label, fontsize=11.5, fontname="hebo")
                y += 16
        for h2 in h2s:
            page.insert_text((72, y), h2, fontsize=14, fontname="hebo")
            y += 24
            for _ in range(3):
                page.insert_text((72, y), BODY[:95], fontsize=10, fontname="helv")
                page.insert_text((72, y + 13), BODY[95:], fontsize=10, fontname="helv")
                y += 30
            if number == 2:  # the one page with third-level headings
                for h3 in ("One-off payment", "Regular payment", "Payment to another account"):
                    page.insert_text((72, y), h3, fontsize=12, fontname="hebo")
                    page.insert_text((72, y + 18), BODY[:95], fontsize=10, fontname="helv")
                    page.insert_text((72, y + 31), BODY[95:], fontsize=10, fontname="helv")
                    y += 50
    path = tmp_path / "guide.pdf"
    doc.save(str(path))
    assert _sections(parse(path)) == [
        (1, "Overview"), (2, "Who to talk to"), (2, "What you can apply for"), (1, "Apply"), (2, "Fees"),
        (1, "Payments"), (2, "Set up payments"), (3, "One-off payment"), (3, "Regular payment"),
        (3, "Payment to another account"), (1, "Deposits"), (2, "Cheques"), (1, "Diagram"), (1, "Close"),
        (2, "Wills")]


def test_printed_contents_are_not_stored_when_bookmarks_give_the_tree(manual: Path, tmp_path: Path) -> None:
    """The same manual with bookmarks: the tree comes from them, and the printed contents page is still not text."""
    import pymupdf

    path = tmp_path / "bookmarked.pdf"
    with pymupdf.open(str(manual)) as doc:
        doc.set_toc([[1, f"{n} {t}", 3 + 2 * i] for i, (n, t, _s) in enumerate(CHAPTERS)])
        doc.save(str(path))
    parsed = parse(path)
    assert [t for _d, t in _sections(parsed)] == ["1 Funding requests", "2 Reviews", "3 Payments"]
    text = _text(parsed)
    assert "Who may apply … 3" not in text and "1.2 Deadlines" in text  # the heading lines stay, the contents go
    assert any("contents" in w for w in parsed.warnings)
