"""Where "Open file" opens a cited place (app/gui/open_target.py): the command is built, never run."""

from __future__ import annotations

from pathlib import Path

from shelfwise.app.gui.open_target import open_target
from shelfwise.core.navigation.scope import in_filter
from shelfwise.ingest.model import Location


def only(*names: str):
    return lambda name: f"/usr/bin/{name}" if name in names else None


def test_a_pdf_page_opens_in_a_viewer_that_takes_a_page(tmp_path: Path) -> None:
    pdf = str(tmp_path / "handbook.pdf")
    at5 = Location(page=5, page_end=7)
    assert open_target(pdf, at5, which=only("evince"), platform="linux").argv == (
        "/usr/bin/evince", "--page-index=5", pdf)
    okular = open_target(pdf, at5, which=only("okular", "evince"), platform="linux")
    assert okular.argv == ("/usr/bin/okular", "--page", "5", pdf) and okular.exact and okular.place == "page 5"
    assert open_target(pdf, at5, which=only("zathura"), platform="linux").argv == (
        "/usr/bin/zathura", "--page", "5", pdf)
    assert open_target(pdf, at5, which=only("mupdf"), platform="linux").argv == ("/usr/bin/mupdf", pdf, "5")
    assert open_target(pdf, at5, which=only("qpdfview"), platform="linux").argv == ("/usr/bin/qpdfview", f"{pdf}#5")
    assert open_target(pdf, at5, which=only("SumatraPDF"), platform="win32").argv == (
        "/usr/bin/SumatraPDF", "-page", "5", pdf)


def test_without_such_a_viewer_the_file_opens_at_its_start_and_says_where(tmp_path: Path) -> None:
    pdf = str(tmp_path / "handbook.pdf")
    t = open_target(pdf, Location(page=5), which=only(), platform="linux")
    assert t.argv == () and t.url == Path(pdf).as_uri() and not t.exact and "page 5" in t.note
    mac = open_target(pdf, Location(page=5), which=only("okular"), platform="darwin")
    assert mac.argv == () and "page 5" in mac.note


def test_slides_sheets_and_lines_are_named_for_the_preview(tmp_path: Path) -> None:
    deck = open_target(str(tmp_path / "deck.pptx"), Location(slide=3), which=only("okular"), platform="linux")
    assert deck.argv == () and deck.place == "slide 3" and "slide 3" in deck.note and not deck.exact
    book = open_target(str(tmp_path / "pay.xlsx"), Location(sheet="Benefits", cells="A1:E5"), which=only())
    assert book.place == "Benefits!A1:E5" and "Benefits!A1:E5" in book.note
    notes = open_target(str(tmp_path / "notes.md"), Location(line=12), which=only())
    assert notes.place == "line 12" and "line 12" in notes.note
    whole = open_target(str(tmp_path / "a.docx"), Location(), which=only())
    assert whole.exact and whole.place == "" and whole.url.endswith("/a.docx")


def test_the_filter_for_ask_about_this_document_or_folder() -> None:
    known = ["/lib/hr/handbook.pdf", "/lib/hr/pay.xlsx", "/lib/it/deck.pptx", "/old/hr/handbook.pdf",
             "/lib/My Files/plan.md"]
    assert in_filter("/lib/it/deck.pptx", known) == "in:deck.pptx"
    assert in_filter("/lib/hr/handbook.pdf", known) == "in:/lib/hr/handbook.pdf"  # two files share the name
    assert in_filter("/lib/it", known) == "in:it"
    assert in_filter("/lib/hr", known) == "in:/lib/hr"  # /old/hr is another folder of that name
    assert in_filter("/lib/My Files", known) == 'in:"My Files"'
