"""Parsers on small documents the tests build themselves (docx, pptx, xlsx, pdf, md, txt) and on hostile
input."""

from __future__ import annotations

import datetime as dt
import shutil
import zipfile
from pathlib import Path

import pytest

from shelfwise.ingest.model import (
    CorruptFile,
    EmptyDocument,
    IngestError,
    Limits,
    NeedsOCR,
    ParsedDocument,
    ParsedNode,
    PasswordProtected,
    TooLarge,
    UnsupportedFormat,
)
from shelfwise.ingest.passages import (
    PassageBuilder,
    estimate_tokens,
    markdown_table,
    split_passages,
    split_sentences,
    table_chunks,
)
from shelfwise.ingest.registry import LEGACY_EXTENSIONS, SUPPORTED_EXTENSIONS, is_candidate, parse

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def sections(nodes: list[ParsedNode]) -> list[ParsedNode]:
    return [n for n in nodes if n.kind == "section"]


def passages(doc: ParsedDocument) -> list[ParsedNode]:
    return [n for n in doc.nodes() if n.kind == "passage"]


def below(node: ParsedNode) -> list[str]:
    """The texts of the passages beneath ``node`` (a table's rows sit in the table's own section)."""
    return [n.text for n in node.walk() if n.kind == "passage"]


def find(doc: ParsedDocument, title: str) -> ParsedNode:
    return next(n for n in doc.nodes() if n.kind == "section" and n.title == title)


# ---------------------------------------------------------------- passages

SENTENCES = [
    "The trustee reviews every plan before the meeting of creditors.",
    "Payments start thirty days after the petition is filed, e.g. by wire or check.",
    "Dr. Smith signed the report on behalf of the office.",
    "Is the debtor eligible?",
    "Yes!",
]


def test_split_passages_respects_bound_and_sentence_boundaries() -> None:
    text = " ".join(SENTENCES * 40)
    parts = split_passages(text, max_tokens=60)
    assert len(parts) > 5
    assert all(estimate_tokens(p) <= 60 for p in parts)
    assert " ".join(parts).split() == text.split()  # nothing lost or reordered
    for p in parts:  # each passage starts and ends at a sentence boundary
        assert p.rstrip().endswith((".", "?", "!"))
        assert any(p.startswith(s) for s in SENTENCES)


def test_abbreviations_do_not_end_sentences() -> None:
    out = split_sentences("Payments, e.g. by wire, are due. Dr. Smith agrees. 1. First item.")
    assert out == ["Payments, e.g. by wire, are due.", "Dr. Smith agrees.", "1. First item."]


def test_overlong_sentence_is_cut_at_word_boundaries() -> None:
    words = [f"word{i}" for i in range(400)]
    parts = split_passages(" ".join(words), max_tokens=50)
    assert len(parts) > 1
    assert all(estimate_tokens(p) <= 50 for p in parts)
    assert " ".join(parts).split() == words


def test_cjk_text_without_spaces_is_bounded() -> None:
    text = "これは日本語の文です。" * 60
    parts = split_passages(text, max_tokens=40)
    assert len(parts) > 1
    assert all(estimate_tokens(p) <= 40 for p in parts)
    assert "".join(parts) == text
    assert all(p.endswith("。") for p in parts)  # split at the CJK full stop, not inside a sentence


def test_short_text_is_one_passage() -> None:
    assert split_passages("One sentence only.", 200) == ["One sentence only."]
    assert split_passages("   ", 200) == []


def test_markdown_table_pads_and_escapes() -> None:
    md = markdown_table([["a", "b|c"], ["1"], ["", ""], ["x\ny", "2", "3"]])
    assert md.splitlines() == [
        "| a | b\\|c |  |",
        "|---|---|---|",
        "| 1 |  |  |",
        "| x y | 2 | 3 |",
    ]


def test_table_chunks_repeat_header_and_stay_bounded() -> None:
    rows = [["Name", "Value"]] + [[f"row {i}", str(i)] for i in range(50)]
    chunks = table_chunks(rows, max_tokens=200, max_rows=20)
    assert [c[:2] for c in chunks] == [(0, 20), (21, 40), (41, 50)]
    for _first, _last, md in chunks:
        assert md.startswith("| Name | Value |")
    small = table_chunks(rows, max_tokens=40, max_rows=20)
    assert all(estimate_tokens(md) <= 60 for *_r, md in small)  # header + a few rows (estimate per row)
    assert sum(md.count("\n") - 1 for *_r, md in small) == 50


def test_passage_builder_packs_and_never_exceeds_bound() -> None:
    builder = PassageBuilder(max_tokens=50)
    for i in range(30):
        builder.add(f"Paragraph {i} has a few words in it.")
    out = builder.flush()
    assert 1 < len(out) < 30
    assert all(estimate_tokens(p.text) <= 50 for p in out)
    assert "\n".join(p.text for p in out).count("Paragraph") == 30


# ---------------------------------------------------------------- registry checks


def test_extensions_and_candidates(tmp_path: Path) -> None:
    assert {".pdf", ".docx", ".pptx", ".xlsx", ".xlsm", ".md", ".markdown", ".txt"} == set(
        SUPPORTED_EXTENSIONS
    )
    assert set(LEGACY_EXTENSIONS) == {".doc", ".ppt", ".xls"}
    assert is_candidate(tmp_path / "a.PDF")
    assert is_candidate(tmp_path / "old.doc")
    assert not is_candidate(tmp_path / "~$lock.docx")
    assert not is_candidate(tmp_path / "picture.png")


@pytest.mark.parametrize("ext,target", [(".doc", ".docx"), (".ppt", ".pptx"), (".xls", ".xlsx")])
def test_legacy_extensions_are_unsupported(tmp_path: Path, ext: str, target: str) -> None:
    f = tmp_path / f"old{ext}"
    f.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600)
    with pytest.raises(UnsupportedFormat, match=f"unsupported format: legacy \\{ext}.*save as \\{target}"):
        parse(f)


def test_unknown_extension_missing_empty_and_too_large(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFormat, match=r"unsupported format: \.png"):
        parse(tmp_path / "x.png")
    with pytest.raises(IngestError, match="file not found"):
        parse(tmp_path / "missing.pdf")
    empty = tmp_path / "empty.docx"
    empty.write_bytes(b"")
    with pytest.raises(EmptyDocument, match="empty"):
        parse(empty)
    big = tmp_path / "big.txt"
    big.write_text("hello world\n" * 100)
    with pytest.raises(TooLarge, match="over the"):
        parse(big, Limits(max_file_bytes=100))


def test_text_without_words_is_empty(tmp_path: Path) -> None:
    f = tmp_path / "blank.txt"
    f.write_text("\n\n   \n\t\n")
    with pytest.raises(EmptyDocument, match="no text found"):
        parse(f)


def test_wrong_extensions_are_detected(tmp_path: Path, small_pdf: Path, small_docx: Path) -> None:
    pdf_as_docx = tmp_path / "report.docx"
    shutil.copy(small_pdf, pdf_as_docx)
    with pytest.raises(UnsupportedFormat, match=r"is a PDF document; rename it to \.pdf"):
        parse(pdf_as_docx)
    docx_as_xlsx = tmp_path / "sheet.xlsx"
    shutil.copy(small_docx, docx_as_xlsx)
    with pytest.raises(UnsupportedFormat, match=r"is a Word document \(.docx\)"):
        parse(docx_as_xlsx)
    docx_as_pdf = tmp_path / "doc.pdf"
    shutil.copy(small_docx, docx_as_pdf)
    with pytest.raises(UnsupportedFormat, match="Word document"):
        parse(docx_as_pdf)
    legacy_as_docx = tmp_path / "form.docx"
    shutil.copy(CORPUS / "utas-travel-form.doc", legacy_as_docx)
    with pytest.raises(UnsupportedFormat, match=r"legacy Word 97-2003 document \(.doc\); save it as .docx"):
        parse(legacy_as_docx)
    plain_zip = tmp_path / "deck.pptx"
    with zipfile.ZipFile(plain_zip, "w") as zf:
        zf.writestr("readme.txt", "not a presentation")
    with pytest.raises(UnsupportedFormat, match="not an Office Open XML document"):
        parse(plain_zip)
    text_as_pdf = tmp_path / "notes.pdf"
    text_as_pdf.write_text("just some text, no PDF header")
    with pytest.raises(CorruptFile, match="corrupt"):
        parse(text_as_pdf)
    binary_as_txt = tmp_path / "data.txt"
    binary_as_txt.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(UnsupportedFormat, match="binary"):
        parse(binary_as_txt)


def test_zip_bomb_is_refused(tmp_path: Path, small_docx: Path) -> None:
    bomb = tmp_path / "bomb.docx"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        zf.writestr("word/document.xml", b"\0" * (8 * 2**20))  # 8 MB of zeros: ~1000x ratio
    assert bomb.stat().st_size < 100_000
    with pytest.raises(TooLarge, match="zip bomb"):
        parse(bomb)
    # total size over the limit at a normal ratio: too large to read, not a zip bomb (issue 38)
    with pytest.raises(TooLarge, match="more than Shelfwise reads from one file") as err:
        parse(small_docx, Limits(max_zip_uncompressed_bytes=10_000))
    assert "zip bomb" not in str(err.value)


def test_truncated_zip_is_corrupt(tmp_path: Path, small_docx: Path) -> None:
    cut = tmp_path / "cut.docx"
    cut.write_bytes(small_docx.read_bytes()[:3000])
    with pytest.raises(CorruptFile, match="corrupt or truncated"):
        parse(cut)


# ---------------------------------------------------------------- docx


@pytest.fixture(scope="module")
def small_docx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import docx
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    d = docx.Document()
    d.add_heading("Travel Policy", 0)  # Title style: the document title, not a section
    d.add_paragraph("Preamble before any heading.")
    d.add_heading("Claims", 1)
    d.add_paragraph("Claims are paid monthly.")
    d.add_heading("Meals", 2)
    d.add_paragraph("Meals up to 40 EUR a day.")
    d.add_paragraph("Deep detail", style="Heading 8")  # jump from H2 to Heading 8
    d.add_paragraph("Only with a receipt.")
    d.add_heading("Hotels", 2)
    d.add_paragraph("Book through the portal", style="List Bullet")
    d.add_paragraph("Keep the invoice", style="List Bullet")
    table = d.add_table(rows=3, cols=3)
    for r, row in enumerate([["City", "Rate", "Note"], ["Paris", "180", "high season"], ["Lyon", "120", ""]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.cell(0, 1).merge(table.cell(0, 2))  # horizontal span in the header
    table.cell(1, 2).merge(table.cell(2, 2))  # vertical span
    table.cell(1, 2).text = "both cities"
    p = d.add_paragraph("Appendix by outline level")
    ppr = p._p.get_or_add_pPr()
    lvl = OxmlElement("w:outlineLvl")
    lvl.set(qn("w:val"), "0")
    ppr.append(lvl)
    d.add_paragraph("Appendix text.")
    d.add_heading("", 1)  # empty heading: ignored
    out = tmp_path_factory.mktemp("docx") / "policy.docx"
    d.save(str(out))
    return out


def test_docx_headings_nest_and_tolerate_jumps(small_docx: Path) -> None:
    doc = parse(small_docx)
    assert doc.title == "Travel Policy"
    assert doc.format == "docx"
    assert doc.children[0].kind == "passage" and doc.children[0].text == "Preamble before any heading."
    top = sections(doc.children)
    assert [s.title for s in top] == ["Claims", "Appendix by outline level"]
    claims = top[0]
    assert [s.title for s in sections(claims.children)] == ["Meals", "Hotels"]
    meals = sections(claims.children)[0]
    assert [s.title for s in sections(meals.children)] == ["Deep detail"]
    assert sections(meals.children)[0].children[0].text == "Only with a receipt."
    assert top[1].children[0].text == "Appendix text."
    assert doc.count("section") == 6  # five headings and the Hotels table's own section


def test_docx_lists_and_merged_table(small_docx: Path) -> None:
    doc = parse(small_docx)
    hotels = find(doc, "Hotels")
    text = "\n".join(below(hotels))
    assert "- Book through the portal\n- Keep the invoice" in text
    table = [ln for ln in text.splitlines() if ln.startswith("|")]
    assert table == [
        "| City | Rate Note |  |",  # horizontal span (python-docx merges the texts): once
        "|---|---|---|",
        "| Paris | 180 | both cities |",  # vertical span: repeated
        "| Lyon | 120 | both cities |",
    ]


# ---------------------------------------------------------------- pptx


@pytest.fixture(scope="module")
def small_pptx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import pptx
    from pptx.util import Inches, Pt

    prs = pptx.Presentation()
    s1 = prs.slides.add_slide(prs.slide_layouts[0])
    s1.shapes.title.text = "Quarterly\vReview"
    s1.placeholders[1].text = "Prepared by finance"
    s1.notes_slide.notes_text_frame.text = "Say hello first."
    s2 = prs.slides.add_slide(prs.slide_layouts[6])  # blank: no title placeholder
    body = s2.shapes.add_textbox(Inches(1), Inches(3), Inches(6), Inches(2))
    body.text_frame.text = "Revenue grew in every region."
    top = s2.shapes.add_textbox(Inches(1), Inches(0.5), Inches(6), Inches(1))
    top.text_frame.text = "Regional results"
    top.text_frame.paragraphs[0].runs[0].font.size = Pt(36)
    group = s2.shapes.add_group_shape()
    inner = group.shapes.add_textbox(Inches(1), Inches(5), Inches(3), Inches(1))
    inner.text_frame.text = "Grouped footnote text."
    rows = s2.shapes.add_table(3, 2, Inches(1), Inches(6), Inches(4), Inches(1)).table
    for r, row in enumerate([["Region", "Growth"], ["North", "4%"], ["South", "6%"]]):
        for c, value in enumerate(row):
            rows.cell(r, c).text = value
    s3 = prs.slides.add_slide(prs.slide_layouts[6])
    s3.shapes.add_picture if False else None  # noqa: B018  (an empty slide)
    out = tmp_path_factory.mktemp("pptx") / "deck.pptx"
    prs.save(str(out))
    return out


def test_pptx_slides_titles_body_notes(small_pptx: Path) -> None:
    doc = parse(small_pptx)
    assert doc.format == "pptx" and doc.pages == 3
    assert doc.title == "Quarterly Review"
    slides = sections(doc.children)
    assert [s.title for s in slides] == ["Quarterly Review", "Regional results", "Slide 3"]
    assert [s.location.slide for s in slides] == [1, 2, 3]
    first = [p.text for p in slides[0].children]
    assert first == ["Prepared by finance", "Notes: Say hello first."]
    second = "\n".join(below(slides[1]))
    assert (
        second.index("Revenue grew") < second.index("Grouped footnote") < second.index("| Region | Growth |")
    )
    assert "Regional results" not in second  # the title is not repeated as body
    assert "| South | 6% |" in second
    assert all(p.location.slide == 2 for p in slides[1].walk())
    assert slides[2].children == []


# ---------------------------------------------------------------- xlsx


@pytest.fixture(scope="module")
def small_xlsx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws.append(["Sales 2024"])  # a title row above the header
    ws.append(["Date", "Region", "Amount", "Share"])
    for i in range(25):
        ws.append([dt.datetime(2024, 1, 1 + i), f"R{i}", 1000.0 + i, 0.125])
        ws.cell(row=ws.max_row, column=4).number_format = "0.0%"
    ws.append([])
    ws.append(["Manager", "Team"])
    ws.append(["Ann", "North"])
    ws.append(["Bob", "South"])
    notes = wb.create_sheet("Notes")
    notes["A1"] = "Figures are unaudited."
    notes["A2"] = "Contact finance for details."
    wb.create_sheet("Empty")
    out = tmp_path_factory.mktemp("xlsx") / "sales.xlsx"
    wb.save(str(out))
    return out


def test_xlsx_regions_headers_and_cells(small_xlsx: Path) -> None:
    doc = parse(small_xlsx)
    assert doc.format == "xlsx" and doc.pages == 3
    assert [s.title for s in sections(doc.children)] == ["Sales", "Notes", "Empty"]
    sales = sections(doc.children)[0]
    texts = below(sales)
    assert texts[0].startswith("Sales 2024\n| Date | Region | Amount | Share |")
    assert "| 2024-01-01 | R0 | 1000 | 12.5% |" in texts[0]
    tables = [t for t in texts if "| Date | Region |" in t]
    assert len(tables) == 2  # 25 data rows: 20 + 5, each chunk repeats the header
    assert "| 2024-01-25 | R24 | 1024 | 12.5% |" in tables[1]
    first = sales.children[0].children[0]  # the table's section, its first passage
    assert first.location.sheet == "Sales"
    last = int(texts[0].rstrip().splitlines()[-1].split("| R")[1].split(" ")[0])  # last data row shown: R<k>
    assert first.location.cells == f"A1:D{last + 3}"  # title row 1, header row 2, R0 on row 3
    assert any("| Manager | Team |\n|---|---|\n| Ann | North |\n| Bob | South |" in t for t in texts)
    notes = sections(doc.children)[1]
    assert notes.children[0].text == "Figures are unaudited.\nContact finance for details."
    assert notes.children[0].location.cells == "A1:A2"


def test_xlsx_truncates_huge_sheets(small_xlsx: Path) -> None:
    doc = parse(small_xlsx, Limits(max_sheet_cells=40))
    assert any("truncated" in w for w in doc.warnings)
    assert "R24" not in "\n".join(p.text for p in passages(doc))


# ---------------------------------------------------------------- markdown and text


def test_markdown_headings_code_and_lines(tmp_path: Path) -> None:
    md = tmp_path / "guide.md"
    md.write_text(
        "# Guide\n\nIntro line.\n\n## Install\n\nRun it:\n\n```sh\n# not a heading\npip install x\n```\n\n"
        "### Linux\n\nUse apt.\n\nSetext Title\n============\n\nLast words.\n",
        encoding="utf-8",
    )
    doc = parse(md)
    assert doc.title == "Guide" and doc.format == "md"
    top = sections(doc.children)
    assert [s.title for s in top] == ["Guide", "Setext Title"]
    install = sections(top[0].children)[0]
    assert install.title == "Install" and install.location.line == 5
    assert "# not a heading\npip install x" in install.children[0].text
    assert [s.title for s in sections(install.children)] == ["Linux"]
    assert top[0].children[0].location.line == 3


def test_plain_text_paragraphs_and_title(tmp_path: Path) -> None:
    txt = tmp_path / "memo.txt"
    txt.write_bytes(
        "Office Memo\n\nFirst paragraph.\nStill first.\n\n\nSecond one — café.\n".encode("cp1252")
    )
    doc = parse(txt)
    assert doc.title == "Office Memo"
    assert [p.location.line for p in passages(doc)] == [1]  # short paragraphs pack into one passage
    assert "Second one — café." in passages(doc)[0].text
    assert any("UTF-8" in w for w in doc.warnings)
    untitled = tmp_path / "untitled.txt"
    untitled.write_text("This is a sentence that ends with a period.\n")
    assert parse(untitled).title == "untitled"


# ---------------------------------------------------------------- pdf


def _pdf(path: Path, pages: list[list[tuple[str, float, str]]], toc: list[list] | None = None) -> Path:
    import pymupdf

    doc = pymupdf.open()
    for lines in pages:
        page = doc.new_page()
        y = 72.0
        for text, size, font in lines:
            if text:
                page.insert_text((72, y), text, fontsize=size, fontname=font)
            y += size * 1.6
    if toc:
        doc.set_toc(toc)
    doc.save(str(path))
    doc.close()
    return path


BODY = "This is ordinary body text of the report that goes on for a while."


@pytest.fixture(scope="module")
def small_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("pdf")
    pages = [
        [
            ("Annual Report", 24, "hebo"),
            *[(BODY, 11, "helv")] * 6,
            ("Scope", 16, "hebo"),
            *[(BODY, 11, "helv")] * 6,
        ],
        [
            ("Method", 16, "hebo"),
            *[(BODY, 11, "helv")] * 4,
            ("Sampling", 13, "hebo"),
            *[(BODY, 11, "helv")] * 5,
        ],
        [
            ("Results", 16, "hebo"),
            *[(BODY, 11, "helv")] * 3,
            ("Key figures", 11, "hebo"),
            *[(BODY, 11, "helv")] * 3,
        ],
    ]
    return _pdf(base / "report.pdf", pages)


def test_pdf_headings_from_fonts(small_pdf: Path) -> None:
    doc = parse(small_pdf)
    assert doc.format == "pdf" and doc.pages == 3
    assert doc.title == "Annual Report"
    top = sections(doc.children)
    assert [s.title for s in top] == ["Annual Report"]
    assert [s.title for s in sections(top[0].children)] == ["Scope", "Method", "Results"]
    method = find(doc, "Method")
    assert [s.title for s in sections(method.children)] == ["Sampling"]
    assert [s.title for s in sections(find(doc, "Results").children)] == ["Key figures"]  # bold at body size
    assert method.location.page == 2
    assert all(p.location.page in (1, 2, 3) for p in passages(doc))


def test_pdf_outline_gives_sections_with_page_ranges(tmp_path: Path) -> None:
    # each page opens with its own words (one line repeated at the same place on every page is a running header)
    names = ["Scope", "Method", "Results", "Costs", "Outlook"]
    pages = [[(f"{names[i]} heading", 14, "helv"), *[(BODY, 11, "helv")] * 5] for i in range(5)]
    toc = [[1, "Part A", 1], [2, "A.1", 2], [2, "A.2", 3], [1, "Part B", 4], [1, "Nowhere", -1]]
    doc = parse(_pdf(tmp_path / "outlined.pdf", pages, toc))
    top = sections(doc.children)
    assert [s.title for s in top] == ["Part A", "Part B"]
    assert [s.title for s in sections(top[0].children)] == ["A.1", "A.2"]
    assert (top[0].location.page, top[0].location.page_end) == (1, 3)
    assert (top[1].location.page, top[1].location.page_end) == (4, 5)
    a2 = sections(top[0].children)[1]
    assert "Results heading" in a2.children[0].text


def test_pdf_bookmarks_that_all_point_at_the_page_top_are_placed_by_their_titles(tmp_path: Path) -> None:
    # some PDF writers point every bookmark at its page's top: several sections on one page then share a target,
    # and the text of each must still land in its own section (it used to land in the page's last one)
    import pymupdf

    gap = ("", 14, "helv")  # headings set apart from the text, as on a real page
    pages = [[("Alpha rules", 14, "helv"), gap, *[(BODY, 11, "helv")] * 2, gap, gap, ("Beta rules", 14, "helv"), gap,
              ("Beta text is about beavers.", 11, "helv")]]
    toc = [[1, "Alpha rules", 1, {"kind": 1, "to": pymupdf.Point(72, 36)}],
           [1, "Beta rules", 1, {"kind": 1, "to": pymupdf.Point(72, 36)}]]
    doc = parse(_pdf(tmp_path / "top.pdf", pages, toc))
    alpha, beta = sections(doc.children)
    assert [c.text for c in alpha.children] == ["\n".join([BODY] * 2)]
    assert [c.text for c in beta.children] == ["Beta text is about beavers."]
    # the bundled sample handbook is such a PDF
    handbook = parse(Path(__file__).resolve().parents[1] / "resources" / "sample" / "handbook.pdf")
    annual, requesting = find(handbook, "3.1 Annual leave"), find(handbook, "3.2 Requesting leave")
    assert annual in find(handbook, "3 Leave").children
    assert annual.children[0].text.startswith("Full-time employees receive 27 days of paid annual leave")
    assert requesting.children[0].text.startswith("All leave is requested in the LeaveDesk portal")


def test_pdf_flat_numbered_outline_is_nested(tmp_path: Path) -> None:
    pages = [
        [(f"{n} Topic", 14, "helv"), *[(BODY, 11, "helv")] * 3]
        for n in ["2.1", "2.1.1", "2.1.2", "2.2", "2.2.1"]
    ]
    toc = [[1, f"{n} Topic", i + 1] for i, n in enumerate(["2.1", "2.1.1", "2.1.2", "2.2", "2.2.1"])]
    doc = parse(_pdf(tmp_path / "numbered.pdf", pages, toc))
    top = sections(doc.children)
    assert [s.title for s in top] == ["2.1 Topic", "2.2 Topic"]
    assert [s.title for s in sections(top[0].children)] == ["2.1.1 Topic", "2.1.2 Topic"]


def test_pdf_pages_without_text(tmp_path: Path) -> None:
    blank = _pdf(tmp_path / "scan.pdf", [[], []])
    with pytest.raises(NeedsOCR, match="no text layer; the pages are blank"):  # blank: nothing for OCR to read
        parse(blank)
    mixed = parse(_pdf(tmp_path / "mixed.pdf", [[(BODY, 11, "helv")], [], [(BODY, 11, "helv")], []]))
    assert any("pages without text" in w and "2, 4" in w for w in mixed.warnings)


def test_pdf_max_pages(tmp_path: Path) -> None:
    pdf = _pdf(tmp_path / "long.pdf", [[(f"Page number {i + 1} text. {BODY}", 11, "helv")] for i in range(6)])
    doc = parse(pdf, Limits(max_pages=2))
    assert doc.pages == 6
    assert any("first 2 of 6 pages" in w for w in doc.warnings)
    text = "\n".join(p.text for p in passages(doc))
    assert "Page number 2 text" in text and "Page number 3" not in text


def test_pdf_encrypted(tmp_path: Path) -> None:
    import pymupdf

    src = pymupdf.open(str(_pdf(tmp_path / "plain.pdf", [[(BODY, 11, "helv")]])))
    out = tmp_path / "locked.pdf"
    src.save(str(out), encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret", owner_pw="owner")
    with pytest.raises(PasswordProtected, match="password-protected"):
        parse(out)


def test_pdf_table_as_markdown(tmp_path: Path) -> None:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "Rates table", fontsize=11)
    rows = [["City", "Rate", "Tax"], ["Paris", "180", "5"], ["Lyon", "120", "4"], ["Nice", "150", "3"]]
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            rect = pymupdf.Rect(72 + c * 100, 100 + r * 20, 172 + c * 100, 120 + r * 20)
            page.draw_rect(rect, color=(0, 0, 0), width=0.8)
            page.insert_text((rect.x0 + 4, rect.y1 - 6), value, fontsize=10)
    out = tmp_path / "table.pdf"
    doc.save(str(out))
    parsed = parse(out)
    text = "\n".join(p.text for p in passages(parsed))
    assert "| City | Rate | Tax |" in text
    assert "| Lyon | 120 | 4 |" in text
    assert text.count("Paris") == 1  # the table's text is not repeated as paragraphs


def test_encrypted_office_file_with_any_ooxml_extension(tmp_path: Path) -> None:
    for ext in (".xlsx", ".pptx"):
        f = tmp_path / f"locked{ext}"
        shutil.copy(CORPUS / "encrypted-pw-solrcell.docx", f)  # an OLE2 container with EncryptionInfo
        with pytest.raises(PasswordProtected, match="password-protected"):
            parse(f)


def test_docx_style_based_on_heading_and_custom_outline_style(tmp_path: Path) -> None:
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    d = docx.Document()
    mine = d.styles.add_style("Chapter Head", WD_STYLE_TYPE.PARAGRAPH)
    mine.base_style = d.styles["Heading 1"]  # inherits the heading level
    outlined = d.styles.add_style("Side Head", WD_STYLE_TYPE.PARAGRAPH)
    lvl = OxmlElement("w:outlineLvl")
    lvl.set(qn("w:val"), "1")  # level 2 set on a custom style
    outlined.element.get_or_add_pPr().append(lvl)
    d.add_paragraph("Chapter one", style="Chapter Head")
    d.add_paragraph("Side topic", style="Side Head")
    d.add_paragraph("Body of the side topic.")
    out = tmp_path / "styles.docx"
    d.save(str(out))
    doc = parse(out)
    top = sections(doc.children)
    assert [s.title for s in top] == ["Chapter one"]
    assert [s.title for s in sections(top[0].children)] == ["Side topic"]
    assert sections(top[0].children)[0].children[0].text == "Body of the side topic."


def test_markdown_with_bom_and_crlf(tmp_path: Path) -> None:
    md = tmp_path / "notes.markdown"
    md.write_bytes("\ufeff# Title\r\n\r\nLine one.\r\nLine two.\r\n".encode())
    doc = parse(md)
    assert doc.title == "Title"
    assert passages(doc)[0].text == "Line one.\nLine two."
    assert passages(doc)[0].location.line == 3


@pytest.mark.parametrize(("value", "number_format", "shown"), [
    (102000, "#,##0", "102,000"),
    (1500, "#,##0.00_);(#,##0.00)", "1,500.00"),
    (1500, "[$EUR] #,##0.00", "EUR 1,500.00"),
    (1500, "€#,##0", "€1,500"),
    (1500, "_-* #,##0.00 [$€-1]_-;-* #,##0.00 [$€-1]_-", "1,500.00 €"),
    (1500, '#,##0 "km"', "1,500 km"),
    (-1500, "#,##0", "-1,500"),
    (0.3, "0.00", "0.30"),
    (1234.5, "General", "1234.5"),
    (0.123, "0.0%", "12.3%"),
    (3, "00000", "3"),  # a format we do not read: the number as written
])
def test_a_spreadsheet_number_reads_as_the_sheet_shows_it(value: float, number_format: str, shown: str) -> None:
    # before, every number was stored bare: the salary band's maximum read "102000" where the sheet shows "102,000"
    from shelfwise.ingest.xlsx import format_value

    assert format_value(value, number_format) == shown
