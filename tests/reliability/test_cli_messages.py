"""Issue 50's tracebacks, each now a one-line message while the command goes on, through the real ``shelfwise``
(subprocesses, the real models, real SQLite): a document's file replaced by a symlink loop under ``search --in`` and
``ask --in``, a model folder that loops; a conversation id past SQLite's integer range; settings values the file
accepted but commands could not use (``"nan"``, ``1e308``, a budget or branching of 0, ``n_threads: 100000``, which
ended the process with a segmentation fault); ``SHELFWISE_SETTINGS`` naming a FIFO (the command hung) or
``/dev/zero`` (read until memory ran out)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli_sample import TRACEBACK, SampleLibrary, run_shelfwise

QUESTION = "How many days of annual leave do employees get?"
HUGE_ID = "99999999999999999999"  # past 2**63 - 1


def settings_run(lib: SampleLibrary, tmp_path: Path, settings: object, *args: str,
                 timeout: float = 300) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings), encoding="utf-8")
    return run_shelfwise(lib.db, list(args), env={"SHELFWISE_SETTINGS": str(path)}, timeout=timeout)


def clean(r: subprocess.CompletedProcess[str]) -> None:
    assert r.returncode >= 0, f"killed by signal {-r.returncode}: {r.stdout[-2000:]}"
    assert TRACEBACK not in r.stdout, r.stdout[-3000:]


@pytest.fixture(scope="module")
def looped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A library of two small documents, one of whose files was then replaced by a symbolic link to itself."""
    root = tmp_path_factory.mktemp("loop")
    docs = root / "docs"
    docs.mkdir()
    (docs / "cats.md").write_text("# Cats\n\nCats sleep sixteen hours a day and eat fish.\n", encoding="utf-8")
    (docs / "dogs.md").write_text("# Dogs\n\nDogs bark at the postman and eat meat.\n", encoding="utf-8")
    db = root / "lib.db"
    r = run_shelfwise(db, ["ingest", str(docs)])
    assert r.returncode == 0, r.stdout[-2000:]
    (docs / "dogs.md").unlink()
    (docs / "dogs.md").symlink_to("dogs.md")  # a loop: resolving it raised RuntimeError ("Symlink loop from")
    return db, docs


@pytest.mark.parametrize("command", [["search", "eat"], ["ask", "What do cats eat?", "--no-generate"]])
def test_a_symlink_loop_in_a_library_folder_under_in(looped: tuple[Path, Path], command: list[str]) -> None:
    db, docs = looped
    r = run_shelfwise(db, [*command, "--in", str(docs)])
    clean(r)
    assert r.returncode == 0 and "cats.md" in r.stdout, r.stdout[-2000:]


def test_a_model_folder_that_is_a_symlink_loop(tmp_path: Path) -> None:
    loop = tmp_path / "models"
    loop.symlink_to("models")
    r = run_shelfwise(tmp_path / "lib.db", ["models"], env={"SHELFWISE_MODEL_DIRS": str(loop)})
    clean(r)
    assert r.returncode == 0, r.stdout[-2000:]


@pytest.mark.parametrize("command", [
    ["ask", "--conversation", HUGE_ID, QUESTION, "--no-generate"],
    ["chat", "--conversation", HUGE_ID],
    ["chat", "--delete", HUGE_ID],
    ["chat", "--export", HUGE_ID],
])
def test_a_conversation_id_past_sqlites_integers_is_no_such_conversation(sample_library: SampleLibrary,
                                                                         command: list[str]) -> None:
    r = run_shelfwise(sample_library.db, command)
    clean(r)
    assert r.returncode == 1 and f"there is no conversation {HUGE_ID}" in r.stdout, r.stdout[-2000:]


@pytest.mark.parametrize(("settings", "said"), [
    ({"budgets": {"first_keep_ratio": "nan"}}, "budgets.first_keep_ratio 'nan' is not a number"),
    ({"budgets": {"first_keep_ratio": 1e308}}, "budgets.first_keep_ratio 1e+308 is outside 0.01..1; 1 is used"),
    ({"budgets": {"keep": 1e308}}, "budgets.keep 1e+308 is outside 1..1000; 1000 is used"),
    ({"budgets": {"branching": 0}}, "budgets.branching 0 is outside 2..1000; 2 is used"),
    ({"budgets": {"passages": 0}}, "budgets.passages 0 is outside 1..1000; 1 is used"),
    ({"n_threads": 100000}, "n_threads 100000 is outside 1..256; 256 is used"),
])
def test_settings_values_a_command_cannot_use_are_named_and_clamped(sample_library: SampleLibrary, tmp_path: Path,
                                                                    settings: object, said: str) -> None:
    r = settings_run(sample_library, tmp_path, settings, "ask", QUESTION, "--no-generate")
    clean(r)
    assert r.returncode == 0 and said in r.stdout, r.stdout[-2000:]
    assert "27 days" in r.stdout, r.stdout[-2000:]  # answered, not a silent "Not found"


def test_branching_zero_does_not_break_an_ingest(tmp_path: Path) -> None:
    # the topic clusters read it: KMeans(n_clusters=0) raised InvalidParameterError
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(3):
        (docs / f"note{i}.md").write_text(f"# Note {i}\n\nThe note number {i} is about topic {i}.\n", encoding="utf-8")
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"budgets": {"branching": 0}}), encoding="utf-8")
    r = run_shelfwise(tmp_path / "lib.db", ["ingest", str(docs)], env={"SHELFWISE_SETTINGS": str(settings)})
    clean(r)
    assert r.returncode == 0 and "budgets.branching 0" in r.stdout, r.stdout[-2000:]


def test_threads_past_what_llama_can_start_are_refused_on_the_command_line(sample_library: SampleLibrary) -> None:
    r = run_shelfwise(sample_library.db, ["ask", QUESTION, "--no-generate", "--threads", "100000"])
    clean(r)
    assert r.returncode == 2 and "--threads" in r.stdout and "1<=x<=256" in r.stdout, r.stdout[-2000:]


@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "huge"])
def test_shelfwise_settings_is_read_only_from_a_regular_file_of_settings_size(sample_library: SampleLibrary,
                                                                               tmp_path: Path, kind: str) -> None:
    target = {"device": Path("/dev/zero"), "folder": tmp_path}.get(kind, tmp_path / "settings.json")
    if kind == "fifo":
        os.mkfifo(target)  # nothing writes: opening it to read waited for ever
    if kind == "huge":
        with target.open("w", encoding="utf-8") as fh:  # valid JSON, 2 MiB of white space
            fh.write("{" + " " * (2 << 20) + "}")
    r = run_shelfwise(sample_library.db, ["search", "annual leave"], env={"SHELFWISE_SETTINGS": str(target)},
                      timeout=120)
    clean(r)
    assert r.returncode == 0 and "using the default settings" in r.stdout, r.stdout[-2000:]
    first = r.stdout.splitlines()[0]
    assert first.startswith("Note: the settings file") and {"fifo": "a FIFO", "device": "a device",
                                                             "folder": "a folder", "huge": "bytes"}[kind] in first


def test_a_settings_file_that_is_fine_still_reads(sample_library: SampleLibrary, tmp_path: Path) -> None:
    r = settings_run(sample_library, tmp_path, {"version": 1, "budgets": {"passages": 3}}, "search", "leave")
    clean(r)
    assert r.returncode == 0 and "Note:" not in r.stdout, r.stdout[-2000:]


@pytest.mark.parametrize("command", [["status"], ["search", "leave"], ["ingest", "."]])
def test_db_naming_a_proc_file_says_it_is_not_a_library(tmp_path: Path, command: list[str]) -> None:
    # /proc/self/status reads as a 0-byte file: SQLite took it for a new library and the message said its folder was
    # read-only
    r = run_shelfwise(Path("/proc/self/status"), command, cwd=tmp_path)
    clean(r)
    assert r.returncode == 1 and "file is not a database" in r.stdout and "not a Shelfwise library" in r.stdout, \
        r.stdout
    assert "read-only" not in r.stdout


def test_a_file_name_that_is_not_utf8_is_exported_as_the_cli_shows_it(tmp_path: Path) -> None:
    # the export wrote the store's internal form: "caf\u0000e9.md" in JSON, a NUL byte in the CSV
    docs = tmp_path / "docs"
    docs.mkdir()
    with open(os.fsencode(docs) + b"/caf\xe9.md", "w", encoding="utf-8") as fh:
        fh.write("# Cafe\n\nThe cafe opens at nine.\n")
    db = tmp_path / "lib.db"
    assert run_shelfwise(db, ["ingest", str(docs)]).returncode == 0
    r = run_shelfwise(db, ["export"])
    clean(r)
    [doc] = json.loads(r.stdout)["documents"]
    assert doc["path"] == f"{docs}/caf\\xe9.md", doc["path"]
    out = tmp_path / "csv"
    r = run_shelfwise(db, ["export", "--format", "csv", "--out", str(out)])
    clean(r)
    data = (out / "documents.csv").read_bytes()
    assert b"\x00" not in data and b"caf\\xe9.md" in data, data[:500]


@pytest.mark.parametrize("command", [["status"], ["ingest", "--no-index", "."], ["ask", QUESTION, "--no-generate"]])
def test_a_library_path_that_is_a_symlink_loop_is_said_so(tmp_path: Path, command: list[str]) -> None:
    # was "No library at ... yet" (status), or "could not read ...: unable to open database file" and advice to
    # rebuild the library (ingest)
    db = tmp_path / "lib.db"
    db.symlink_to("lib.db")
    r = run_shelfwise(db, command, cwd=tmp_path)
    clean(r)
    assert r.returncode == 2 and "is a symbolic link loop" in r.stdout, r.stdout[-2000:]
    assert "rebuild" not in r.stdout and "No library" not in r.stdout
