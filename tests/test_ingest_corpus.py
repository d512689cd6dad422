"""Every file of the shared development corpus parses to the expected structure, or fails with the expected
error.

Expectations are cross-checked against the libraries read directly (PyMuPDF's outline, python-docx's styles,
python-pptx's title placeholders, openpyxl's sheet names) or against counts stated in the corpus' SOURCE.md,
not copied from parser output. Each file is parsed once per session (the 400-page IRS manual included).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path

import pytest

from shelfwise.ingest import ocr
from shelfwise.ingest.model import (
    CorruptFile,
    IngestError,
    NeedsOCR,
    ParsedDocument,
    ParsedNode,
    PasswordProtected,
    UnsupportedFormat,
)
from shelfwise.ingest.passages import estimate_tokens
from shelfwise.ingest.registry import is_candidate, parse

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
FILES = sorted(p.name for p in CORPUS.iterdir() if p.name != "SOURCE.md") if CORPUS.is_dir() else []

EXPECTED_ERRORS: dict[str, tuple[type[IngestError], str]] = {
    "corrupt-invalid.pdf": (CorruptFile, "corrupt or truncated"),
    "truncated-62886.docx": (CorruptFile, "corrupt or truncated"),
    "encrypted-pw-password.pdf": (PasswordProtected, "password-protected"),
    "encrypted-pw-solrcell.docx": (PasswordProtected, "password-protected"),
    "utas-travel-form.doc": (UnsupportedFormat, "unsupported format: legacy .doc"),
    "alterman-security.ppt": (UnsupportedFormat, "unsupported format: legacy .ppt"),
    "tests-example.xls": (UnsupportedFormat, "unsupported format: legacy .xls"),
}

if ocr.unavailable() is not None:  # without the `ocr` extra the scans keep their status, with a message naming it
    for _scan in ("scanned-wikipedia-ocr-printout.pdf", "scanned-huckfinn-p22.pdf"):
        EXPECTED_ERRORS[_scan] = (NeedsOCR, "no text layer; OCR engine not installed")

EXPECTED_FILE_COUNT = 29  # ../shared/corpus/SOURCE.md


def test_corpus_is_the_expected_one() -> None:
    """The corpus is part of the test set-up, not optional: a missing or changed corpus fails here with a message
    (every other test in this module would otherwise check a different set of files)."""
    assert CORPUS.is_dir(), f"the shared corpus is missing: expected {CORPUS} (../shared/corpus beside the repo)"
    assert len(FILES) == EXPECTED_FILE_COUNT, (
        f"{CORPUS} holds {len(FILES)} files, expected {EXPECTED_FILE_COUNT} (SOURCE.md): update the expectations "
        f"in this module for the new corpus; files: {FILES}"
    )


@pytest.fixture(scope="module")
def corpus() -> dict[str, ParsedDocument | IngestError]:
    """Parse every corpus file once; print the timing."""
    out: dict[str, ParsedDocument | IngestError] = {}
    started = time.perf_counter()
    for name in FILES:
        try:
            out[name] = parse(CORPUS / name)
        except IngestError as exc:
            out[name] = exc
    elapsed = time.perf_counter() - started
    print(f"\ncorpus: {len(FILES)} files in {elapsed:.1f} s ({len(FILES) / elapsed:.1f} files/s)")
    return out


def doc_of(corpus: dict[str, ParsedDocument | IngestError], name: str) -> ParsedDocument:
    result = corpus[name]
    assert isinstance(result, ParsedDocument), f"{name}: {result!r}"
    return result


def sections(nodes: list[ParsedNode]) -> list[ParsedNode]:
    """The heading sections among ``nodes`` (a table's own section is not one: docs/tables.md)."""
    return [n for n in nodes if n.kind == "section" and n.table is None]


def all_sections(doc: ParsedDocument) -> list[ParsedNode]:
    return [n for n in doc.nodes() if n.kind == "section" and n.table is None]


def text_of(doc: ParsedDocument) -> str:
    return "\n".join(n.text for n in doc.nodes() if n.kind == "passage")


def depth(nodes: list[ParsedNode]) -> int:
    return max((1 + depth(n.children) for n in sections(nodes)), default=0)


def depths(nodes: list[ParsedNode], level: int = 1) -> list[tuple[int, ParsedNode]]:
    out: list[tuple[int, ParsedNode]] = []
    for n in sections(nodes):
        if n.kind == "section":
            out.append((level, n))
            out.extend(depths(n.children, level + 1))
    return out


def n_tables(text: str) -> int:
    """Markdown tables (chunks) in a text: their header separator lines."""
    return sum(1 for line in text.splitlines() if line.startswith("|---"))


def norm(text: str) -> str:
    return " ".join(text.replace("\x0b", " ").split())


# ---------------------------------------------------------------- every file


@pytest.mark.parametrize("name", FILES)
def test_every_file_parses_or_fails_clearly(
    corpus: dict[str, ParsedDocument | IngestError], name: str
) -> None:
    assert is_candidate(CORPUS / name)
    result = corpus[name]
    if name in EXPECTED_ERRORS:
        kind, message = EXPECTED_ERRORS[name]
        assert type(result) is kind, f"{name}: {result!r}"
        assert message in str(result)
        return
    assert isinstance(result, ParsedDocument), f"{name}: {result!r}"
    assert result.format == Path(name).suffix.lstrip(".")
    assert result.title.strip()
    passages = [n for n in result.nodes() if n.kind == "passage"]
    assert passages and all(p.text.strip() for p in passages)
    if name.startswith("scanned-"):  # image-only: read by OCR, every passage with the boxes of its lines
        assert result.ocr_pages == result.pages == 1
        assert any("read by OCR" in w for w in result.warnings)
        assert all(p.location.page == 1 and p.location.boxes for p in passages)
    # bounded passages: prose within the bound, table chunks at most 1.5x (a header plus one long row)
    assert max(estimate_tokens(p.text) for p in passages) <= 300


# ---------------------------------------------------------------- PDF


@pytest.mark.parametrize("name,levels", [("r-intro.pdf", 3), ("debian-reference-ja.pdf", 4)])
def test_pdf_outline_becomes_sections(
    corpus: dict[str, ParsedDocument | IngestError], name: str, levels: int
) -> None:
    import pymupdf

    with pymupdf.open(str(CORPUS / name)) as pdf:
        toc = pdf.get_toc()
        page_count = pdf.page_count
    doc = doc_of(corpus, name)
    assert doc.pages == page_count
    assert {t[0] for t in toc} == set(range(1, levels + 1))
    assert depth(doc.children) == levels
    got = depths(doc.children)
    assert [norm(n.title) for _d, n in got] == [norm(t[1]) for t in toc]  # same entries, same order
    assert [d for d, _n in got] == [t[0] for t in toc]  # same nesting
    assert [n.location.page for _d, n in got] == [t[2] for t in toc]  # each section starts on its target page


def test_r_intro_title_and_pages(corpus: dict[str, ParsedDocument | IngestError]) -> None:
    doc = doc_of(corpus, "r-intro.pdf")
    assert len(all_sections(doc)) == 145  # SOURCE.md: 145 outline entries
    assert doc.title == "An Introduction to R"  # no metadata title: the cover's largest text
    intro = next(n for n in all_sections(doc) if n.title == "1 Introduction and preliminaries")
    assert (intro.location.page, intro.location.page_end) == (8, 13)  # chapter 2 starts on page 14
    assert "R is an integrated suite of software facilities" in text_of(doc)


def test_debian_reference_japanese(corpus: dict[str, ParsedDocument | IngestError]) -> None:
    doc = doc_of(corpus, "debian-reference-ja.pdf")
    assert len(all_sections(doc)) == 451  # SOURCE.md
    assert doc.title == "Debian リファレンス"  # metadata title
    text = text_of(doc)
    cjk = sum(1 for ch in text if "\u3040" <= ch <= "\u9fff")
    assert cjk > 100_000
    assert "コンピューターシステムを学ぶこと" in text


def test_irs_flat_outline_nested_by_numbering(corpus: dict[str, ParsedDocument | IngestError]) -> None:
    import pymupdf

    with pymupdf.open(str(CORPUS / "irs-irm-2-3-59.pdf")) as pdf:
        toc = pdf.get_toc()
        empty_pages = [p.number + 1 for p in pdf if not p.get_text().strip()]
    assert len(toc) == 134 and {t[0] for t in toc} == {1}  # the outline itself is flat
    doc = doc_of(corpus, "irs-irm-2-3-59.pdf")
    assert doc.pages == 400
    assert len(all_sections(doc)) == 134
    top = {n.title: n for n in sections(doc.children)}
    scope = top["2.3.59.1 Program Scope and Objectives"]
    assert [n.title for n in sections(scope.children)][:2] == [
        "2.3.59.1.1 Background",
        "2.3.59.1.2 Authority",
    ]
    assert "Manual Transmittal" in top and "2.3.59-1 Command Code BMFOL/BMFOR Input Display" in top
    assert not any(re.match(r"2\.3\.59\.\d+\.\d+ ", t) for t in top)  # every x.y.z.w.v entry is nested
    background = sections(scope.children)[0]
    assert "read-only access" in background.children[0].text
    assert empty_pages == [2, 400]
    assert any("pages without text" in w and "2, 400" in w for w in doc.warnings)


def test_ibm_headings_detected_without_outline(corpus: dict[str, ParsedDocument | IngestError]) -> None:
    import pymupdf

    with pymupdf.open(str(CORPUS / "ibm-redp5110-sampled.pdf")) as pdf:
        assert pdf.get_toc() == []
        empty_pages = [p.number + 1 for p in pdf if not p.get_text().strip()]
    doc = doc_of(corpus, "ibm-redp5110-sampled.pdf")
    assert doc.title == "Row and Column Access Control Support in IBM DB2 for i"
    titles = [n.title for n in all_sections(doc)]
    assert "Contents" not in titles  # the printed contents page is read, not stored as a section or text
    for heading in [
        "Preface",
        "Authors",
        "Chapter 1. Securing and protecting IBM DB2 data",
        "1.1 Security fundamentals",
        "2.2 Separation of duties",
        "3.6.6 Activating RCAC",
    ]:
        assert heading in titles
    chapter = next(n for n in all_sections(doc) if n.title == "Chapter 1. Securing and protecting IBM DB2 data")
    assert "1.1 Security fundamentals" in [n.title for n in sections(chapter.children)]
    # the sampled document prints no "Chapter 2/3" page: those chapters come from its printed contents, as siblings
    top = [n.title for n in sections(doc.children)]
    assert [t for t in top if t.startswith("Chapter")] == [
        "Chapter 1. Securing and protecting IBM DB2 data", "Chapter 2 Roles and separation of duties",
        "Chapter 3 Row and Column Access Control"]
    assert not any(t.startswith(("Jim Bainbridge", "Kent Milligan")) for t in titles)  # cover names: text
    # figure text (a syntax diagram's keywords) and the back cover are not sections
    assert not {"FOR ROWS", "ENABLE", "INTERNATIONAL TECHNICAL SUPPORT ORGANIZATION"} & set(titles)
    # the running footer, the symbol font's bullets and the printed contents are not passage text
    assert "Copyright IBM Corp" not in text_of(doc) and "\x02" not in text_of(doc)
    assert "Chapter 2. Roles and separation of duties . ." not in text_of(doc)
    assert empty_pages == [17] and any("17" in w for w in doc.warnings)
    # the "Highlights" box is set in a font whose character map is wrong (PyMuPDF reads "]üìÜüéê •ìê" for
    # "Enhance the"): left out with a warning, the page's English text around it kept
    text = text_of(doc)
    assert "•ìê" not in text and "°ê£ë†£ûÜüéê" not in text
    assert "gain more confidence" in text and "Because no one else is IBM." in text
    assert any("glyphs" in w and "left out" in w for w in doc.warnings)
    assert "| Column name | Data type | Description |" in text  # Table 2-1 as Markdown
    assert "| FUNCTION_ID | VARCHAR(30) | ID of the function. |" in text


def test_gao_report(corpus: dict[str, ParsedDocument | IngestError]) -> None:
    doc = doc_of(corpus, "gao-23-106826-cyber.pdf")
    assert doc.title.startswith("GAO-23-106826, Cybersecurity")
    assert doc.pages == 2
    assert "National Cybersecurity Strategy" in text_of(doc)


# ---------------------------------------------------------------- Word


def _docx_headings(name: str) -> list[tuple[int, str]]:
    """(level, text) of the non-empty ``Heading N`` paragraphs, read with python-docx's own API."""
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document(str(CORPUS / name))
    names = {
        s.style_id: s.name for s in document.styles
    }  # p.style.name per paragraph is slow on 8k paragraphs
    default = document.styles.default(WD_STYLE_TYPE.PARAGRAPH).style_id
    out = []
    for p in document.paragraphs:
        m = re.fullmatch(r"Heading (\d)", names.get(p._p.style or default, ""))
        if m and p.text.strip():
            out.append((int(m.group(1)), norm(p.text)))
    return out


def test_trustee_handbook_headings(corpus: dict[str, ParsedDocument | IngestError]) -> None:
    expected = _docx_headings("us-trustee-handbook.docx")
    assert Counter(level for level, _t in expected) == Counter(
        {1: 14, 2: 90, 3: 190}
    )  # SOURCE: 16/92/192, 6 empty
    doc = doc_of(corpus, "us-trustee-handbook.docx")
    got = depths(doc.children)
    assert [(d, norm(n.title)) for d, n in got] == expected
    assert doc.children[0].kind == "passage"  # cover text and printed contents come before the first heading
    assert "Handbook for" in doc.children[0].text
    assert len(text_of(doc).split()) > 100_000  # SOURCE.md: about 127k words


def test_worldview_title_and_headings(corpus: dict[str, ParsedDocument | IngestError]) -> None:
    doc = doc_of(corpus, "worldview-essay-guide.docx")
    assert doc.title == "Personal Worldview Essay"  # the Title paragraph (core title is "Word Document")
    expected = _docx_headings("worldview-essay-guide.docx")
    assert len(expected) == 8  # SOURCE.md: Title + 9 headings, one of them empty
    assert [(d, norm(n.title)) for d, n in depths(doc.children)] == expected


def test_word_sample(corpus: dict[str, ParsedDocument | IngestError]) -> None:
    doc = doc_of(corpus, "word-sample.docx")
    assert doc.title == "Swimming in the lake"
    assert [(d, n.title) for d, n in depths(doc.children)] == [(1, "Let’s swim!"), (2, "Let’s eat")]
    text = text_of(doc)
    assert "- Paddle about" in text  # bullet list item
    assert n_tables(text) == 1  # its one table


def test_word_tables(corpus: dict[str, ParsedDocument | IngestError]) -> None:
    import docx

    tables = len(docx.Document(str(CORPUS / "word-tables.docx")).tables)
    assert tables == 7
    doc = doc_of(corpus, "word-tables.docx")
    text = text_of(doc)
    assert n_tables(text) == tables
    assert (
        "| Cell 1.0 | Merged Cell 1.1 2.1 | Cell 1.2 |\n| Cell 2.0 | Merged Cell 1.1 2.1 | Cell 2.2 |" in text
    )


def test_russian_contract(corpus: dict[str, ParsedDocument | IngestError]) -> None:
    import docx

    core_title = docx.Document(str(CORPUS / "ru-state-contract.docx")).core_properties.title
    doc = doc_of(corpus, "ru-state-contract.docx")
    assert doc.title == core_title == "ЧАСТЬ II"
    text = text_of(doc)
    assert sum(1 for ch in text if "а" <= ch.lower() <= "я") > 50_000
    assert "Государственный заказчик" in text
    assert n_tables(text) >= 10  # many of its 21 tables as Markdown


# ---------------------------------------------------------------- PowerPoint


@pytest.mark.parametrize(
    "name,titled,with_notes",
    [
        ("apache-performance-tuning.pptx", 45, 8),
        ("how-we-refactor.pptx", 21, 12),
        ("de-ecodesign-elektronik.pptx", 24, 12),
        ("aptia-award-modernisation.pptx", 7, 1),
        ("powerpoint-sample.pptx", 2, 2),
    ],
)
def test_decks(
    corpus: dict[str, ParsedDocument | IngestError], name: str, titled: int, with_notes: int
) -> None:
    import pptx

    prs = pptx.Presentation(str(CORPUS / name))
    placeholder_titles = {}
    for i, slide in enumerate(prs.slides, 1):
        shape = slide.shapes.title
        if shape is not None and shape.has_text_frame and shape.text_frame.text.strip():
            placeholder_titles[i] = norm(shape.text_frame.text)
    assert len(placeholder_titles) == titled  # SOURCE.md's counts
    tables = sum(
        1
        for s in prs.slides
        for sh in s.shapes
        if getattr(sh, "has_table", False)
        and sh.has_table
        and any(c.text.strip() for r in sh.table.rows for c in r.cells)
    )  # not the empty grids
    doc = doc_of(corpus, name)
    slides = sections(doc.children)
    assert doc.pages == len(slides) == len(prs.slides)
    assert [s.location.slide for s in slides] == list(range(1, len(prs.slides) + 1))
    for i, title in placeholder_titles.items():
        assert slides[i - 1].title == title[:150]
    noted = {p.location.slide for s in slides for p in s.children if p.text.startswith("Notes: ")}
    assert len(noted) == with_notes
    assert n_tables(text_of(doc)) >= tables


def test_deck_details(corpus: dict[str, ParsedDocument | IngestError]) -> None:
    refactor = doc_of(corpus, "how-we-refactor.pptx")
    assert refactor.title == "How We Refactor, and How We Know It"
    assert not any("\x0b" in s.title for s in all_sections(refactor))  # vertical-tab line breaks cleaned
    german = doc_of(corpus, "de-ecodesign-elektronik.pptx")
    assert "Lebenszyklus Elektronikprodukt" in [s.title for s in all_sections(german)]
    assert "ä" in text_of(german) or "ü" in text_of(german)
    assert german.title == "de-ecodesign-elektronik"  # slide 1 untitled, core title "Folie 1": the file name
    aptia = doc_of(corpus, "aptia-award-modernisation.pptx")
    assert sections(aptia.children)[1].title == "Award modernisation overview"


# ---------------------------------------------------------------- Excel


@pytest.mark.parametrize(
    "name,n_sheets",
    [
        ("half-year-segments-2023.xlsx", 5),
        ("kyc-file-structure-v3-1.xlsx", 30),
        ("irish-budget-examples.xlsx", 12),
        ("georgia-child-support.xlsx", 14),
        ("stanley-cups.xlsx", 2),
    ],
)
def test_workbooks_one_section_per_sheet(
    corpus: dict[str, ParsedDocument | IngestError], name: str, n_sheets: int
) -> None:
    import openpyxl

    wb = openpyxl.load_workbook(str(CORPUS / name), read_only=True)
    names = wb.sheetnames
    wb.close()
    assert len(names) == n_sheets  # SOURCE.md
    doc = doc_of(corpus, name)
    assert doc.pages == n_sheets
    assert [s.title for s in sections(doc.children)] == [norm(n) for n in names]
    for sheet, section in zip(names, sections(doc.children), strict=True):
        assert section.location.sheet == sheet  # exact name (double spaces kept) for jumping there
        for p in section.children:
            assert p.location.sheet == sheet and re.fullmatch(
                r"[A-Z]+\d+(:[A-Z]+\d+)?", p.location.cells or ""
            )


def test_workbook_contents(corpus: dict[str, ParsedDocument | IngestError]) -> None:
    cups = doc_of(corpus, "stanley-cups.xlsx")
    sheet = sections(cups.children)[0]
    assert sheet.children[0].table is not None and sheet.children[0].title == "Stanley Cups"  # titled by its caption
    first = sheet.children[0].children[0]
    assert first.text.startswith("Stanley Cups\n| Team | Location | Stanley Cups |")  # title row, then header
    assert "| Maple Leafs | TOR | 13 |" in first.text and first.location.cells == "A1:C5"
    segments = text_of(doc_of(corpus, "half-year-segments-2023.xlsx"))
    assert "| Zone NA | 12,553 | 2,713 | 2,632 |" in segments  # as the sheet shows them (#,##0)
    lines = segments.splitlines()
    headers = [lines[i - 1] for i, ln in enumerate(lines) if ln.startswith("|---")]
    assert headers and not any(h.startswith("| Zone") for h in headers)  # a data row is never taken as header
    assert any("Sales (a)" in h for h in headers)  # the header two rows above, across the blank row
    kyc = doc_of(corpus, "kyc-file-structure-v3-1.xlsx")
    assert "| S.No | Field | Field Type | Field Length |" in text_of(kyc)
    georgia = doc_of(corpus, "georgia-child-support.xlsx")
    spanish = next(s for s in sections(georgia.children) if s.title == "Espanol Empiece Aqui")
    assert "Manutención Infantil" in "\n".join(p.text for p in spanish.walk() if p.kind == "passage")
