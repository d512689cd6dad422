"""Generated variants of the hostile kinds (names, encodings, special files, deep trees), new ones each run: the
seed is printed (and taken from ``SHELFWISE_FUZZ_SEED`` to replay a failure). The benchmark runs thousands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.reliability import scenarios, variants

SHELFWISE = str(Path(sys.executable).parent / "shelfwise")


def test_generated_names_encodings_and_special_files_each_get_a_status_and_no_garbage(tmp_path: Path) -> None:
    seed = variants.seed_from_env()
    print(f"variants seed: {seed} (replay: SHELFWISE_FUZZ_SEED={seed})")
    r = scenarios.fuzz_variants(tmp_path, 60, seed, per_batch=30)
    assert r.files >= 60 and set(r.by_kind) == {"name", "encoding", "special"}, (seed, r.by_kind)
    assert r.uncaught == [], (seed, r.uncaught)
    assert r.unreported == [], (seed, r.unreported)
    assert r.wrong == [], (seed, r.wrong)


def test_generated_names_cannot_forge_a_line_of_the_cli_output(tmp_path: Path) -> None:
    seed = variants.seed_from_env()
    print(f"variants seed: {seed} (replay: SHELFWISE_FUZZ_SEED={seed})")
    b = variants.batch(tmp_path / "files", tmp_path / "outside", seed, n_names=12, n_encodings=4, n_specials=4)
    env = {**os.environ, "SHELFWISE_HOME": str(tmp_path / "home"), "PYTHONIOENCODING": "utf-8"}
    try:
        outs = [subprocess.run([SHELFWISE, "--db", str(tmp_path / "lib.db"), *args], capture_output=True,
                               text=True, errors="replace", env=env, timeout=120)
                for args in (["ingest", str(b.folder), "--no-index"], ["status"])]
    finally:
        b.close()
    for r in outs:
        text = r.stdout + r.stderr
        assert "Traceback" not in text, (seed, text[-2000:])
        bad = [ch for ch in text if ch not in "\n" and (ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0
                                                        or 0x2028 <= ord(ch) <= 0x202E or 0x2066 <= ord(ch) <= 0x2069
                                                        or ch in "\u200b\u200f\ufeff")]
        assert bad == [], (seed, sorted(set(bad)))
    # every generated name's line: one line per file, starting with a status the CLI wrote
    listed = [ln for ln in outs[1].stdout.splitlines()[1:] if ln[:1] not in (" ", "")
              and not ln.startswith(("Index ", "Sentence encoder: "))]
    assert all(ln.split()[0] in ("ok", "error", "needs_ocr") or ln[0].isdigit() for ln in listed), (seed, listed)


def test_a_generated_deep_tree_is_walked_as_far_as_it_can_be_named(tmp_path: Path) -> None:
    seed = variants.seed_from_env()
    depth = 1100 + seed % 1200
    print(f"variants seed: {seed}: depth {depth}")
    top = tmp_path / "deep"
    made = variants.deep_tree(top, depth, every=300)
    try:
        from shelfwise.core.ingestion.runner import ingest
        from shelfwise.core.store.db import Store

        with Store(tmp_path / "lib.db") as store:
            report = ingest(store, [top], isolate=False)
        assert report.counts["added"] == len(made), (seed, depth, report.counts)
        assert sum(1 for r in report.results if "cannot read folder" in r.message) <= 1
    finally:
        variants.remove_deep(top)
