"""Reliability benchmark: every hostile case of issue 17, 1,000 fuzzed files, 20 kill -9 points aimed at the stages
of an ingest (parse, tree write, embedding, calibration), two writers and a search during an ingest; issue 50's
``doctor --rebuild`` interrupted at 20 random moments (SIGINT and SIGKILL), rebuilds started at once, a rebuild on a
full file system (a tmpfs in a private mount namespace), exports of hostile text and files swapped for a symlink
during an ingest (``tests/reliability/issue50.py``); through the real CLI, real parse workers and real SQLite.

    python benchmarks/product/reliability.py --json            # the full run (tens of minutes on a shared 2-core
    machine)
    python benchmarks/product/reliability.py --fuzz 100 --kills 4 --json   # a quicker one
    python benchmarks/product/reliability.py --only fuzzing --json > a.json     # parts in parallel, then
    python benchmarks/product/reliability.py --merge a.json b.json --json       # one summary
    python benchmarks/product/reliability.py --only "issue 50" --json           # issue 50's parts only

Prints cases tried / clean, ``data_lost`` (documents lost, duplicated or half-written across the kills),
``fuzzed_files``, ``uncaught_exceptions`` and the peak RSS of each case: the whole process tree (CLI process and
parse worker) sampled from /proc for CLI cases, the parse worker's own peak for in-process ones. This process stays
small (no models are loaded here) so the figures are the cases' own.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from shelfwise.core.ingestion.worker import ParseWorker
from shelfwise.ingest.model import IngestError, Limits
from tests.reliability import hostile, issue50, kills, scenarios, variants

MiB = 1 << 20
SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample"


def mb(n: int) -> float:
    return round(n / MiB, 1)


def parse_case(path: Path, expect: str) -> dict[str, Any]:
    """One file through a fresh parse worker; clean when the outcome is the expected one (an error class name or
    ``ok``) and the worker stayed within its caps."""
    limits = Limits()
    with ParseWorker() as worker:
        t0 = time.monotonic()
        try:
            doc = worker(path, limits)
            outcome, detail = "ok", f"{doc.count('passage')} passages; warnings: {doc.warnings}"
        except IngestError as exc:
            outcome, detail = exc.__class__.__name__, str(exc)
        seconds = time.monotonic() - t0
        peak = worker.peak_rss_bytes
    clean = outcome == expect and peak <= limits.max_worker_rss_bytes
    return {"clean": clean, "outcome": outcome, "detail": detail[:300], "seconds": round(seconds, 1),
            "peak_rss_mb": mb(peak), "file_mb": mb(path.stat().st_size)}


def cli_case(db: Path, *args: str, ok_codes: tuple[int, ...] = (0,), must: str = "") -> dict[str, Any]:
    r, peak = scenarios.run_cli(*args, db=db)
    text = r.stdout + r.stderr
    clean = r.returncode in ok_codes and "Traceback" not in r.stderr and (must in text)
    return {"clean": clean, "exit": r.returncode, "detail": (r.stderr.strip() or r.stdout.strip())[-300:],
            "peak_rss_mb": mb(peak.tree_bytes)}


def library(work: Path, name: str, folder: Path = SAMPLE, index: bool = False) -> tuple[Path, Path]:
    base = work / name
    files = base / "files"
    shutil.copytree(folder, files)
    db = base / "lib.db"
    args = ["ingest", str(files)] + ([] if index else ["--no-index"])
    r, _ = scenarios.run_cli(*args, db=db)
    assert r.returncode in (0, 1), r.stderr
    return db, files


def cases(work: Path, fuzz_n: int, n_kills: int, variant_n: int = 1000, n_command_kills: int = 10
          ) -> dict[str, Callable[[], dict[str, Any]]]:
    gen = work / "generated"
    gen.mkdir()

    def damaged() -> dict[str, Any]:
        db, _ = library(work, "damaged")
        hostile.damage_table(db, "nodes")
        steps = {
            "status": cli_case(db, "status", ok_codes=(3,), must="is damaged"),
            "search": cli_case(db, "search", "leave", ok_codes=(1,), must="could not read"),
            "tree": cli_case(db, "tree", ok_codes=(1,), must="could not read"),
            "ingest": cli_case(db, "ingest", str(SAMPLE), ok_codes=(1,), must="cannot add files"),
            "doctor": cli_case(db, "doctor", ok_codes=(3,), must="integrity_check"),
            "rebuild": cli_case(db, "doctor", "--rebuild", "--yes", "--no-index", must="Rebuilt"),
            "after": cli_case(db, "doctor", must="healthy"),
        }
        return {"clean": all(s["clean"] for s in steps.values()),
                "detail": {k: (v["exit"], v["clean"]) for k, v in steps.items()},
                "peak_rss_mb": max(s["peak_rss_mb"] for s in steps.values())}

    def read_only() -> dict[str, Any]:
        db, _ = library(work, "readonly")
        from tests.reliability.test_library import cli as ro_cli

        db.chmod(0o444)
        db.parent.chmod(0o555)
        try:
            r1 = ro_cli("status", db=db, home=work / "home", read_only_dir=db.parent)
            r2 = ro_cli("search", "leave", db=db, home=work / "home", read_only_dir=db.parent)
        finally:
            db.parent.chmod(0o755)
            db.chmod(0o644)
        return {"clean": r1.returncode == 0 and r2.returncode == 0 and "read-only" in r1.stderr,
                "detail": f"status exit {r1.returncode}, search exit {r2.returncode}", "peak_rss_mb": None}

    def zip_bomb() -> dict[str, Any]:
        # the issue's file: a .docx whose XML expands ~122x to 900 MB (under the old 1 GiB / 200x limits)
        p = hostile.expanding_docx(gen / "bomb-900mb.docx", 900 * MiB, ratio=122)
        return parse_case(p, "TooLarge")

    def lying_zip() -> dict[str, Any]:
        # a member declaring 1,000 bytes that holds ~160 MB: ~1.3 MB on disk
        p = hostile.lying_docx(gen / "liar.docx", 160 * MiB)
        return parse_case(p, "CorruptFile")

    def big_xml_within_limits() -> dict[str, Any]:
        # the largest XML the limits let through (just under 40 MiB per member, 35x): parsed within the caps
        p = hostile.expanding_docx(gen / "big-ok.docx", 39 * MiB, ratio=35)
        return parse_case(p, "ok")

    def big_ordinary_xml() -> dict[str, Any]:
        # issue 38: a 50 MB document.xml at about 32x, normal for XML: too large to read, and not called a zip bomb
        p = hostile.expanding_docx(gen / "big-report.docx", 50 * MiB, ratio=18)
        out = parse_case(p, "TooLarge")
        out["clean"] = out["clean"] and "zip bomb" not in out["detail"]
        return out

    def long_question() -> dict[str, Any]:
        db, _ = library(work, "question", index=True)
        return cli_case(db, "ask", hostile.long_question(100_000), must="only its first")

    def non_utf8_name() -> dict[str, Any]:
        folder = work / "names"
        folder.mkdir()
        hostile.non_utf8_name(folder)
        bad = hostile.random_text_bytes(Path(str(folder) + "/noise\udcff.txt"))
        db = work / "names.db"
        first = cli_case(db, "ingest", str(folder), "--no-index", ok_codes=(1,), must="1 added")
        second = cli_case(db, "ingest", str(folder), "--no-index", ok_codes=(1,), must="2 unchanged")
        return {"clean": first["clean"] and second["clean"], "detail": f"{bad.name!a}: {second['detail'][-200:]}",
                "peak_rss_mb": max(first["peak_rss_mb"], second["peak_rss_mb"])}

    def utf16() -> dict[str, Any]:
        return parse_case(hostile.utf16_no_bom(gen / "utf16.txt"), "ok")

    def random_bytes() -> dict[str, Any]:
        return parse_case(hostile.random_text_bytes(gen / "noise.txt", 1 * MiB), "UnsupportedFormat")

    def png_pdf() -> dict[str, Any]:
        return parse_case(hostile.png_named_pdf(gen / "scan.pdf"), "UnsupportedFormat")

    def one_line_50mb() -> dict[str, Any]:
        out = parse_case(hostile.one_line_text(gen / "one-line.txt", 50 * MiB), "ok")
        out["clean"] = out["clean"] and "only the first 20,000 passages" in out["detail"]
        return out

    def corpus_each() -> dict[str, Any]:
        peaks = {}
        for f in sorted(hostile.CORPUS.iterdir()):
            if f.suffix.lower() in (".pdf", ".docx", ".pptx", ".xlsx", ".md"):
                peaks[f.name] = parse_case(f, "any")["peak_rss_mb"]
        top = max(peaks, key=lambda k: peaks[k])
        return {"clean": max(peaks.values()) <= mb(Limits().max_worker_rss_bytes), "files": len(peaks),
                "detail": f"largest: {top}", "peak_rss_mb": peaks[top]}

    def corpus_ingest() -> dict[str, Any]:
        folder = work / "corpus"
        shutil.copytree(hostile.CORPUS, folder)
        return cli_case(work / "corpus.db", "ingest", str(folder), "--no-index", ok_codes=(1,))

    def reingest_resumes() -> dict[str, Any]:
        files = work / "resume-files"
        shutil.copytree(SAMPLE, files)
        db = work / "resume.db"
        # killed right after the last file's tree is written (vectors are made alongside parsing; the last
        # file's are not yet)
        run = kills.StagedRun(db, files)
        run.wait_for("written", len(list(files.iterdir())) - 1)
        run.kill()
        run.finish()
        return cli_case(db, "ingest", str(files), must="Indexed:")

    def ask_during_ingest() -> dict[str, Any]:
        import subprocess

        db, _ = library(work, "asking")
        busy = work / "asking-busy"
        busy.mkdir()
        shutil.copy2(hostile.CORPUS / "us-trustee-handbook.docx", busy)
        shutil.copy2(hostile.CORPUS / "debian-reference-ja.pdf", busy)
        proc = subprocess.Popen([scenarios.SHELFWISE, "--db", str(db), "ingest", str(busy)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)
        t0 = time.monotonic()
        out = cli_case(db, "ask", "How many days of annual leave?", "--no-answer", must="An ingest is running")
        out["seconds"] = round(time.monotonic() - t0, 1)
        proc.wait()
        return out

    def fuzzing() -> dict[str, Any]:
        r = scenarios.fuzz(work, fuzz_n, seed=1)
        return {"clean": not r.uncaught and not r.over_caps, "fuzzed_files": r.files, "by_format": r.by_format,
                "pdf_seed_pages": hostile.FUZZ_PDF_PAGES, "ocr_pages_per_file": scenarios.FUZZ_LIMITS.max_ocr_pages,
                "statuses": r.statuses, "uncaught_exceptions": len(r.uncaught), "uncaught": r.uncaught[:10],
                "native_crashes_contained": len(r.crashed), "over_caps": len(r.over_caps),
                "seconds": round(r.seconds, 1), "peak_rss_mb": mb(r.peak_rss_bytes)}

    def kill_9() -> dict[str, Any]:
        kw = work / "kills"
        kw.mkdir()
        files = kw / "files"
        shutil.copytree(SAMPLE, files)
        r = kills.kill_campaign(kw, files, kills=n_kills, seed=11)
        clean = (r["integrity_ok"] == r["kills"] and not r["half_written"] and not r["duplicated"]
                 and not r["documents_lost"] and r["resumed_ok"] == r["kills"] and r["final_integrity"] == "ok")
        return {"clean": clean, **r, "peak_rss_mb": None}

    def kill_writes() -> dict[str, Any]:
        # the sample's tree writes take 1-10 ms, too short to aim at from outside; two large documents' take
        # ~0.1 s (554 and 1,406 passages). Runs with --no-index, so each is seconds long.
        kw = work / "kills-writes"
        kw.mkdir()
        files = kw / "files"
        shutil.copytree(SAMPLE, files)
        for name in ("ru-state-contract.docx", "us-trustee-handbook.docx"):
            shutil.copy2(hostile.CORPUS / name, files)
        r = kills.kill_campaign(kw, files, kills=max(2, n_kills // 4), seed=13, stages=("write",), index=False)
        clean = (r["integrity_ok"] == r["kills"] and not r["half_written"] and not r["duplicated"]
                 and not r["documents_lost"] and r["resumed_ok"] == r["kills"] and r["final_integrity"] == "ok")
        return {"clean": clean, **r, "peak_rss_mb": None}

    def writers() -> dict[str, Any]:
        a = work / "wa"
        shutil.copytree(SAMPLE, a)
        b = work / "wb"
        b.mkdir()
        for n in ("word-tables.docx", "worldview-essay-guide.docx", "stanley-cups.xlsx", "r-intro.pdf"):
            shutil.copy2(hostile.CORPUS / n, b)
        r = scenarios.two_writers(work, a, b)
        return {"clean": r["exit_codes"] == [0, 0] and r["sound"] and r["documents"] == r["expected"], **r,
                "peak_rss_mb": None}

    def search_busy() -> dict[str, Any]:
        busy = work / "sb"
        busy.mkdir()
        shutil.copy2(hostile.CORPUS / "us-trustee-handbook.docx", busy)
        shutil.copy2(hostile.CORPUS / "irs-irm-2-3-59.pdf", busy)
        r = scenarios.search_during_ingest(work, busy)
        return {"clean": r["searches"] >= 1 and set(r["exit_codes"]) == {0} and r["ingest_exit"] == 0, **r,
                "peak_rss_mb": None}

    def variants_fuzz() -> dict[str, Any]:
        seed = variants.seed_from_env()
        print(f"variants seed: {seed} (replay: SHELFWISE_FUZZ_SEED={seed})", file=sys.stderr, flush=True)
        vw = work / "variants"
        vw.mkdir()
        r = scenarios.fuzz_variants(vw, variant_n, seed)
        return {"clean": not r.uncaught and not r.unreported and not r.wrong, "seed": seed, "fuzzed_files": r.files,
                "by_kind": r.by_kind, "uncaught_exceptions": len(r.uncaught), "uncaught": r.uncaught[:10],
                "unreported": r.unreported[:10], "wrong": r.wrong[:10], "seconds": round(r.seconds, 1),
                "peak_rss_mb": None}

    def command_kills() -> dict[str, Any]:
        kw = work / "kills-commands"
        kw.mkdir()
        files = kw / "files"
        shutil.copytree(SAMPLE, files)
        r = kills.command_kills(kw, files, kills=n_command_kills, seed=19)
        clean = (r["integrity_ok"] == r["kills"] and not r["documents_lost"] and r["resumed_ok"] == r["kills"])
        return {"clean": clean, **r, "peak_rss_mb": None}

    return {
        **issue27_cases(work),
        "damaged library": damaged, "read-only library": read_only, "zip bomb 900 MB at 122x": zip_bomb,
        "zip member lying about its size": lying_zip, "largest XML within the limits": big_xml_within_limits,
        "50 MB XML at about 32x (too large, not a zip bomb)": big_ordinary_xml,
        "100 kB question": long_question, "non-UTF-8 file name": non_utf8_name, "UTF-16 without BOM": utf16,
        "random bytes named .txt": random_bytes, "PNG renamed .pdf": png_pdf,
        "50 MB one-line text": one_line_50mb, "corpus files one by one": corpus_each,
        "corpus ingest (CLI)": corpus_ingest, "re-ingest after kill during embedding": reingest_resumes,
        "ask during ingest": ask_during_ingest, "two writers": writers, "search during ingest": search_busy,
        "fuzzing": fuzzing, "generated variants (names, encodings, special files)": variants_fuzz,
        "kill -9 aimed at stages": kill_9, "kill -9 in index and calibrate commands": command_kills,
        "kill -9 inside large tree writes": kill_writes,
    }


def issue38_cases(work: Path, n_hostile: int) -> dict[str, Callable[[], dict[str, Any]]]:
    """Issue 38: hostile names and text (controls, bidi, markup) drawn anew each run through every command, with
    every output byte scanned; then its cases, each run as its test in tests/reliability."""
    from tests.reliability import hostile_text as ht
    from tests.reliability import test_hostile_output as out
    from tests.reliability import test_library_guards as guards

    n = [0]

    def fresh() -> Path:
        n[0] += 1
        d = work / f"i38-{n[0]}"
        d.mkdir()
        return d

    def hostile_names_and_text() -> dict[str, Any]:
        seed = variants.seed_from_env()
        print(f"hostile text seed: {seed} (replay: SHELFWISE_FUZZ_SEED={seed})", file=sys.stderr, flush=True)
        base = fresh()
        files = base / "files"
        out.write_issue_files(files)
        made = ht.hostile_files(files / "seeded", seed, n_hostile)
        db = base / "lib.db"
        runs = [["ingest", str(files)], ["status"], ["tree"], ["tree", "--json"], ["search", "policy", "-n", "50"],
                ["search", "vault"], ["search", "alarm", "--json"]]
        runs += [["ask", q, "--trace"] for q in ("Who keeps the vault code?", "How do I call the guard?",
                                                 "Where do visitors park?", "Which policy covers travel claims?")]
        found: list[str] = []
        codes: list[int] = []
        for args in runs:
            r = out.run(db, *args)
            codes.append(r.returncode)
            found += [f"{args[0]}: {x}" for x in ht.terminal_unsafe(r.stdout) + ht.terminal_unsafe(r.stderr)]
        r = out.run(db, "chat", stdin="Where do visitors park?\n/quit\n")
        codes.append(r.returncode)
        found += [f"chat: {x}" for x in ht.terminal_unsafe(r.stdout) + ht.terminal_unsafe(r.stderr)]
        return {"clean": not found and set(codes) == {0}, "seed": seed, "hostile_files": len(made) + 4,
                "commands": len(codes), "exit_codes": sorted(set(codes)), "control_or_bidi_in_output": len(found),
                "examples": found[:5], "peak_rss_mb": None}

    def as_case(fn: Callable[..., None], *args: Any) -> Callable[[], dict[str, Any]]:
        """``fn`` run with a fresh folder first, then ``args``."""
        def run() -> dict[str, Any]:
            try:
                fn(fresh(), *args)
            except AssertionError as exc:
                return {"clean": False, "detail": str(exc)[:300], "peak_rss_mb": None}
            return {"clean": True, "detail": "", "peak_rss_mb": None}
        return run

    def unreadable_folders() -> dict[str, Any]:
        from tests.reliability import test_unreadable as unreadable

        work = fresh()
        if not unreadable.permissions_bite(work):
            return {"clean": True, "detail": "not run: permissions do not bite here (root without setpriv)",
                    "peak_rss_mb": None}
        files = unreadable.make_tree(work / "files")
        try:
            unreadable.test_unreadable_folders_and_files_are_status_rows_with_what_to_do_and_the_rest_is_ingested(
                work, files)
        except AssertionError as exc:
            return {"clean": False, "detail": str(exc)[:300], "peak_rss_mb": None}
        finally:
            unreadable.restore(files)
        return {"clean": True, "detail": "", "peak_rss_mb": None}

    return {
        "hostile names and text through every command": hostile_names_and_text,
        "unreadable folders and files in status": unreadable_folders,
        "--db naming another program's database with a migrations table":
            as_case(guards.test_another_programs_database_with_a_migrations_table_is_not_written, guards.laravel_db),
        "SHELFWISE_HOME naming a file": as_case(guards.test_shelfwise_home_naming_a_file_is_said_plainly),
        "--db naming a device or a FIFO":
            as_case(guards.test_db_naming_a_device_or_a_fifo_is_refused_without_writing_beside_it),
        "doctor --rebuild on a healthy library":
            as_case(guards.test_doctor_rebuild_leaves_a_healthy_library_alone_without_force),
        "doctor --rebuild keeps conversations":
            as_case(guards.test_doctor_rebuild_keeps_the_conversations, True),
        "generative GGUF as the encoder":
            as_case(guards.test_a_generative_gguf_as_the_encoder_is_refused_by_its_header),
        "encoder GGUF as the answer model":
            as_case(guards.test_an_encoder_gguf_as_the_answer_model_is_refused_by_its_header),
        "damaged bundled model repaired":
            as_case(guards.test_a_bundled_model_of_random_bytes_is_reassembled_and_a_flipped_one_is_repaired_by_check),
    }


def issue50_cases(work: Path, n_rebuild_kills: int, n_swaps: int) -> dict[str, Callable[[], dict[str, Any]]]:
    """Issue 50: the library replaced atomically, exports made inert, files opened once."""
    return {
        "issue 50: doctor --rebuild interrupted (SIGINT, SIGKILL)": lambda: issue50.rebuild_kills(work,
                                                                                                  n_rebuild_kills),
        "issue 50: two rebuilds at once": lambda: issue50.rebuilds_at_once(work),
        "issue 50: rebuild on a full file system": lambda: issue50.full_disk(work),
        "issue 50: exports of hostile text": lambda: issue50.exports(work),
        "issue 50: file swapped for a symlink during ingest": lambda: issue50.symlink_swaps(work, n_swaps),
    }


def issue27_cases(work: Path) -> dict[str, Callable[[], dict[str, Any]]]:
    """Issue 27's cases, each run as its test in tests/reliability (clean when the test's assertions hold)."""
    from tests.reliability import test_cli_edges as edges
    from tests.reliability import test_decoding_and_passages as dec
    from tests.reliability import test_failure_kinds as kinds
    from tests.reliability import test_special_files as special

    state: dict[str, Path] = {}
    n = [0]

    def fresh() -> Path:
        n[0] += 1
        d = work / f"i27-{n[0]}"
        d.mkdir()
        return d

    def indexed() -> Path:
        if "db" not in state:
            state["db"] = edges.build_indexed(fresh())
        return state["db"]

    def as_case(fn: Callable[[], None]) -> Callable[[], dict[str, Any]]:
        def run() -> dict[str, Any]:
            try:
                fn()
            except AssertionError as exc:
                return {"clean": False, "detail": str(exc)[:300], "peak_rss_mb": None}
            return {"clean": True, "detail": "", "peak_rss_mb": None}
        return run

    def special_arguments() -> None:
        for what in ("dev-zero", "fifo", "socket"):
            special.test_a_special_file_given_as_an_argument_is_refused_without_being_opened(fresh(), what)

    tmp, idx, both = (fresh,), (indexed,), (indexed, fresh)
    table: list[tuple[str, Callable[..., None], tuple[Callable[[], Path], ...]]] = [
        ("symlink loop as an argument",
         special.test_a_symlink_loop_given_as_an_argument_gets_a_message_not_a_traceback, tmp),
        ("special files in a folder",
         special.test_special_entries_in_a_folder_each_get_a_status_line_and_the_rest_is_ingested, tmp),
        ("folder tree 2,100 levels deep",
         special.test_a_tree_2100_levels_deep_is_ingested_as_far_as_the_system_can_name_it, tmp),
        ("file names forging output lines",
         special.test_no_output_line_of_ingest_or_status_can_be_forged_by_a_file_name, tmp),
        ("question with a byte that is not UTF-8", edges.test_a_question_with_a_byte_that_is_not_utf8_is_answered, idx),
        ("empty question", edges.test_an_empty_question_is_said_to_be_empty, idx),
        ("ask on a full disk", edges.test_ask_on_a_full_disk_does_not_say_an_ingest_is_running, both),
        ("doctor on a healthy read-only library", edges.test_doctor_calls_a_healthy_read_only_library_healthy, both),
        ("--db naming another program's SQLite file",
         edges.test_another_programs_sqlite_file_is_refused_and_left_as_it_was, tmp),
        ("read-only commands on a missing library",
         edges.test_read_only_commands_on_a_missing_library_create_nothing, tmp),
        ("warnings in the output of ingest and status",
         edges.test_warnings_are_part_of_the_normal_output_of_ingest_and_status, tmp),
        ("two ingests into one collection",
         edges.test_two_ingests_into_one_collection_both_finish_and_index_it_once_at_a_time, tmp),
        ("calibrate without the generative model",
         edges.test_calibrate_uses_no_generative_model_and_shows_progress_when_not_on_a_terminal, both),
        ("NUL bytes between words", dec.test_text_with_nul_bytes_between_words_is_read_as_words_not_utf16_garbage, tmp),
        ("mixed UTF-8 and Windows-1252", dec.test_mixed_utf8_and_windows_1252_lines_are_each_read_right, tmp),
        ("5 MB spreadsheet cell",
         dec.test_a_5_mb_spreadsheet_cell_is_split_into_passages_the_embedder_reads_whole, tmp),
        ("long unspaced CJK line", dec.test_a_long_unspaced_cjk_line_parses_about_as_fast_as_ascii, tmp),
        ("full disk, then a plain re-ingest",
         kinds.test_a_file_that_failed_on_a_full_disk_is_retried_by_the_next_plain_ingest, tmp),
        ("worker killed or timed out, then a plain re-ingest",
         kinds.test_a_file_whose_worker_was_killed_or_timed_out_is_retried, tmp),
        ("file truncated while it is read",
         kinds.test_a_file_truncated_while_it_is_read_is_not_stored_ok_with_part_of_its_text, tmp),
        ("failure about the file not retried until it changes",
         kinds.test_a_failure_about_the_file_is_not_retried_until_the_file_changes, tmp),
    ]
    out = {name: as_case(lambda f=f, a=a: f(*(make() for make in a))) for name, f, a in table}
    out["symlink to /dev/zero, FIFO, socket as arguments"] = as_case(special_arguments)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--fuzz", type=int, default=2000, help="fuzzed files (default 2000)")
    ap.add_argument("--hostile", type=int, default=60,
                    help="files with hostile names and text run through every command (default 60; seed: "
                         "SHELFWISE_FUZZ_SEED)")
    ap.add_argument("--kills", type=int, default=20, help="kill -9 points aimed at ingest's stages (default 20)")
    ap.add_argument("--variants", type=int, default=1000,
                    help="generated names, encodings and special files (default 1000; seed: SHELFWISE_FUZZ_SEED)")
    ap.add_argument("--command-kills", type=int, default=10,
                    help="kill -9 points in shelfwise index and calibrate (default 10)")
    ap.add_argument("--rebuild-kills", type=int, default=20,
                    help="doctor --rebuild interrupted at random moments, SIGINT and SIGKILL alternately (default 20)")
    ap.add_argument("--swaps", type=int, default=10,
                    help="ingests during which a file is swapped for a symlink to a secret (default 10)")
    ap.add_argument("--only", default=None, help="comma-separated case names (substring match)")
    ap.add_argument("--skip", default=None, help="comma-separated case names to leave out (substring match)")
    ap.add_argument("--merge", nargs="+", type=Path, default=None,
                    help="combine the --json outputs of partial runs into one summary (a later part's case "
                         "replaces an earlier part's of the same name)")
    args = ap.parse_args(argv)
    results: dict[str, Any] = {}
    t_all = time.monotonic()
    if args.merge:
        for part in args.merge:
            results.update(json.loads(part.read_text())["cases"])
        return report(results, 0.0, args.json)
    with tempfile.TemporaryDirectory(prefix="shelfwise-reliability-") as tmp:
        work = Path(tmp)
        todo = (cases(work, args.fuzz, args.kills, args.variants, args.command_kills)
                | issue38_cases(work, args.hostile) | issue50_cases(work, args.rebuild_kills, args.swaps))
        for name, fn in todo.items():
            if args.only and not any(s.strip() in name for s in args.only.split(",")):
                continue
            if args.skip and any(s.strip() in name for s in args.skip.split(",")):
                continue
            t0 = time.monotonic()
            try:
                out = fn()
            except Exception as exc:  # a case that blows up is a finding, not the end of the run
                out = {"clean": False, "error": f"{exc.__class__.__name__}: {exc}",
                       "traceback": traceback.format_exc()[-1500:], "peak_rss_mb": None}
            out.setdefault("seconds", round(time.monotonic() - t0, 1))
            results[name] = out
            print(f"{'clean ' if out['clean'] else 'FAILED'} {name}: {out.get('detail', '')!s:.150}",
                  file=sys.stderr if args.json else sys.stdout, flush=True)
    return report(results, time.monotonic() - t_all, args.json)


def report(results: dict[str, Any], seconds: float, as_json: bool) -> int:
    fuzz_r = results.get("fuzzing", {})
    var_r = results.get("generated variants (names, encodings, special files)", {})
    kill_r = results.get("kill -9 aimed at stages", {})
    cmd_r = results.get("kill -9 in index and calibrate commands", {})
    write_r = results.get("kill -9 inside large tree writes", {})
    rebuild_r = results.get("issue 50: doctor --rebuild interrupted (SIGINT, SIGKILL)", {})
    fuzzers = [r for r in (fuzz_r, var_r) if r]
    killers = [r for r in (kill_r, cmd_r) if r]
    summary = {
        "cases_tried": len(results), "cases_clean": sum(1 for r in results.values() if r["clean"]),
        "data_lost": sum(r.get("documents_lost", 0) + r.get("half_written", 0) + r.get("duplicated", 0)
                         for r in (kill_r, write_r, cmd_r)) if kill_r or write_r or cmd_r else None,
        "fuzzed_files": sum(r.get("fuzzed_files", 0) for r in fuzzers) if fuzzers else None,
        "fuzzed_by_kind": {"mutated corpus files": fuzz_r.get("fuzzed_files"), **var_r.get("by_kind", {})},
        "variants_seed": var_r.get("seed"),
        "uncaught_exceptions": sum(r.get("uncaught_exceptions", 0) for r in fuzzers) if fuzzers else None,
        "kills": sum(r.get("kills", 0) for r in killers) if killers else None,
        "kills_by_where": {"ingest stages": kill_r.get("landed"), "index/calibrate commands": cmd_r.get("by_command")},
        # a kill whose process had already ended (a command that finished before its drawn moment) tests nothing
        "kills_in_a_running_process": (kill_r.get("landed_in_run", 0) + cmd_r.get("killed_while_running", 0)
                                       if killers else None),
        "kill_integrity_ok": sum(r.get("integrity_ok", 0) for r in killers) if killers else None,
        "kills_resumed_ok": sum(r.get("resumed_ok", 0) for r in killers) if killers else None,
        "write_kills": write_r.get("kills"), "write_kills_landed": write_r.get("landed"),
        "rebuild_kills": rebuild_r.get("kills"), "rebuild_kills_landed": rebuild_r.get("landed"),
        "rebuild_kills_kept_everything": rebuild_r.get("all_kept"),
        "peak_rss_mb_per_case": {k: v.get("peak_rss_mb") for k, v in results.items()},
        "max_peak_rss_mb": max((v["peak_rss_mb"] for v in results.values() if v.get("peak_rss_mb")), default=None),
        "seconds": round(seconds, 1) if seconds else sum(float(v.get("seconds") or 0) for v in results.values()),
        "note": "wall-clock seconds were measured on a 2-core machine shared with other jobs",
        "cases": results,
    }
    if as_json:
        print(json.dumps(summary, indent=1, ensure_ascii=True, default=str))
    else:
        print(f"{summary['cases_clean']}/{summary['cases_tried']} cases clean; data_lost={summary['data_lost']}; "
              f"fuzzed_files={summary['fuzzed_files']}; uncaught_exceptions={summary['uncaught_exceptions']}; "
              f"max peak RSS {summary['max_peak_rss_mb']} MB")
    return 0 if summary["cases_clean"] == summary["cases_tried"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
