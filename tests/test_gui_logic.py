"""The window's logic without the window: the question lifecycle (QuerySession), ingest bookkeeping (IngestLedger)
and store look-ups for the preview (LibraryLookup, on a real SQLite store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shelfwise.app.gui.ingest_ledger import IngestLedger
from shelfwise.app.gui.query_session import QuerySession
from shelfwise.core.answers.types import Answer, Citation
from shelfwise.core.ingestion.runner import FileResult, IngestReport
from shelfwise.core.navigation.lookup import LibraryLookup, NodeText
from shelfwise.core.navigation.trace import Candidate, Hit, Level, SearchResult, Trace
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.ingest.model import Location, ParsedDocument, ParsedNode


def _hit(node_id: int = 7, path: str = "/docs/a.docx") -> Hit:
    return Hit(node_id, 1, "Meals are refunded up to 30 euros.", 0.9, path, "Travel", ["Claims"], Location(page=2))


def _result(query: str = "meals?", levels: int = 1) -> SearchResult:
    cand = Candidate(3, "document", "Travel", "travel policy", 0.8, True)
    trace = Trace(query, [Level(1, "documents", [cand]) for _ in range(levels)])
    return SearchResult(query, [_hit()], trace)


def _candidate(node_id: int, kind: str = "section") -> Candidate:
    return Candidate(node_id, kind, "Claims", "how to claim", 0.7, False)


# --------------------------------------------------------------------------- QuerySession
def test_forced_branches_carry_over_for_the_same_question_only() -> None:
    s = QuerySession()
    first = s.start("  meals? ", "hr", keep=[3])
    assert first.question == "meals?" and first.collection == "hr" and list(first.keep) == [3]
    again = s.start("meals?", "hr", keep=[5])
    assert list(again.keep) == [3, 5]  # "look here too" adds to what was forced before
    other = s.start("holidays?", "", keep=())
    assert list(other.keep) == [] and other.collection is None


def test_results_of_a_stale_job_are_ignored() -> None:
    s = QuerySession()
    old = s.start("meals?", "hr")
    new = s.start("holidays?", "hr")
    assert not s.on_searched(old, _result())
    assert s.on_answered(old, Answer("meals?", "x", [], True)) is None
    assert s.last_search is None and s.last_answer is None
    assert s.on_searched(new, _result("holidays?"))
    s.closed = True
    assert not s.is_current(new)  # a closed window shows nothing more


def test_answer_with_its_own_search_replaces_the_walk() -> None:
    s = QuerySession()
    job = s.start("meals?", "hr")
    shown = _result()
    s.on_searched(job, shown)
    same = s.on_answered(job, Answer("meals?", "30 euros [1]", [Citation(1, _hit())], True, search=shown))
    assert same is not None and same.trace is None  # the walk on screen is already this one
    adaptive = _result("meals? (sub-question)")
    update = s.on_answered(job, Answer("meals?", "30 euros", [], True, search=adaptive))
    assert update is not None and update.trace is adaptive.trace and s.last_search is adaptive


def test_look_here_asks_the_same_question_with_the_branch_forced() -> None:
    s = QuerySession()
    assert s.look_here(_candidate(9)) is None
    s.start("meals?", "hr")
    assert s.look_here(_candidate(9)) == ("meals?", "hr", [9])


def test_replay_and_export_follow_what_was_found() -> None:
    s = QuerySession()
    job = s.start("meals?", "hr")
    assert s.replay_trace() is None and not s.can_export()
    with pytest.raises(ValueError, match="nothing to export"):
        s.export_markdown()
    s.on_searched(job, _result(levels=0))
    assert s.replay_trace() is None  # nothing to animate
    s.on_searched(job, _result(levels=2))
    assert s.replay_trace() is not None and s.export_markdown().startswith("# meals?")
    s.on_answered(job, Answer("meals?", "Up to 30 euros a day. [1]", [Citation(1, _hit())], True))
    assert "Up to 30 euros a day." in s.export_markdown()
    s.start("holidays?", "hr")  # a new question forgets the old answer
    assert not s.can_export()


# --------------------------------------------------------------------------- IngestLedger
def test_ledger_pairs_outcomes_with_their_jobs() -> None:
    ledger = IngestLedger()
    a, b = object(), object()
    report = IngestReport("hr", [FileResult("/a.pdf", "added", "ok"), FileResult("/b.pdf", "failed", "error")],
                          seconds=1.25)
    ledger.done(a, report)
    ledger.cancelled(b)
    out_b, out_a = ledger.finished(b), ledger.finished(a)
    assert out_b.kind == "cancelled" and out_b.status()[0].startswith("Ingest cancelled")
    assert out_a.report is report
    assert out_a.status() == ("hr: 1 added, 1 failed · 1 need attention · 1.2 s", 15000)


def test_ledger_reports_errors_outside_a_job_and_unexplained_ends() -> None:
    ledger = IngestLedger()
    ledger.error("disk full")
    job = object()
    assert ledger.finished(job).status() == ("Ingest failed: disk full", 15000)
    assert ledger.finished(job).status() == ("Ingest failed: stopped", 15000)  # no outcome at all
    removal = object()
    ledger.done(removal, None)  # a removal job has no report
    assert ledger.finished(removal).status() == ("Library updated", 8000)


# --------------------------------------------------------------------------- LibraryLookup (real SQLite)
@pytest.fixture
def lookup(tmp_path: Path):
    store = Store(tmp_path / "lib.db")
    coll = store.collection("hr")
    passages = [ParsedNode(kind="passage", title="", text=t, location=Location(page=1))
                for t in ("Meals are refunded.", "Taxis need a receipt.")]
    doc = ParsedDocument(title="Travel", format="docx", pages=1,
                         children=[ParsedNode(kind="section", title="Claims", children=passages)])
    store.write_document(coll.id, "/docs/travel.docx", FileMeta(1, 1.0, "x"), doc)
    rows = store.conn.execute("SELECT id, kind FROM nodes WHERE document_id IS NOT NULL ORDER BY id").fetchall()
    ids = {kind: [i for i, k in rows if k == kind] for kind in ("document", "section", "passage")}
    yield LibraryLookup(store), ids
    store.close()


def test_lookup_turns_a_passage_row_into_a_hit_with_its_neighbours(lookup) -> None:
    lk, ids = lookup
    assert not lk.is_empty()
    first, second = ids["passage"]
    hit = lk.for_candidate(_candidate(second, "passage"))
    assert isinstance(hit, Hit) and hit.text == "Taxis need a receipt." and hit.path == "/docs/travel.docx"
    assert lk.context(hit) == ["Meals are refunded.", "Taxis need a receipt."]
    assert lk.context(_hit(first, path="/docs/x.pdf")) == []  # a PDF is shown as its page
    known = _hit(first)
    assert lk.for_candidate(_candidate(first, "passage"), [known]) is known  # the search's own hit first


def test_lookup_shows_what_the_model_read_for_other_nodes(lookup) -> None:
    lk, ids = lookup
    shown = lk.for_candidate(_candidate(ids["section"][0]))
    assert shown == NodeText("Claims (section)", "how to claim", "/docs/travel.docx")
    assert lk.hit_for_node(999_999) is None
    gone = lk.for_candidate(_candidate(999_999))
    assert isinstance(gone, NodeText) and gone.path is None
