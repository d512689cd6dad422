"""kill -9 aimed at the stages of a real ``shelfwise ingest``: parsing, tree writing, embedding and calibration.

Random delays from the start of a run mostly land after it ends (session 3: 5 of 20 landed inside). So each kill
point is drawn as (stage, fraction): the run is started with ``-v``, whose stderr carries the code's own stage
markers (``stage: parse <file>``, ``stage: write <file>``, ``stage: written <file>``, ``stage: embedding``,
``stage: topics``, ``stage: calibration``, ``stage: done``; see ``core/ingestion/runner.py`` and
``core/indexing/finish.py``). A clean reference run gives each stage's durations; the fraction picks a moment
inside the stage's total time (so a file's share of the parse or write stage is its share of that time); the
killer waits for that occurrence's marker, sleeps the remaining offset and sends SIGKILL. Where the kill landed is
read afterwards from the last marker the dead process wrote (every line it wrote is in the pipe), not assumed.

After each kill: ``integrity_check`` (SQLite and FTS5) and the per-document checks of
:func:`tests.reliability.scenarios.check_library`; then a plain ``shelfwise ingest`` of the same folder must finish
the work: every document of the reference run present once with the same tree (a digest of its nodes' kinds,
titles and texts), every node with a vector, and the index no longer marked pending.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from shelfwise.core.store.db import Store
from tests.reliability.scenarios import SHELFWISE, LibraryCheck, check_library, run_cli

STAGES = ("parse", "write", "embedding", "calibration")
_MARK = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*stage: (\w+)")
# the stage a process is in after writing each marker
_IN_STAGE = {"parse": "parse", "write": "write", "written": "between files", "embedding": "embedding",
             "topics": "topics", "calibration": "calibration", "done": "after indexing"}


class StagedRun:
    """``shelfwise -v ingest FOLDER`` with its stage markers read as they come (seconds since start, marker)."""

    def __init__(self, db: Path, folder: Path, *, force: bool = False, index: bool = True) -> None:
        args = [SHELFWISE, "-v", "--db", str(db), "ingest", str(folder)] + (["--force"] if force else []) \
            + ([] if index else ["--no-index"])
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     errors="replace")
        self.marks: list[tuple[float, str]] = []
        self.written_at: list[float] = []  # the wall-clock time each marker was logged (its own timestamp)
        self.ended_at: float | None = None
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            m = _MARK.search(line)
            if m:
                stamp = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
                with self._cond:
                    self.marks.append((time.monotonic() - self.t0, m.group(2)))
                    self.written_at.append(stamp)
                    self._cond.notify_all()
        with self._cond:
            self.ended_at = time.monotonic() - self.t0
            self._cond.notify_all()

    def _count(self, marker: str) -> int:
        return sum(1 for _, m in self.marks if m == marker)

    def wait_for(self, marker: str, occurrence: int, timeout: float = 600) -> float | None:
        """Block until the ``occurrence``-th (0-based) ``marker`` has been written; returns how long ago the
        process logged it (the pipe's and this reader's delay), or None if the run ended first."""
        with self._cond:
            self._cond.wait_for(lambda: self._count(marker) > occurrence or self.ended_at is not None, timeout)
            hits = [i for i, (_, m) in enumerate(self.marks) if m == marker]
            if len(hits) <= occurrence:
                return None
            return max(0.0, time.time() - self.written_at[hits[occurrence]])

    def kill(self) -> bool:
        """SIGKILL now; False if the process had already exited."""
        if self.proc.poll() is not None:
            return False
        os.kill(self.proc.pid, signal.SIGKILL)
        return True

    def finish(self, timeout: float = 900) -> int:
        code = self.proc.wait(timeout=timeout)
        self._thread.join(timeout=30)
        return code

    def landed(self) -> str:
        """The stage the (finished or killed) process was in at its end, from the last marker it wrote."""
        return _IN_STAGE.get(self.marks[-1][1], self.marks[-1][1]) if self.marks else "start-up"

    def durations(self) -> dict[str, list[float]]:
        """Each aimed stage's occurrences in order, with how long each lasted (until the next marker or the end)."""
        out: dict[str, list[float]] = {s: [] for s in STAGES}
        end = self.ended_at if self.ended_at is not None else time.monotonic() - self.t0
        for i, (t, marker) in enumerate(self.marks):
            stage = _IN_STAGE.get(marker)
            if stage in out:
                nxt = self.marks[i + 1][0] if i + 1 < len(self.marks) else end
                out[stage].append(max(0.0, nxt - t))
        return out


def tree_digests(db: Path) -> dict[str, str]:
    """Per stored document path: a digest of its nodes (kind, title, text) in order; "" for a failed document."""
    out: dict[str, str] = {}
    with Store(db) as store:
        conn = store.conn
        for did, path, status in conn.execute("SELECT id, path, status FROM documents"):
            h = hashlib.sha256()
            if status == "ok":
                for kind, title, text in conn.execute(
                        "SELECT kind, title, text FROM nodes WHERE document_id = ? ORDER BY id", (did,)):
                    h.update(f"{kind}\x00{title}\x00{text}\x01".encode("utf-8", "surrogatepass"))
            out[str(path)] = h.hexdigest() if status == "ok" else ""
    return out


def index_left(db: Path) -> tuple[int, int]:
    """(nodes without a vector, collections whose index is still marked pending)."""
    with Store(db) as store:
        colls = store.collections()
        return (sum(store.nodes_without_vectors(c.id) for c in colls),
                sum(1 for c in colls if store.index_pending(c.id)))


@dataclass
class KillPoint:
    aimed: str  # the stage aimed at
    mode: str  # "fresh" (empty library) or "force" (re-ingest of a complete one with --force)
    occurrence: int  # which file (parse, write) or 0
    offset: float  # seconds after that occurrence's marker
    landed: str  # the stage the process was in when it died (from its last marker)
    check: LibraryCheck  # right after the kill
    resumed_exit: int = -1  # exit code of the plain ingest that follows
    lost: list[str] = field(default_factory=list)  # reference documents missing after the resume
    changed: list[str] = field(default_factory=list)  # documents whose tree differs from the reference's
    extra: list[str] = field(default_factory=list)  # documents the reference does not have
    unindexed: tuple[int, int] = (0, 0)  # index_left() after the resume

    @property
    def resumed_ok(self) -> bool:
        return (self.resumed_exit == 0 and not self.lost and not self.changed and not self.extra
                and self.unindexed == (0, 0))


def _reset(db: Path) -> None:
    for suffix in ("", "-wal", "-shm", ".ingest.lock"):
        Path(str(db) + suffix).unlink(missing_ok=True)


def _aim(durations: list[float], fraction: float) -> tuple[int, float]:
    """A moment ``fraction`` of the way through a stage's total time, as (occurrence, offset into it)."""
    total = sum(durations)
    at = fraction * total
    for i, d in enumerate(durations):
        if at < d or i == len(durations) - 1:
            return i, min(at, d)
        at -= d
    return 0, 0.0


def kill_campaign(work: Path, folder: Path, kills: int, seed: int = 11, log: bool = True,
                  stages: tuple[str, ...] = STAGES, index: bool = True,
                  span: tuple[float, float] = (0.02, 0.85)) -> dict[str, object]:
    """``kills`` kill -9 points, cycling through ``stages``, over fresh ingests and forced re-ingests of
    ``folder``; each followed by the checks of the module doc. Returns the counts the benchmark reports.
    ``span``: the part of each aimed stage (as fractions of the reference run's time in it) the kill moments are
    drawn from; a stage may run faster than in the reference run, so an early span lands inside it more surely.
    ``index=False`` runs every ingest with ``--no-index`` (parse and write only: cheap runs for aiming at the tree
    writes of large documents; the resume is then not checked for vectors)."""
    rng = random.Random(seed)
    reference = work / "reference.db"
    ref_runs: dict[str, dict[str, list[float]]] = {}
    for mode in ("fresh", "force"):
        run = StagedRun(reference, folder, force=(mode == "force"), index=index)
        code = run.finish()
        assert code == 0, f"the reference {mode} run failed with exit code {code}"
        ref_runs[mode] = run.durations()
    want = tree_digests(reference)
    db = work / "killed.db"
    points: list[KillPoint] = []
    for i in range(kills):
        stage = stages[i % len(stages)]
        mode = "fresh" if (i // len(stages)) % 2 == 0 or not db.exists() else "force"
        if mode == "fresh":
            _reset(db)
        # not the stage's very end: its length varies from run to run (load, what the library holds)
        occurrence, offset = _aim(ref_runs[mode][stage], rng.uniform(*span))
        run = StagedRun(db, folder, force=(mode == "force"), index=index)
        late = run.wait_for(stage, occurrence)  # the aimed stages are named by their start markers
        if late is not None:
            time.sleep(max(0.0, offset - late))
        run.kill()
        run.finish()
        point = KillPoint(stage, mode, occurrence, offset, run.landed(), check_library(db))
        resumed, _ = run_cli("ingest", str(folder), *([] if index else ["--no-index"]), db=db)
        got = tree_digests(db)
        point.resumed_exit = resumed.returncode
        point.lost = sorted(set(want) - set(got))
        point.extra = sorted(set(got) - set(want))
        point.changed = sorted(p for p in set(want) & set(got) if want[p] != got[p])
        point.unindexed = index_left(db) if index else (0, 0)
        points.append(point)
        if log:
            print(f"kill {i + 1}/{kills}: aimed at {stage} ({mode}, #{occurrence} +{offset:.2f} s), landed in "
                  f"{point.landed}; integrity {point.check.integrity}, {point.check.documents} documents, "
                  f"half-written {len(point.check.half_written)}, duplicated {len(point.check.duplicated)}; "
                  f"resume exit {point.resumed_exit}, lost {len(point.lost)}, changed {len(point.changed)}, "
                  f"unindexed {point.unindexed}", file=sys.stderr, flush=True)
    landed: dict[str, int] = {}
    for p in points:
        landed[p.landed] = landed.get(p.landed, 0) + 1
    end = check_library(db)
    return {
        "kills": len(points), "landed": landed,
        "landed_in_aimed_stage": sum(1 for p in points if p.landed == p.aimed),
        "landed_in_run": sum(1 for p in points if p.landed not in ("after indexing", "start-up")),
        "reference_stage_seconds": {m: {s: round(sum(d), 2) for s, d in r.items()} for m, r in ref_runs.items()},
        "integrity_ok": sum(1 for p in points if p.check.integrity == "ok"),
        "half_written": sum(len(p.check.half_written) for p in points) + len(end.half_written),
        "duplicated": sum(len(p.check.duplicated) for p in points) + len(end.duplicated),
        "documents_lost": sum(len(p.lost) + len(p.changed) for p in points),
        "resumed_ok": sum(1 for p in points if p.resumed_ok),
        "failures": [f"kill {n + 1} ({p.aimed} -> {p.landed}): {p.check.half_written} {p.check.duplicated} "
                     f"lost {p.lost} changed {p.changed} extra {p.extra} exit {p.resumed_exit} "
                     f"unindexed {p.unindexed}"
                     for n, p in enumerate(points) if not (p.check.sound and p.resumed_ok)],
        "final_integrity": end.integrity,
    }



def command_kills(work: Path, folder: Path, kills: int, seed: int = 17,
                  commands: tuple[str, ...] = ("index", "calibrate"), log: bool = True) -> dict[str, object]:
    """kill -9 at random moments of ``shelfwise index`` (after an ``ingest --no-index``) and ``shelfwise calibrate``
    (on an indexed library), then a plain ``shelfwise ingest`` of the folder: every document of a clean run present
    once with the same tree, every node with a vector, the index not pending, and SQLite's checks clean."""
    rng = random.Random(seed)
    reference = work / "cmd-reference.db"
    r, _ = run_cli("ingest", str(folder), db=reference)
    assert r.returncode == 0, r.stderr[-2000:]
    want = tree_digests(reference)
    parsed = work / "cmd-parsed.db"  # parsed, not indexed: what `shelfwise index` starts from
    r, _ = run_cli("ingest", str(folder), "--no-index", db=parsed)
    assert r.returncode == 0, r.stderr[-2000:]
    lengths: dict[str, float] = {}
    for command, source in (("index", parsed), ("calibrate", reference)):
        db = work / f"cmd-time-{command}.db"
        _copy_db(source, db)
        t0 = time.monotonic()
        r, _ = run_cli(command, db=db)
        lengths[command] = time.monotonic() - t0
        assert r.returncode == 0, r.stderr[-2000:]
    rows: list[dict[str, object]] = []
    for i in range(kills):
        command = commands[i % len(commands)]
        db = work / "cmd-killed.db"
        _reset(db)
        _copy_db(parsed if command == "index" else reference, db)
        delay = rng.uniform(0.05, 0.9) * lengths[command]
        proc = subprocess.Popen([SHELFWISE, "--db", str(db), command], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(delay)
        killed = proc.poll() is None
        if killed:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=600)
        check = check_library(db)
        resumed, _ = run_cli("ingest", str(folder), db=db)
        got = tree_digests(db)
        row = {"command": command, "delay": round(delay, 2), "killed_while_running": killed,
               "integrity": check.integrity, "sound": check.sound, "resumed_exit": resumed.returncode,
               "lost": sorted(set(want) - set(got)), "extra": sorted(set(got) - set(want)),
               "changed": sorted(p for p in set(want) & set(got) if want[p] != got[p]),
               "unindexed": index_left(db)}
        rows.append(row)
        if log:
            print(f"command kill {i + 1}/{kills}: {command} at {delay:.2f} s (running: {killed}); integrity "
                  f"{check.integrity}; resume exit {resumed.returncode}, lost {len(row['lost'])}, "  # type: ignore[arg-type]
                  f"changed {len(row['changed'])}, unindexed {row['unindexed']}", file=sys.stderr,  # type: ignore[arg-type]
                  flush=True)
    bad = [r for r in rows if not (r["sound"] and r["resumed_exit"] == 0 and not r["lost"] and not r["changed"]
                                   and not r["extra"] and r["unindexed"] == (0, 0))]
    return {
        "kills": len(rows), "killed_while_running": sum(1 for r in rows if r["killed_while_running"]),
        "by_command": {c: sum(1 for r in rows if r["command"] == c) for c in commands},
        "command_seconds": {k: round(v, 1) for k, v in lengths.items()},
        "integrity_ok": sum(1 for r in rows if r["integrity"] == "ok"),
        "documents_lost": sum(len(r["lost"]) + len(r["changed"]) for r in rows),  # type: ignore[arg-type]
        "resumed_ok": len(rows) - len(bad), "failures": bad,
    }


def _copy_db(src: Path, dst: Path) -> None:
    """A consistent copy of a library (SQLite's backup API: the -wal is folded in)."""
    import sqlite3

    _reset(dst)
    a, b = sqlite3.connect(str(src)), sqlite3.connect(str(dst))
    try:
        a.backup(b)
    finally:
        a.close()
        b.close()
