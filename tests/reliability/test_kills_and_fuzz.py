"""Small samples of the benchmark's big runs (benchmarks/reliability.py has 1,000 fuzzed files and 20 kills):
fuzzed files through every parser, kill -9 during ingest/index/calibrate, two writers, a search during ingest."""

from __future__ import annotations

import shutil
from pathlib import Path

from shelfwise.ingest.model import Limits
from tests.reliability import hostile, scenarios

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample"


def test_fuzzed_files_through_every_parser_end_cleanly(tmp_path: Path) -> None:
    limits = Limits()
    result = scenarios.fuzz(tmp_path, 40, seed=3, limits=limits)
    assert result.files == 40 and set(result.by_format) == set(hostile.FUZZ_FORMATS)
    assert result.uncaught == [], result.uncaught
    assert result.over_caps == [], result.over_caps
    assert 0 < result.peak_rss_bytes <= limits.max_worker_rss_bytes
    assert sum(result.statuses.values()) == 40  # every file has a recorded outcome


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "files"
    shutil.copytree(SAMPLE, folder)
    return folder


def test_kill_9_at_random_points_loses_nothing(tmp_path: Path) -> None:
    out = scenarios.kill_campaign(tmp_path, _folder(tmp_path), kills=3, seed=5)
    assert out["kills"] == 3 and out["integrity_ok"] == 3, out
    assert out["half_written"] == 0 and out["duplicated"] == 0, out
    assert out["documents_lost"] == 0 and out["final_integrity"] == "ok", out


def test_two_writers_and_a_search_during_ingest(tmp_path: Path) -> None:
    a = _folder(tmp_path)
    b = tmp_path / "more"
    b.mkdir()
    for name in ("word-tables.docx", "worldview-essay-guide.docx", "stanley-cups.xlsx"):
        shutil.copy2(hostile.CORPUS / name, b)
    shutil.copy2(SAMPLE / "facilities.md", b)  # a file both write (different paths, same content)
    both = scenarios.two_writers(tmp_path, a, b)
    assert both["exit_codes"] == [0, 0] and both["sound"], both
    assert both["documents"] == both["expected"], both
    busy = tmp_path / "busy-files"
    busy.mkdir()
    shutil.copy2(hostile.CORPUS / "us-trustee-handbook.docx", busy)
    searched = scenarios.search_during_ingest(tmp_path, busy)
    assert searched["searches"] >= 1 and set(searched["exit_codes"]) == {0}, searched  # type: ignore[arg-type]
    assert searched["ingest_exit"] == 0
