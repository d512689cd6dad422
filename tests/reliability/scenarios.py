"""The reliability scenarios, shared by ``tests/reliability`` (small samples) and ``benchmarks/product/reliability.py``
(the full runs): kill -9 at random points of ingest/index/calibrate, fuzzed files through every parser, two
writers at once, and a search during an ingest. Everything runs the real CLI, real parse workers and real SQLite."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from shelfwise.core.ingestion.runner import ingest
from shelfwise.core.ingestion.worker import ParseWorker
from shelfwise.core.store.db import Store
from shelfwise.ingest.model import Limits
from tests.reliability import hostile
from tests.reliability.procwatch import PeakRss

SHELFWISE = str(Path(sys.executable).parent / "shelfwise")


def run_cli(*args: str, db: Path, timeout: float = 900) -> tuple[subprocess.CompletedProcess[str], PeakRss]:
    """The real CLI in a subprocess, with the peak RSS of its process tree (parse workers included)."""
    proc = subprocess.Popen([SHELFWISE, "--db", str(db), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    with PeakRss(proc.pid) as peak:
        out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), peak


# --------------------------------------------------------------------------- library checks
@dataclass
class LibraryCheck:
    integrity: str
    documents: int
    ok_documents: int
    half_written: list[str] = field(default_factory=list)  # ok rows whose tree does not match their counts
    duplicated: list[str] = field(default_factory=list)

    @property
    def sound(self) -> bool:
        return self.integrity == "ok" and not self.half_written and not self.duplicated


def check_library(db: Path) -> LibraryCheck:
    """Integrity (SQLite + FTS5), and per document: one document node, passages and sections as the row says."""
    with Store(db) as store:
        integrity = store.integrity_check()
        conn = store.conn
        docs = conn.execute("SELECT id, path, status, passages, sections FROM documents").fetchall()
        counts = {
            (d, k): n for d, k, n in conn.execute(
                "SELECT document_id, kind, count(*) FROM nodes WHERE document_id IS NOT NULL "
                "GROUP BY document_id, kind")
        }
        dup = conn.execute("SELECT path FROM documents GROUP BY collection_id, path HAVING count(*) > 1").fetchall()
    check = LibraryCheck(integrity, len(docs), sum(1 for d in docs if d[2] == "ok"),
                         duplicated=[p for (p,) in dup])
    for did, path, status, passages, sections in docs:
        if status != "ok":
            if any(counts.get((did, k), 0) for k in ("document", "section", "passage")):
                check.half_written.append(f"{path}: failed but has nodes")
            continue
        if (counts.get((did, "document"), 0), counts.get((did, "passage"), 0), counts.get((did, "section"), 0)) \
                != (1, passages, sections):
            check.half_written.append(f"{path}: row says {passages} passages, {sections} sections; tree has "
                                      f"{counts.get((did, 'passage'), 0)}, {counts.get((did, 'section'), 0)}")
    return check


# --------------------------------------------------------------------------- fuzzing
@dataclass
class FuzzResult:
    files: int = 0
    by_format: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)
    uncaught: list[str] = field(default_factory=list)  # exceptions that escaped, or "unexpected error" fallbacks
    crashed: list[str] = field(default_factory=list)  # native crashes contained by the worker
    over_caps: list[str] = field(default_factory=list)  # killed by the memory or time cap
    peak_rss_bytes: int = 0
    seconds: float = 0.0


# The mutated files are parsed without OCR: a fuzzed PDF page that lost its text goes to OCR, ~5-25 s a page on
# the shared machine even at 100 dpi and one page a file (most of a run's time). The OCR decision still runs (the
# page-limit warning); OCR itself has its own tests (tests/test_ocr.py). Figures: docs/reliability.md.
FUZZ_LIMITS = Limits(max_ocr_pages=0)


def fuzz(work: Path, count: int, seed: int = 1, limits: Limits | None = None,
         pdf_pages: int | None = hostile.FUZZ_PDF_PAGES) -> FuzzResult:
    """``count`` mutated corpus files, spread over the five formats, ingested through the real parse worker in one
    ingest (``limits``: :data:`FUZZ_LIMITS` unless given; PDF seeds cut to ``pdf_pages`` pages, None: whole)."""
    limits = limits or FUZZ_LIMITS
    folder = work / "fuzz"
    folder.mkdir(parents=True, exist_ok=True)
    files = list(hostile.fuzzed_files(folder, count, seed, pdf_pages))
    out = FuzzResult(files=len(files))
    for f in files:
        out.by_format[f.suffix] = out.by_format.get(f.suffix, 0) + 1
    t0 = time.monotonic()
    with Store(work / "fuzz.db") as store, ParseWorker() as worker:
        try:
            report = ingest(store, [folder], limits=limits, parse=worker.parse_fn())
        except Exception as exc:  # the whole batch died: the worst case
            out.uncaught.append(f"batch: {exc.__class__.__name__}: {exc}")
            return out
        out.peak_rss_bytes = worker.peak_rss_bytes
    out.seconds = time.monotonic() - t0
    for r in report.results:
        out.statuses[r.status] = out.statuses.get(r.status, 0) + 1
        if "unexpected error" in r.message:
            out.uncaught.append(f"{Path(r.path).name}: {r.message}")
        if "crashed" in r.message:
            out.crashed.append(f"{Path(r.path).name}: {r.message}")
        if ("more than" in r.message and "memory" in r.message) or "took longer than" in r.message:
            out.over_caps.append(f"{Path(r.path).name}: {r.message}")
    return out


# --------------------------------------------------------------------------- concurrency
def two_writers(work: Path, folder_a: Path, folder_b: Path) -> dict[str, object]:
    """Two ``shelfwise ingest`` processes into one library at once (different folders and one shared file)."""
    db = work / "two.db"
    procs = [subprocess.Popen([SHELFWISE, "--db", str(db), "ingest", str(f), "--no-index"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for f in (folder_a, folder_b)]
    outs = [p.communicate(timeout=900) for p in procs]
    check = check_library(db)
    expected = sum(1 for f in (folder_a, folder_b) for p in f.iterdir() if p.is_file())
    return {"exit_codes": [p.returncode for p in procs], "documents": check.documents, "expected": expected,
            "sound": check.sound, "integrity": check.integrity, "stderr": [e[-300:] for _, e in outs]}


def search_during_ingest(work: Path, folder: Path, query: str = "trustee") -> dict[str, object]:
    """Searches while an ingest writes: each must answer promptly from what is stored."""
    db = work / "busy.db"
    Store(db).close()
    proc = subprocess.Popen([SHELFWISE, "--db", str(db), "ingest", str(folder), "--no-index"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times: list[float] = []
    codes: list[int] = []
    try:
        while proc.poll() is None and len(times) < 5:
            t0 = time.monotonic()
            r = subprocess.run([SHELFWISE, "--db", str(db), "search", query], capture_output=True, text=True,
                               timeout=120)
            times.append(time.monotonic() - t0)
            codes.append(r.returncode)
    finally:
        proc.wait(timeout=900)
    return {"searches": len(times), "exit_codes": codes, "max_seconds": round(max(times, default=0.0), 2),
            "ingest_exit": proc.returncode}


def sqlite_integrity(db: Path) -> str:
    conn = sqlite3.connect(str(db))
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


# --------------------------------------------------------------------------- generated variants
@dataclass
class VariantResult:
    seed: int = 0
    files: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    uncaught: list[str] = field(default_factory=list)  # exceptions that escaped, or "unexpected error" fallbacks
    unreported: list[str] = field(default_factory=list)  # variants without a status of their own
    wrong: list[str] = field(default_factory=list)  # refused ones stored ok, ok ones not stored or not findable
    seconds: float = 0.0


def fuzz_variants(work: Path, count: int, seed: int, per_batch: int = 40) -> VariantResult:
    """``count`` generated variants (names, encodings, special files; :mod:`tests.reliability.variants`) in
    batches of ``per_batch``, each batch one folder ingested through the real parse worker; every variant must
    get a status, no special file may be opened or stored, every "ok" variant must be stored and found by a word
    of it."""
    from tests.reliability import variants as gen

    out = VariantResult(seed=seed)
    t0 = time.monotonic()
    n = 0
    with Store(work / "variants.db") as store, ParseWorker() as worker:
        while out.files < count:
            n += 1
            k = max(1, per_batch // 3)
            b = gen.batch(work / f"variants-{n}", work / f"outside-{n}", seed * 1000 + n, n_names=k,
                          n_encodings=k, n_specials=per_batch - 2 * k)
            try:
                try:
                    report = ingest(store, [b.folder], collection=f"v{n}", parse=worker.parse_fn())
                except Exception as exc:
                    out.uncaught.append(f"batch {n}: {exc.__class__.__name__}: {exc}")
                    continue
            finally:
                b.close()
            by_path = {r.path: r for r in report.results}
            coll = store.find_collection(f"v{n}")
            for v in b.variants:
                out.files += 1
                out.by_kind[v.kind.split(":")[0]] = out.by_kind.get(v.kind.split(":")[0], 0) + 1
                r = by_path.get(str(v.path))
                name = ascii(v.path.name)
                if r is None:
                    if v.kind == "special:loop":  # its partner link is named too
                        continue
                    out.unreported.append(f"{v.kind} {name}")
                    continue
                if "unexpected error" in r.message:
                    out.uncaught.append(f"{v.kind} {name}: {r.message}")
                if v.expect == "refused" and r.status == "ok":
                    out.wrong.append(f"{v.kind} {name}: stored ok")
                if v.expect == "ok":
                    if r.status != "ok":
                        out.wrong.append(f"{v.kind} {name}: {r.status} {r.message}")
                    elif v.words and coll is not None and not store.search_hits(
                            v.words[0], limit=50, collection_id=coll.id):
                        out.wrong.append(f"{v.kind} {name}: {v.words[0]!r} not found")
    out.seconds = time.monotonic() - t0
    return out
