"""`shelfwise ask` end to end on the bundled sample, with the real bundled models (subprocesses, real SQLite)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.model


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "shelfwise"  # the installed console script
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=900)


@pytest.fixture(scope="module")
def sample_db(sample_copy) -> tuple[Path, dict[str, str]]:
    """The sample as ``shelfwise ingest`` made it (a copy of the session's: tests/conftest.py)."""
    env = dict(os.environ)
    env.setdefault("SHELFWISE_HOME", str(Path.home() / ".cache" / "shelfwise-test-home"))
    return sample_copy("ask").db, env


def test_ask_json_navigates_and_cites_real_passages(sample_db) -> None:
    db, env = sample_db
    r = _run(["--db", str(db), "ask", "How many days of paid annual leave does a full-time employee get?",
              "--json"], env)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out["passages"] and {"text", "path", "location", "score"} <= set(out["passages"][0])
    assert "27 days" in " ".join(p["text"] for p in out["passages"][:3])  # the gold passage ranks near the top
    assert out["passages"][0]["path"].endswith("handbook.pdf") and out["passages"][0]["location"]["page"] == 5
    levels = out["trace"]
    assert len(levels) >= 2 and levels[-1]["label"] == "passages"
    for level in levels:
        assert {"candidates", "tokens", "seconds"} <= set(level)
        assert all({"title", "score", "kept"} <= set(c) for c in level["candidates"])
        assert any(c["kept"] for c in level["candidates"])
    assert isinstance(out["answer"], str) and out["answer"].strip()
    passage_texts = {p["text"] for p in out["passages"]}
    for c in out["citations"]:  # every citation resolves to a passage that was found, with its file and place
        assert c["text"] in passage_texts and Path(c["path"]).exists() and c["location"]


def test_ask_trace_text_shows_the_path(sample_db) -> None:
    db, env = sample_db
    r = _run(["--db", str(db), "ask", "Which VPN client do I use?", "--no-answer", "--trace"], env)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("Path:")
    assert "Level 1" in r.stdout and "passages" in r.stdout and "Passages:" in r.stdout
    assert "it-security-onboarding.pptx" in r.stdout


def test_ask_on_empty_library_says_what_to_do(tmp_path) -> None:
    env = dict(os.environ)
    r = _run(["--db", str(tmp_path / "empty.db"), "ask", "anything"], env)
    assert r.returncode == 2 and "No library at" in r.stderr and "ingest PATH" in r.stderr
    assert not (tmp_path / "empty.db").exists()  # asking does not create a library
