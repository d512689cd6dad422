"""Tables found as tables (issue 49): each format's tables parsed as tables (typed columns, total rows, merged
headers, the rows' passages), stored in SQLite (migration 0010_tables, from empty and from the previous version),
replaced with their document and removed with it."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

import openpyxl

from shelfwise.core.store import fts
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.core.store.migrations import MIGRATIONS, migrate
from shelfwise.core.store.tables import read_table, tables_of_documents
from shelfwise.ingest import docx, text, xlsx
from shelfwise.ingest.model import ParsedDocument
from shelfwise.resources import path as resource_path

META = FileMeta(size=100, mtime=1.0, sha256="a" * 64)
SAMPLE = resource_path("sample", "benefits-and-pay.xlsx")


def store_doc(store: Store, path: Path, parsed: ParsedDocument) -> int:
    return store.write_document(store.collection("default").id, path, META, parsed)


def test_the_sample_workbook_stores_each_table_typed(tmp_path: Path) -> None:
    parsed = xlsx.parse(SAMPLE)
    with Store(tmp_path / "lib.db") as store:
        doc = store_doc(store, SAMPLE, parsed)
        tables = tables_of_documents(store.conn, [doc])
        assert [(t.sheet, t.title.split(",")[0], t.n_rows) for t in tables] == [
            ("Salary bands", "Band", 7), ("Salary bands", "Pay item", 4), ("Benefits", "Benefit", 8),
            ("Holidays 2026", "Date", 13)]
        bands = read_table(store.conn, tables[0])
        assert bands.table.kinds == ["text", "text", "text", "number", "number", "number"]
        l5 = bands.text(0).index("L5")
        assert bands.number(5)[l5] == 102000 and bands.table.address(l5, 5, bands.sheet_row(l5)) == \
            "Salary bands!F6"
        (row_node,) = store.conn.execute("SELECT node_id FROM table_rows WHERE table_id = ? AND row = ?",
                                         (tables[0].id, l5)).fetchone()
        node = store.node(row_node)
        assert node is not None and "| L5 | Lead |" in node.text  # the row's passage, with its header
        parent = store.node(node.parent_id or 0)
        assert parent is not None and parent.id == tables[0].node_id and parent.kind == "section"
        holidays = read_table(store.conn, tables[3])
        assert holidays.table.kinds[0] == "date" and holidays.number(0)[0] == dt.date(2026, 1, 1).toordinal()
        # an ingest of a new version replaces the tables; removing the document removes them
        store_doc(store, SAMPLE, parsed)
        assert len(tables_of_documents(store.conn, [doc])) == 4
        assert store.conn.execute("SELECT count(*) FROM doc_tables").fetchone()[0] == 4
        store.remove_document(doc)
        assert [store.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("doc_tables", "table_rows", "table_cells")] == [0, 0, 0]


def test_a_library_of_the_previous_version_gets_the_tables(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    names = [n for n, _ in MIGRATIONS]
    conn = sqlite3.connect(str(db), isolation_level=None)
    fts.register(conn)
    migrate(conn, db, MIGRATIONS[: names.index("0010_tables")])  # as the previous version left it
    conn.execute("INSERT INTO collections(id, name, created_at, root_node_id) VALUES (1, 'default', 'x', 1)")
    conn.execute("INSERT INTO nodes(id, collection_id, kind, title) VALUES (1, 1, 'collection', 'default')")
    for i, name in enumerate(["a.xlsx", "b.txt"], 1):
        conn.execute("INSERT INTO documents(id, collection_id, path, status, format, ingested_at) "
                     "VALUES (?, 1, ?, 'ok', ?, 'x')", (i, f"/{name}", name.split(".")[1]))
    conn.close()
    with Store(db) as store:
        assert store.migrations_applied[0] == "0010_tables" and store.backup_path is not None
        # the next ingest reads the workbook again (its tables), not the text file
        assert [(d.path, d.retry) for d in store.documents()] == [("/a.xlsx", True), ("/b.txt", False)]
        doc = store_doc(store, SAMPLE, xlsx.parse(SAMPLE))
        assert len(tables_of_documents(store.conn, [doc])) == 4


def test_sheet_tables_marks_totals_merged_headers_and_money(tmp_path: Path) -> None:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Budget"
    ws.append(["Budget 2026"])
    ws.append(["Team", "Cost", None])  # "Cost" is a merged cell over two columns
    ws.append([None, "Planned", "Spent"])
    ws.append(["North", 1000, 800])
    ws.append(["South", 2000, 2100])
    ws.append(["Total", 3000, 2900])
    for row in ws.iter_rows(min_row=4, max_row=6, min_col=2, max_col=3):
        for cell in row:
            cell.number_format = '"€"#,##0'
    ws.append([])
    ws.append(["Office", "Share"])
    ws.append(["Lisbon", 0.25])
    ws["B9"].number_format = "0%"
    path = tmp_path / "budget.xlsx"
    wb.save(str(path))
    tables = xlsx.parse(path).tables()
    assert len(tables) == 2
    budget, share = tables
    assert budget.header == ["Team", "Cost Planned", "Cost Spent"]
    assert budget.kinds == ["text", "money", "money"] and budget.row_kinds == ["data", "data", "total"]
    assert budget.sheet_rows == [4, 5, 6]
    assert share.kinds == ["text", "percent"] and share.numbers[0][1] == 25.0


def test_markdown_and_docx_tables_are_tables(tmp_path: Path) -> None:
    md = tmp_path / "rates.md"
    md.write_text("# Travel\n\nDaily rates:\n\n| City | Allowance | Hotel cap |\n|---|---:|---:|\n"
                  "| Berlin | EUR 55 | EUR 160 |\n| Paris | EUR 60 | EUR 180 |\n\nAfter the table.\n")
    doc = text.parse(md)
    (table,) = doc.tables()
    assert table.header == ["City", "Allowance", "Hotel cap"] and table.kinds == ["text", "money", "money"]
    assert table.numbers[1] == [None, 60.0, 180.0]
    section = next(n for n in doc.nodes() if n.table is table)
    assert section.title == "City, Allowance, Hotel cap" and section.location.line == 5
    assert "After the table." in [n.text for n in doc.nodes() if n.kind == "passage"]
    import docx as python_docx

    d = python_docx.Document()
    d.add_heading("Allowances", 1)
    t = d.add_table(rows=3, cols=2)
    for r, (a, b) in enumerate([("Country", "Rate"), ("Spain", "12.5%"), ("Italy", "10%")]):
        t.cell(r, 0).text, t.cell(r, 1).text = a, b
    path = tmp_path / "rates.docx"
    d.save(str(path))
    (dt_,) = docx.parse(path).tables()
    assert dt_.kinds == ["text", "percent"] and dt_.numbers[0][1] == 12.5


ROWS = [["City", "Daily allowance", "Hotel cap"], ["Berlin", "EUR 55", "EUR 160"], ["Paris", "EUR 60", "EUR 180"],
        ["Rome", "EUR 50", "EUR 150"]]


def _pdf(path: Path) -> None:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 60), "Travel allowances", fontsize=14)
    x0, y0, cw, rh = 72, 100, 150, 24
    for i in range(len(ROWS) + 1):
        page.draw_line((x0, y0 + i * rh), (x0 + 3 * cw, y0 + i * rh))
    for j in range(4):
        page.draw_line((x0 + j * cw, y0), (x0 + j * cw, y0 + len(ROWS) * rh))
    for i, r in enumerate(ROWS):
        for j, c in enumerate(r):
            page.insert_text((x0 + j * cw + 4, y0 + i * rh + 16), c, fontsize=10)
    doc.save(str(path))


def _docx(path: Path) -> None:
    import docx as python_docx

    d = python_docx.Document()
    d.add_heading("Travel allowances", 1)
    t = d.add_table(rows=len(ROWS), cols=3)
    for r, row in enumerate(ROWS):
        for c, v in enumerate(row):
            t.cell(r, c).text = v
    d.save(str(path))


def _pptx(path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Travel allowances"
    table = slide.shapes.add_table(len(ROWS), 3, Inches(1), Inches(2), Inches(6), Inches(2)).table
    for r, row in enumerate(ROWS):
        for c, v in enumerate(row):
            table.cell(r, c).text = v
    prs.save(str(path))


def _md(path: Path) -> None:
    lines = ["# Travel allowances", "", "| " + " | ".join(ROWS[0]) + " |", "|---|---|---|"]
    path.write_text("\n".join(lines + ["| " + " | ".join(r) + " |" for r in ROWS[1:]]) + "\n")


def test_a_table_in_each_format_answers_a_lookup(tmp_path: Path) -> None:
    from shelfwise.core.answers.tables import answer_from_tables, load_tables
    from shelfwise.ingest.registry import parse as parse_file

    with Store(tmp_path / "lib.db") as store:
        for name, make in (("t.pdf", _pdf), ("t.docx", _docx), ("t.pptx", _pptx), ("t.md", _md)):
            path = tmp_path / name
            make(path)
            doc = store_doc(store, path, parse_file(path))
            tables = tables_of_documents(store.conn, [doc])
            assert len(tables) == 1 and tables[0].kinds == ["text", "money", "money"], name
            short = answer_from_tables(load_tables(store.conn, tables), "What is the hotel cap in Paris?")
            assert short is not None and short.text == "EUR 180" and short.operation == "lookup", name
            assert short.cells[0].address == "table 1, row 2, Hotel cap" and short.kind == "money"
            cheapest = answer_from_tables(load_tables(store.conn, tables), "Which city has the lowest hotel cap?")
            assert cheapest is not None and cheapest.text == "Rome" and cheapest.operation == "argmin", name
