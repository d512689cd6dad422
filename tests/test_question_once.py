"""A question is ranked by its words and scanned against every passage vector once, however many parts of a turn
read it (the topic-shift test, then the walk): ``Store.search_ids`` keeps its last rankings while the library is
unchanged and ``Snapshot.passage_cos`` its last query vectors' cosines. At 10^6 passages each of those is most of
a second (docs/scale.md, "Session 21: 10^6 passages"). Real SQLite and the sample library; the hashing encoder of
tests/fakes.py (what is counted is logic, not model behaviour)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from shelfwise.core.navigation.snapshots import snapshot_for
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from shelfwise.core.store import ranking
from shelfwise.core.store import snapshot as snapshot_module
from shelfwise.resources import path as resource_path
from tests.fakes import HashEmbedder


@pytest.fixture(scope="module")
def shelf(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    settings = Settings(db_path=tmp_path_factory.mktemp("once") / "lib.db", use_calibration=False,
                        answer_generate=False)
    with Shelf(settings, embedder=HashEmbedder()) as s:
        s.ingest([resource_path("sample")], "default")
        yield s


def _counting(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[int]]:
    ranked: list[str] = []
    scanned: list[int] = []
    rank, scores = ranking.rank, snapshot_module.scores

    def counted_rank(conn, match, limit, *args):  # type: ignore[no-untyped-def]
        ranked.append(str(match))
        return rank(conn, match, limit, *args)

    def counted_scores(q, scale, x, *args, **kwargs):  # type: ignore[no-untyped-def]
        scanned.append(len(q))
        return scores(q, scale, x, *args, **kwargs)

    monkeypatch.setattr(ranking, "rank", counted_rank)
    monkeypatch.setattr(snapshot_module, "scores", counted_scores)
    return ranked, scanned


def test_a_conversations_new_question_is_ranked_and_scanned_once(shelf, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    conv, _, _ = shelf.ask_in_conversation(0, "What is the dress code at the office?", "default")
    ranked, scanned = _counting(monkeypatch)
    question = "How many days of paid annual leave do new employees receive each year?"
    _, turn, answer = shelf.ask_in_conversation(conv.id, question, "default")
    assert answer.search is not None and answer.search.hits
    assert turn.reading is not None and turn.reading.mode != "followup"  # read alone: the walk reads these words
    n_passages = len(snapshot_for(shelf.store, shelf.store.collection("default").id,
                                  shelf.embedder.model_id).passage_ids)
    # the topic-shift test and the walk: one ranking of the question's words, one scan of the passages (before:
    # two rankings, two or three scans)
    assert len(ranked) == 1, ranked
    assert scanned.count(n_passages) == 1, scanned


def test_a_kept_ranking_is_dropped_when_the_library_changes(shelf) -> None:  # type: ignore[no-untyped-def]
    store = shelf.store
    cid = store.collection("default").id
    words = "annual leave days"
    first = store.search_ids(words, limit=20, collection_id=cid)
    assert first and store.search_ids(words, limit=5, collection_id=cid) == first[:5]
    wide = store.search_ids(words, limit=40, collection_id=cid)  # more than was kept: ranked again
    assert wide[:len(first)] == first or sorted(wide[:20]) == sorted(first)
    root = store.collection("default").root_node_id
    with store.transaction():
        store.conn.execute(
            "INSERT INTO nodes(collection_id, parent_id, kind, ordinal, depth, title, description, text, location, "
            "heading_path, heading_text) VALUES (?, ?, 'passage', 999, 1, '', '', ?, '{}', '[]', '')",
            (cid, root, "annual leave days annual leave days annual leave days"))
        new = int(store.conn.execute("SELECT max(id) FROM nodes").fetchone()[0])
    after = store.search_ids(words, limit=20, collection_id=cid)
    assert after[0][0] == new  # the write is seen: not the kept ranking
    with store.transaction():
        store.conn.execute("DELETE FROM nodes WHERE id = ?", (new,))


def test_kept_cosines_are_the_scans_and_read_only(shelf, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    snap = snapshot_for(shelf.store, shelf.store.collection("default").id, shelf.embedder.model_id)
    q = shelf.embedder.embed_query("travel allowance for a trip abroad")
    _, scanned = _counting(monkeypatch)
    a = snap.passage_cos(q)
    b = snap.passage_cos(q)
    both = snap.passage_cos(np.stack([q, q], axis=1))
    assert len(scanned) == 1
    fresh = snap.passage_cos(q, keep=False)
    assert len(scanned) == 2
    np.testing.assert_array_equal(a, fresh)
    np.testing.assert_array_equal(b, fresh)
    np.testing.assert_array_equal(both[:, 1], fresh)
    with pytest.raises(ValueError):
        a[0] = 1.0  # shared by every view of the snapshot: nobody may change it


def test_flattening_a_document_reads_its_sections_not_their_passages(tmp_path: Path) -> None:
    """The walk shows a document's sections in one level (``_descendant_sections``): it reads the sections' rows
    only (before: every passage under them too, 4,096 rows a question at 10^6 passages)."""
    import sys

    from shelfwise.core.navigation.navigator import _descendant_sections
    from shelfwise.core.store.db import Store
    from shelfwise.core.store.snapshot import build_snapshot

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "product"))
    from synthetic import build

    tree = build(tmp_path / "tree.db", 10_000)  # documents -> sections -> passages
    assert tree.kinds == ["document", "section", "passage"]
    store = Store(tmp_path / "tree.db")
    try:
        snap = build_snapshot(store, tree.collection_id, None)
        document = snap.nodes[snap.child_ids(snap.root)[0]]
        sections = _descendant_sections(snap, document)
        assert len(sections) == tree.fanout and all(s.kind == "section" for s in sections)
        assert [s.id for s in sections] == snap.child_ids(document.id)  # in reading order
        read = snap.nodes._made
        assert not [n for n in read.values() if n.kind == "passage"], "passage rows were read"
    finally:
        store.close()
