"""Small real workbooks for the table-question tests (issue 49): written with openpyxl, typed cells."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

MATCHES = [  # Date, Opponent, City, Result, Goals, Crowd, Notes
    (dt.date(2024, 3, 1), "Lyon", "Belgrade, Serbia", "W", 3, 12000, ""),
    (dt.date(2024, 3, 8), "Porto", "Lisbon, Portugal", "L", 1, 30000, "Rain delay"),
    (dt.date(2024, 3, 15), "Ajax", "Belgrade, Serbia", "W", 2, 15000, ""),
    (dt.date(2024, 3, 22), "Celtic", "Glasgow, Scotland", "D", 0, 45000, ""),
    (dt.date(2024, 3, 29), "Benfica", "Belgrade, Serbia", "L", 1, 14000, "Closed roof"),
    (dt.date(2024, 4, 5), "Napoli", "Naples, Italy", "W", 4, 41000, ""),
    (dt.date(2024, 4, 12), "Sevilla", "Seville, Spain", "D", 2, 38000, "Cup tie"),
    (dt.date(2024, 4, 19), "Rapid", "Vienna, Austria", "W", 1, 22000, ""),
]


def write_sheets(docs: Path, sheets: Mapping[str, tuple[Sequence[object], Sequence[Sequence[object]]]]) -> None:
    """One workbook in ``docs`` per entry of ``sheets`` (file name -> its header row and data rows, typed cells);
    a date cell is shown as yyyy-mm-dd."""
    import openpyxl

    docs.mkdir(parents=True, exist_ok=True)
    for name, (head, rows) in sheets.items():
        wb = openpyxl.Workbook()
        ws = wb.active
        assert ws is not None
        ws.append(list(head))
        for row in rows:
            ws.append(list(row))
        for col in ws.iter_cols(min_row=2):
            for c in col:
                if isinstance(c.value, dt.date):
                    c.number_format = "yyyy-mm-dd"
        wb.save(str(docs / name))


def write_matches(path: Path) -> Path:
    """A season's matches: one sheet, a header row and eight rows (a city column whose cells name more than the
    city, notes left empty in five rows)."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "Matches"
    ws.append(["Date", "Opponent", "City", "Result", "Goals", "Attendance", "Notes"])
    for row in MATCHES:
        ws.append([v if v != "" else None for v in row])
    for cell in ws["A"][1:]:
        cell.number_format = "yyyy-mm-dd"
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(str(path))
    return path


OFFICES = [  # Office, Staff, Opened
    ("Vienna (HQ)", 120, 1998),
    ("Vienna Airport", 15, 2011),
    ("Graz", 40, 2004),
    ("Linz", 25, 2015),
    ("Salzburg", 18, 2019),
]


def write_offices(path: Path) -> Path:
    """A company's offices: one sheet "Offices", a header row and five rows (two offices in Vienna, neither
    named "Vienna" whole)."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "Offices"
    ws.append(["Office", "Staff", "Opened"])
    for row in OFFICES:
        ws.append(list(row))
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(str(path))
    return path


CANALS = [  # Canal, Length (miles), Locks, Width (ft), Opened, Rank (by length)
    ("Grand Western Canal", 35, 14, 7, 1814, 3),
    ("Union Canal", 12, 3, 14, 1822, 4),
    ("Trent and Mersey Canal", 93, 76, 14, 1777, 1),
    ("Kennet and Avon Canal", 57, 14, 14, 1810, 2),
]


def write_canals(path: Path) -> Path:
    """Four canals: one sheet "Canals", units in two column names (miles, ft), 14 in both Locks and Width."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "Canals"
    ws.append(["Canal", "Length (miles)", "Locks", "Width (ft)", "Opened", "Rank"])
    for row in CANALS:
        ws.append(list(row))
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(str(path))
    return path


def ask_json(db: Path, question: str) -> dict:  # type: ignore[type-arg]
    """``shelfwise ask --json --no-generate`` over the library ``db`` (click's CliRunner, in process), parsed."""
    from click.testing import CliRunner

    from shelfwise.app.cli.main import main

    result = CliRunner().invoke(main, ["--db", str(db), "ask", question, "--json", "--no-generate"])
    assert result.exit_code == 0, result.output
    # a note printed before the JSON (documents the encoder does not read: a German workbook in a MiniLM library)
    return json.loads(result.output[result.output.index("{"):])  # type: ignore[no-any-return]


def workbook_library(root: Path, write: Callable[[Path], Path], name: str) -> Path:
    """A library (MiniLM) holding the one workbook ``write`` makes as ``root/docs/name``, ingested through the CLI;
    its database file."""
    from click.testing import CliRunner

    from shelfwise.app.cli.main import main

    write(root / "docs" / name)
    db = root / "lib.db"
    result = CliRunner().invoke(main, ["--db", str(db), "--embedder", "minilm", "ingest", str(root / "docs")])
    assert result.exit_code == 0, result.output
    return db
