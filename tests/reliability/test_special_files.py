"""Issue 27, cases 1-4 and the file names: what is not a regular file is recognised before anything opens it, each
with its own status line, as an argument or in a folder; a tree too deep for the system is ingested as far as it
can be named; no output line can be forged by a file name. Through the real CLI in a subprocess (a hang fails the
test by its timeout instead of hanging the suite)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reliability import variants

SHELFWISE = str(Path(sys.executable).parent / "shelfwise")


def run(*args: str, db: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SHELFWISE_HOME": str(db.parent / "home"), "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([SHELFWISE, "--db", str(db), *args], capture_output=True, text=True, env=env,
                          timeout=timeout, errors="replace")


def lines_about(out: str, name: str) -> list[str]:
    return [ln for ln in out.splitlines() if name in ln]


def test_a_symlink_loop_given_as_an_argument_gets_a_message_not_a_traceback(tmp_path: Path) -> None:
    # Case 1: RuntimeError: Symlink loop (Path.resolve in plan)
    (tmp_path / "a.txt").symlink_to("b.txt")
    (tmp_path / "b.txt").symlink_to("a.txt")
    r = run("ingest", str(tmp_path / "a.txt"), "--no-index", db=tmp_path / "lib.db")
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 1
    assert any("symbolic link loop" in ln for ln in lines_about(r.stdout, "a.txt")), r.stdout


@pytest.mark.parametrize("what", ["dev-zero", "fifo", "socket"])
def test_a_special_file_given_as_an_argument_is_refused_without_being_opened(tmp_path: Path, what: str) -> None:
    # Cases 2 and 3: the main process read /dev/zero at ~1 GB/s (no cap outside the worker); a FIFO hung forever
    p = tmp_path / "notes.txt"
    keep = None
    if what == "dev-zero":
        p.symlink_to("/dev/zero")
    elif what == "fifo":
        os.mkfifo(p)
    else:
        keep = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        keep.bind(str(p))
    try:
        r = run("ingest", str(p), "--no-index", db=tmp_path / "lib.db", timeout=30)
    finally:
        if keep is not None:
            keep.close()
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 1
    line = lines_about(r.stdout, "notes.txt")
    expected = {"dev-zero": "a symbolic link to a character device", "fifo": "a named pipe (FIFO)",
                "socket": "a socket"}[what]
    assert any(expected in ln and "not a regular file" in ln for ln in line), r.stdout


def test_special_entries_in_a_folder_each_get_a_status_line_and_the_rest_is_ingested(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "real.txt").write_text("The annual leave policy gives twenty days.\n")
    os.mkfifo(folder / "pipe.txt")
    (folder / "zero.txt").symlink_to("/dev/zero")
    (folder / "loop1.txt").symlink_to("loop2.txt")
    (folder / "loop2.txt").symlink_to("loop1.txt")
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("Not in the folder.\n")
    (folder / "out.txt").symlink_to(outside)
    # a link that stays inside is read, but it is real.txt reached a second time: stored once (issue 38)
    (folder / "inside-link.txt").symlink_to(folder / "real.txt")
    (folder / "sub").symlink_to(tmp_path)
    r = run("ingest", str(folder), "--no-index", db=tmp_path / "lib.db", timeout=60)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 0, r.stdout + r.stderr  # the folder's own files all went in
    assert "1 added" in r.stdout and "6 not files" in r.stdout and "1 reached twice (stored once)" in r.stdout, \
        r.stdout
    assert any("the same file as" in ln for ln in lines_about(r.stdout, f"{os.sep}inside-link.txt:")), r.stdout
    want = {"pipe.txt": "named pipe", "zero.txt": "character device", "loop1.txt": "loop", "loop2.txt": "loop",
            "out.txt": "leaves the folder", "sub": "link to a folder"}
    for name, why in want.items():
        assert any(why in ln for ln in lines_about(r.stdout, f"{os.sep}{name}:")), (name, r.stdout)
    listed = run("status", "--json", db=tmp_path / "lib.db")
    assert "elsewhere.txt" not in listed.stdout


def test_a_tree_2100_levels_deep_is_ingested_as_far_as_the_system_can_name_it(tmp_path: Path) -> None:
    # Case 4: RecursionError in os.walk, and nothing ingested, not even the top file
    top = tmp_path / "deep"
    made = variants.deep_tree(top, 2100, every=500)
    try:
        r = run("ingest", str(top), "--no-index", db=tmp_path / "lib.db", timeout=120)
        assert "Traceback" not in r.stderr and "RecursionError" not in r.stderr, r.stderr[-2000:]
        added = int(r.stdout.split(" added")[0].rsplit(" ", 1)[-1])
        assert added == len(made) >= 4, r.stdout[:2000]  # top.txt and the files at levels 500, 1000, 1500
        # the folder the system cannot name is one status line, not one per level
        assert r.returncode == 1 and r.stdout.count("cannot read folder") == 1, r.stdout[-1000:]
        again = run("ingest", str(top), "--no-index", db=tmp_path / "lib.db", timeout=120)
        assert f"{len(made)} unchanged" in again.stdout and "0 removed" in again.stdout, again.stdout[:500]
    finally:
        variants.remove_deep(top)


def test_no_output_line_of_ingest_or_status_can_be_forged_by_a_file_name(tmp_path: Path) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    forged = "x\nok        txt        1     0      1  etc-passwd\tsecret\u202etxt.exe"
    names = [forged + ".txt", "report\u202efdp.txt", "tab\tname.txt", "bell\x07\x1b[2J.txt",
             "bytes-\udcff.txt", "nl\u2028sep.txt"]
    for n in names:
        with open(os.fsencode(folder) + b"/" + os.fsencode(n), "w") as f:
            f.write("Visitors park in bay four.\n")
    os.mkfifo(os.fsencode(folder) + b"/fifo\nforged.txt")
    (folder / "broken.txt").write_bytes(b"\x00\x01\x02" * 400)  # a failure line, with the name in it
    db = tmp_path / "lib.db"
    outputs = [run("ingest", str(folder), "--no-index", db=db), run("ingest", str(folder), "--no-index", db=db),
               run("status", db=db)]
    for r in outputs:
        text = r.stdout + r.stderr
        assert "Traceback" not in text
        for ch in ("\t", "\u202e", "\x07", "\x1b", "\u2028", "\r"):
            assert ch not in text, (repr(ch), text)
        assert not any(ln.startswith("ok        txt        1") for ln in text.splitlines()), text  # forged
        assert "etc-passwd\\tsecret\\u202etxt.exe" in text, text  # shown escaped, on its own line
    assert "fifo\\nforged.txt" in outputs[0].stdout
    assert "bytes-\\xff.txt" in outputs[2].stdout


def test_json_output_escapes_what_could_reorder_a_line_and_keeps_the_exact_names(tmp_path: Path) -> None:
    import json

    folder = tmp_path / "files"
    folder.mkdir()
    names = ["report\u202efdp.txt", "nl\u2028sep.txt", "zero\u200bwidth.txt", "plain-été.txt"]
    for n in names:
        (folder / n).write_text("Visitors park in bay four.\n", encoding="utf-8")
    db = tmp_path / "lib.db"
    outputs = {"ingest": run("ingest", str(folder), "--no-index", "--json", db=db),
               "status": run("status", "--json", db=db), "search": run("search", "visitors park", "--json", db=db)}
    for what, r in outputs.items():
        assert r.returncode == 0, (what, r.stderr)
        for ch in ("\u202e", "\u2028", "\u200b"):
            assert ch not in r.stdout, (what, repr(ch))
        assert "plain-été.txt" in r.stdout, what  # readable UTF-8 stays as it is
        assert "\\u202e" in r.stdout, what
        text = json.dumps(json.loads(r.stdout), ensure_ascii=False)
        for n in names:
            assert n in text, (what, n)  # the parsed value is the exact name
