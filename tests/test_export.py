"""``shelfwise export``: a library's documents, sections and passages as JSON (stdout or a file) or CSV (a folder),
through ``Shelf.export``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from shelfwise.app.cli.main import main


def stdout_of(result) -> str:  # type: ignore[no-untyped-def]
    return getattr(result, "stdout", result.output)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cats.md").write_text("# Cats\n\nCats sleep sixteen hours a day.\n\n## Food\n\nCats eat fish.\n")
    (docs / "dogs.txt").write_text("Dogs\n\nDogs bark at the postman.\n")
    db = tmp_path / "lib.db"
    runner = CliRunner()
    for coll, name in (("pets", "cats.md"), ("other", "dogs.txt")):
        result = runner.invoke(main, ["--db", str(db), "ingest", str(docs / name), "-c", coll, "--no-index"])
        assert result.exit_code == 0, result.output
    return db


def test_export_json_to_stdout_and_to_a_file(library: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["--db", str(library), "export"])
    assert result.exit_code == 0, result.output
    data = json.loads(stdout_of(result))
    assert sorted(data) == ["documents", "passages", "sections"]
    assert sorted(d["collection"] for d in data["documents"]) == ["other", "pets"]
    texts = [p["text"] for p in data["passages"]]
    assert "Cats eat fish." in texts and any("Dogs bark at the postman." in t for t in texts)
    food = next(p for p in data["passages"] if p["text"] == "Cats eat fish.")
    assert food["heading"].endswith("Cats / Food") and json.loads(food["location"])["line"] >= 1
    assert {"Cats", "Food"} <= {s["title"] for s in data["sections"]}

    out = tmp_path / "out" / "pets.json"
    result = runner.invoke(main, ["--db", str(library), "export", "--collection", "pets", "--out", str(out)])
    assert result.exit_code == 0, result.output
    pets = json.loads(out.read_text(encoding="utf-8"))
    assert [d["collection"] for d in pets["documents"]] == ["pets"]
    assert all("Dogs" not in p["text"] for p in pets["passages"])
    missing = runner.invoke(main, ["--db", str(library), "export", "--collection", "nope"])
    assert missing.exit_code == 2 and "No collection named 'nope'" in missing.output


def test_export_csv_writes_three_files(library: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    no_dir = runner.invoke(main, ["--db", str(library), "export", "--format", "csv"])
    assert no_dir.exit_code == 2 and "--out DIR" in no_dir.output
    folder = tmp_path / "csv"
    result = runner.invoke(main, ["--db", str(library), "export", "--format", "csv", "--out", str(folder)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in folder.iterdir()) == ["documents.csv", "passages.csv", "sections.csv"]
    with (folder / "passages.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert "Cats eat fish." in [r["text"] for r in rows]
    with (folder / "documents.csv").open(encoding="utf-8", newline="") as fh:
        docs = list(csv.DictReader(fh))
    assert sorted(Path(d["path"]).name for d in docs) == ["cats.md", "dogs.txt"]
