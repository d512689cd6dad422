"""Answers and adaptive calibration with the REAL bundled models (Gemma 3 270M base, all-MiniLM-L6-v2).

A tiny collection is generated here (three policy documents of a made-up company, so the model cannot know the
answers), ingested into a temporary library, and queried. Figures are printed (run with ``-s`` to see them).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shelfwise.app.cli.render import render_answer_text
from shelfwise.core.answers.adaptive import get_threshold, threshold_key
from shelfwise.core.answers.adaptive_search import QAItem, calibrate_adaptive
from shelfwise.core.answers.answer import NOT_FOUND_TEXT
from shelfwise.core.answers.ask import answer_question
from shelfwise.core.answers.types import AnswerEvents

pytestmark = pytest.mark.model

DOCS = {
    "leave.md": """# Brightwater Labs leave policy

## Annual leave
New employees at Brightwater Labs receive 27 days of paid annual leave per year. Leave requests must be approved
by your team lead at least ten days in advance.

## Sick leave
A doctor's note is needed after four consecutive days of sick leave. Report every absence to the people desk
before 10 am.
""",
    "travel.md": """# Brightwater Labs travel policy

## Meals
The meal allowance abroad is 45 euros per day. Keep every receipt and upload it within 30 days.

## Booking
All trips are booked through the internal portal called Skylark. Economy class is the default for flights under
six hours.
""",
    "it.md": """# Brightwater Labs IT guide

## VPN
The company VPN is called NorthGate. Connect to NorthGate before opening any internal system from home.

## Passwords
Passwords must be changed every 90 days and be at least 14 characters long.
""",
}


class _Shared:
    """The session's backend, lent to a Shelf that must not close it."""

    def __init__(self, backend: Any) -> None:
        self._b = backend

    def __getattr__(self, name: str) -> Any:
        return getattr(self._b, name)

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def real_shelf(tmp_path_factory: pytest.TempPathFactory, llama_backend: Any) -> Iterator[Any]:
    from shelfwise.core.settings import Settings
    from shelfwise.core.shelf import Shelf

    root = tmp_path_factory.mktemp("answers")
    docs = root / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    shelf = Shelf(Settings(db_path=root / "lib.db", embedder_path="minilm"), backend=_Shared(llama_backend))
    shelf.ingest([docs], "default")
    yield shelf
    shelf.close()


def test_answer_streams_and_cites_real_passages(real_shelf: Any) -> None:
    events: list[str] = []
    tokens: list[str] = []
    t0 = time.perf_counter()
    ans = answer_question(real_shelf.walk, "What is the company VPN called?", events=AnswerEvents(
        on_search=lambda r: events.append("search"),
        on_extract=lambda a: events.append("extract"),
        on_token=lambda t: (events.append("token"), tokens.append(t)),
        on_generated=lambda a: events.append("generated")))
    seconds = time.perf_counter() - t0
    print(f"\nanswer: {ans.text!r} ({ans.tokens} tokens evaluated, {len(tokens)} pieces, {seconds:.1f} s)")
    print(render_answer_text(ans))
    # the walk, the extracted sentence at once, the model's answer piece by piece, then its verdict
    assert events == ["search", "extract", *["token"] * len(tokens), "generated"] and len(tokens) > 1
    assert "".join(tokens).strip() and (ans.generated or ans.generation_note)
    assert ans.found and ans.text and ans.citations
    search_ids = {h.node_id for h in ans.search.hits}
    for c in ans.citations:
        assert f"[{c.number}]" in ans.text and c.hit.node_id in search_ids
        node = real_shelf.store.node(c.hit.node_id)
        assert node is not None and node.kind == "passage" and node.text == c.hit.text
        assert Path(c.hit.path).name in DOCS
    assert "NorthGate" in ans.citations[0].hit.text


def test_unrelated_question_is_not_found(real_shelf: Any) -> None:
    ans = answer_question(real_shelf.walk, "How do I bake sourdough bread?")
    assert not ans.found and ans.text == NOT_FOUND_TEXT and ans.citations == []


def test_calibrate_adaptive_with_the_real_model(real_shelf: Any, tmp_path: Path) -> None:
    items = [QAItem("What is the capital of France?", ["Paris"]),
             QAItem("What is the company VPN called?", ["NorthGate"]),
             QAItem("How many days of paid annual leave do new employees get?", ["27 days", "27"])]
    t0 = time.perf_counter()
    report = calibrate_adaptive(real_shelf.walk, items, max_expansions=4)
    seconds = time.perf_counter() - t0
    summary = {k: v for k, v in report.to_json().items() if k != "per_question"}
    print(f"\ncalibration in {seconds:.1f} s: {json.dumps(summary)}")
    for o in report.outcomes:
        print(f"  {o.item.question!r}: choices={o.tree.choices} answer={o.tree.final_answer!r} "
              f"p={[round(s.p_retrieve, 3) for s in (o.tree.trajectory or [])]} {o.seconds:.1f} s")
    assert report.questions == 3 and report.solved >= 1
    assert report.threshold is not None and 0.0 <= report.threshold <= 1.0 + 1e-5
    assert real_shelf.store.get_meta(threshold_key(real_shelf.backend)) == report.threshold
    assert get_threshold(real_shelf.store, real_shelf.backend) == report.threshold
    from training.adaptive_export import export

    export(report.outcomes, tmp_path)
    sup = [json.loads(line) for line in (tmp_path / "supervised.jsonl").read_text().splitlines()]
    pref = [json.loads(line) for line in (tmp_path / "preference.jsonl").read_text().splitlines()]
    assert len(sup) == report.solved and len(pref) == report.pairs
    for rec in sup:
        assert {"messages", "question", "answer", "final_answer", "retrievals", "trajectory"} <= set(rec)
        assert [m["role"] for m in rec["messages"]] == ["user", "assistant"]
        for step in rec["trajectory"]:
            assert set(step) == {"question", "answer", "source", "p_retrieve", "passages"}
            assert 0.0 <= step["p_retrieve"] <= 1.0 and step["source"] in ("model", "documents")
    for rec in pref:
        assert set(rec) == {"prompt", "chosen", "rejected"} and rec["chosen"] != rec["rejected"]
