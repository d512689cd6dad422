"""A warm question made cheaper without changing what is answered (docs/scale.md, "Session 22"): the cosine scan
runs on a thread of its own while the words are ranked (``features.scan_ahead``), and a ranking of words that are
all about as common scores only the rows holding two of them or more (``ranking._rank_two_or_more``). Both are
used only on large libraries; here they are forced on the bundled sample (real SQLite, the real MiniLM encoder the
sample library is built with) and every answer, its walk and its features are compared with the old path's."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest

from shelfwise.core.navigation import features
from shelfwise.core.navigation.snapshots import snapshot_for
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store import ranking
from shelfwise.core.store.textutil import fts_query
from shelfwise.resources import path as resource_path


def _questions() -> list[str]:
    lines = resource_path("sample_questions.jsonl").read_text(encoding="utf-8").splitlines()
    asked = [json.loads(line)["question"] for line in lines if line.strip()]
    # and questions of several common words, the case the restricted ranking is for
    return [*asked, "the company employees office days leave policy", "What does the handbook say about travel?"]


def _summary(shelf: Shelf, question: str) -> dict[str, Any]:
    answer = shelf.ask(question, "default")
    result = answer.search
    assert result is not None
    return {
        "text": answer.text, "found": answer.found, "short": repr(answer.short),
        "hits": [(h.node_id, h.score, h.document_id, h.path) for h in result.hits],
        "levels": [[(c.node_id, c.score, c.kept, c.source, sorted(c.features.items())) for c in level.candidates]
                   for level in result.trace.levels],
    }


def _forget(shelf: Shelf) -> None:
    """Drop the kept rankings and cosines, so the next question is ranked and scanned again."""
    shelf.store._ranked = []
    store = shelf.store
    snapshot_for(store, store.collection("default").id, shelf.embedder.model_id).data.recent_cos.clear()


def _summaries(shelf: Shelf) -> list[dict[str, Any]]:
    """:func:`_summary` of each of :func:`_questions`, each ranked and scanned afresh (:func:`_forget`)."""
    out = []
    for q in _questions():
        _forget(shelf)
        out.append(_summary(shelf, q))
    return out


def assert_same_answers(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> None:
    for q, a, b in zip(_questions(), before, after, strict=True):
        assert a == b, q


@pytest.fixture(scope="module")
def sample(sample_copy: Callable[[str], Any]) -> Any:
    return sample_copy("warm-question")


def test_answers_are_the_old_paths_with_the_shortcuts_forced(sample: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(db_path=sample.db, use_calibration=False, answer_generate=False)
    with Shelf(settings) as shelf:
        shelf.before_question("default")
        # the old path: no scan beside the ranking, no restricted ranking
        monkeypatch.setattr(features, "SCAN_AHEAD_MIN", 10**12)
        monkeypatch.setattr(ranking, "_rank_two_or_more", lambda *args: None)
        before = _summaries(shelf)
        monkeypatch.undo()
        # both forced on this small library
        monkeypatch.setattr(features, "SCAN_AHEAD_MIN", 0)
        monkeypatch.setattr(ranking, "SPLIT_MIN_POSTINGS", 0)
        monkeypatch.setattr(ranking, "_expected_at_least", lambda *args: float("inf"))
        scans: list[str] = []
        restricted: list[bool] = []
        start, two = threading.Thread.start, ranking._rank_two_or_more

        def counted_start(thread: threading.Thread) -> None:
            scans.append(thread.name)
            start(thread)

        def counted_two(*args: Any) -> Any:
            out = two(*args)
            restricted.append(out is not None)
            return out

        monkeypatch.setattr(threading.Thread, "start", counted_start)
        monkeypatch.setattr(ranking, "_rank_two_or_more", counted_two)
        after = _summaries(shelf)
    assert_same_answers(before, after)
    assert scans.count("shelfwise-scan") == len(_questions())  # each question scanned beside its ranking
    # tried for the questions of three words or more (the walk's 200 rows are more than the sample's rows of two
    # words, so here it falls back: the rankings it returns are checked below)
    assert len(restricted) >= len(_questions()) // 2


def test_sample_rankings_are_the_joined_statements(sample: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every keyword ranking of the sample's questions, the restricted one tried for each, is the one statement
    that joins every matching row to its node (scores to 1e-9, the same rows above the cut)."""
    from shelfwise.core.store.db import Store

    monkeypatch.setattr(ranking, "SPLIT_MIN_POSTINGS", 0)
    monkeypatch.setattr(ranking, "_expected_at_least", lambda *args: float("inf"))
    store = Store(sample.db)
    try:
        cid = store.collection("default").id
        where, params = ranking._after_match(("passage",), cid, None)
        restricted = 0
        for q in _questions():
            match = fts_query(q)
            assert match is not None
            for limit in (3, 10, 50):
                terms = match.split(" OR ")
                stats = ranking._term_stats(store.conn, terms)
                restricted += stats is not None and ranking._rank_two_or_more(
                    store.conn, match, terms, limit, where, params, stats) is not None
                got = ranking.rank(store.conn, match, limit, ("passage",), cid, None)
                joined = [(int(i), -float(s)) for i, s in store.conn.execute(
                    f"SELECT n.id, bm25(nodes_fts) FROM nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid "
                    f"WHERE nodes_fts MATCH ? {where} ORDER BY bm25(nodes_fts) LIMIT ?", (match, *params, limit))]
                sa, sb = [round(s, 9) for _, s in got], [round(s, 9) for _, s in joined]
                assert sa == sb, (q, limit)
                assert {i for i, s in got if round(s, 9) > sa[-1]} == {i for i, s in joined if round(s, 9) > sb[-1]}
        assert restricted >= 5  # the case is the one meant: rankings from the rows of two words or more
    finally:
        store.close()


def _trace_dict_before(trace: Any) -> Any:
    """``trace_dict`` as it was before session 22: every candidate made into a dict, then the level cut."""
    from shelfwise.core.conversation import turn
    from shelfwise.core.navigation.trace import to_dict

    d = to_dict(trace)
    for level in d.get("levels", []):
        cands = level.get("candidates", [])
        kept = [c for c in cands if c.get("kept")]
        pruned = [c for c in cands if not c.get("kept")][: max(0, turn.TRACE_CANDIDATES - len(kept))]
        level["judged_count"] = len(cands)
        level["candidates"] = [c for c in cands if c in kept or c in pruned]
    return d


def test_a_stored_turns_trace_is_what_it_was(sample: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn's trace is cut to its kept and best pruned candidates before they are made into dicts: the same JSON
    as when every candidate was converted first (levels cut to 3, 10 and 40 candidates)."""
    from shelfwise.core.conversation import turn

    settings = Settings(db_path=sample.db, use_calibration=False, answer_generate=False)
    with Shelf(settings) as shelf:
        traces = []
        for q in _questions()[:6]:
            answer = shelf.ask(q, "default")
            assert answer.search is not None
            traces.append(answer.search.trace)
    for limit in (3, 10, 40):
        monkeypatch.setattr(turn, "TRACE_CANDIDATES", limit)
        for trace in traces:
            assert json.dumps(turn.trace_dict(trace)) == json.dumps(_trace_dict_before(trace))
    assert any(len(level.candidates) > 3 for trace in traces for level in trace.levels)  # levels were cut


def test_a_conversations_reading_is_the_same_with_its_scan_beside_its_ranking(  # type: ignore[no-untyped-def]
        sample: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The topic-shift test of a conversation's next question ranks its words while its scan runs (forced on this
    small library): the same reading (mode, scores) and the same answer as with the scan after the ranking."""
    turns = [("How many days of annual leave do employees get?", "and how do I request it?"),
             ("What is the dress code at the office?", "Which meeting rooms are in Lisbon?")]
    settings = Settings(db_path=sample.db, use_calibration=False, answer_generate=False)
    out: dict[int, list[Any]] = {}
    scans: list[str] = []
    start = threading.Thread.start

    def counted_start(thread: threading.Thread) -> None:
        scans.append(thread.name)
        start(thread)

    with Shelf(settings) as shelf:
        for floor in (10**12, 0):
            monkeypatch.setattr(features, "SCAN_AHEAD_MIN", floor)
            if floor == 0:
                monkeypatch.setattr(threading.Thread, "start", counted_start)
            got = []
            for first, second in turns:
                _forget(shelf)
                conv, _, _ = shelf.ask_in_conversation(0, first, "default")
                _forget(shelf)
                _, turn, answer = shelf.ask_in_conversation(conv.id, second, "default")
                assert turn.reading is not None and answer.search is not None
                got.append((turn.reading.mode, turn.reading.scores, answer.text,
                            [(h.node_id, h.score) for h in answer.search.hits]))
            out[floor] = got
    assert out[0] == out[10**12]
    # a thread for each walk, and one for each next question's topic-shift test (before: the walks' only)
    assert scans.count("shelfwise-scan") == 3 * len(turns)
