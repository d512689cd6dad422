"""The keyword ranking at scale (``core/store/ranking.py``): a question's commonest words are not scored for rows
that match only them, when that cannot change the best rows, and every ranking returns what the one joined
statement returns. Real SQLite and FTS5; text of English stop words and made-up words of Zipf-like frequency."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from shelfwise.core.store import ranking
from shelfwise.core.store.db import Store
from shelfwise.core.store.textutil import fts_query

STOP = ["the", "of", "and", "is", "what", "in"]


def _library(path: Path, n: int = 3000) -> tuple[Store, int, list[str]]:
    rng = np.random.default_rng(7)
    vocab = [f"w{i}x" for i in range(3000)]
    weights = 1.0 / np.arange(1, len(vocab) + 1)
    weights /= weights.sum()
    store = Store(path)
    coll = store.collection("c")
    rows = []
    for k in range(n):
        words = list(rng.choice(vocab, size=20, p=weights)) + [w for w in STOP if rng.random() < 0.8]
        rng.shuffle(words)
        rows.append((k + 10, coll.id, None, coll.root_node_id, "passage", k, 1, "", "", " ".join(words), "{}",
                     None, "[]", ""))
    # section titles that hold the rare words too: rows the kind filter must drop
    for k in range(200):
        rows.append((n + 10 + k, coll.id, None, coll.root_node_id, "section", n + k, 1, f"{vocab[40 + k % 5]} the",
                     "", "", "{}", None, "[]", ""))
    with store.transaction():
        store.conn.executemany(
            "INSERT INTO nodes(id, collection_id, document_id, parent_id, kind, ordinal, depth, title, description, "
            "text, location, page, heading_path, heading_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    return store, coll.id, vocab


def _joined(conn: sqlite3.Connection, match: str, limit: int, cid: int, docs: list[int] | None = None,
            ) -> list[tuple[int, float]]:
    where, params = ranking._after_match(("passage",), cid, docs)
    return [(int(i), -float(s)) for i, s in conn.execute(
        f"SELECT n.id, bm25(nodes_fts) FROM nodes_fts JOIN nodes n ON n.id = nodes_fts.rowid "
        f"WHERE nodes_fts MATCH ? {where} ORDER BY bm25(nodes_fts) LIMIT ?", (match, *params, limit))]


def _same(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> bool:
    """The same scores in the same order, and the same rows apart from equal scores at the cut."""
    sa, sb = [round(s, 9) for _, s in a], [round(s, 9) for _, s in b]
    return sa == sb and (not sa or {i for i, s in a if round(s, 9) > sa[-1]} == {i for i, s in b
                                                                                    if round(s, 9) > sb[-1]})


def _statements(conn: sqlite3.Connection, run) -> list[str]:  # type: ignore[no-untyped-def]
    """The statements a call runs, with their values."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        run()
    finally:
        conn.set_trace_callback(None)
    return seen


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    store, cid, vocab = _library(tmp_path_factory.mktemp("lex") / "lib.db")
    yield store, cid, vocab
    store.close()


def _questions(vocab: list[str]) -> list[str]:
    rng = np.random.default_rng(3)
    out = []
    for _ in range(40):
        rare = rng.choice(vocab[20:], size=2, replace=False)
        common = rng.choice(vocab[:20], size=1)
        out.append(f"What is the {rare[0]} of the {common[0]} and {rare[1]} in it?")
    out += [f"the {vocab[0]} of {vocab[1]}", f"{vocab[40]} {vocab[41]}", "the of and", f"{vocab[2]} {vocab[2999]}"]
    return out


def test_every_ranking_is_the_joined_statements(library, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    store, cid, vocab = library
    monkeypatch.setattr(ranking, "SPLIT_MIN_POSTINGS", 0)  # the two-part ranking tried at this size too
    split = 0
    for limit in (5, 50, 200):
        for q in _questions(vocab):
            match = fts_query(q)
            assert match is not None
            got = ranking.rank(store.conn, match, limit, ("passage",), cid, None)
            assert _same(got, _joined(store.conn, match, limit, cid)), (q, limit)
            where, params = ranking._after_match(("passage",), cid, None)
            terms = re.findall(r'"[^"]*"', match)
            stats = ranking._term_stats(store.conn, terms)
            split += stats is not None and ranking._rank_split(store.conn, terms, limit, where, params,
                                                               stats) is not None
            docs = list(range(0, 40))
            scoped = ranking.rank(store.conn, match, limit, ("passage",), cid, docs)
            assert _same(scoped, _joined(store.conn, match, limit, cid, docs))
    assert split >= 60  # most stop-word questions are ranked in two parts (the check above holds for them)


def test_stop_words_are_not_scored_for_every_row(library, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """A question of two rarer words (each in more rows than asked for) among stop words: before, every row
    holding "the" was scored (the joined statement ranks the whole OR); now only the rows holding a rare word
    are."""
    store, cid, vocab = library
    monkeypatch.setattr(ranking, "SPLIT_MIN_POSTINGS", 0)
    match = fts_query(f"What is the {vocab[150]} of the {vocab[200]}?")
    assert match is not None
    ran = _statements(store.conn, lambda: ranking.rank(store.conn, match, 20, ("passage",), cid, None))
    scored = [s for s in ran if "bm25(" in s]
    assert scored
    # no statement scores the rows of the stop words alone: each one's MATCH requires a rare word
    for statement in scored:
        assert f"'{match}'" not in statement
        expression = re.search(r"MATCH '([^']*)'", statement)
        assert expression is not None and not expression.group(1).startswith('"What"'), statement
        assert vocab[150] in expression.group(1) or vocab[200] in expression.group(1)


def test_section_titles_crowding_the_top_fall_back_to_the_join(library) -> None:  # type: ignore[no-untyped-def]
    """The index's best rows for these words are section titles (the kind filter drops them): the ranking still
    returns the best passages."""
    store, cid, vocab = library
    match = fts_query(f"{vocab[40]} {vocab[41]} {vocab[42]}")
    assert match is not None
    got = ranking.rank(store.conn, match, 10, ("passage",), cid, None)
    assert got and _same(got, _joined(store.conn, match, 10, cid))
    top = store.conn.execute("SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH ? ORDER BY bm25(nodes_fts) "
                             "LIMIT 70", (match,)).fetchall()
    kinds = {k for (k,) in store.conn.execute(
        f"SELECT kind FROM nodes WHERE id IN ({','.join(str(r[0]) for r in top)})")}
    assert "section" in kinds  # the case is the one meant: titles among the index's best rows


@pytest.fixture(scope="module")
def even_library(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Words that are all about as common (each in ~5% of the rows, as the growth libraries' synthetic words):
    the two-part ranking has no commonest words to leave out."""
    rng = np.random.default_rng(11)
    vocab = [f"e{i}q" for i in range(300)]
    store = Store(tmp_path_factory.mktemp("even") / "lib.db")
    coll = store.collection("c")
    rows = []
    for k in range(4000):
        words = list(rng.choice(vocab, size=int(rng.integers(8, 24))))
        rows.append((k + 10, coll.id, None, coll.root_node_id, "passage", k, 1, "", "", " ".join(words), "{}",
                     None, "[]", ""))
    for k in range(100):  # section titles of question words: rows the kind filter drops
        rows.append((4010 + k, coll.id, None, coll.root_node_id, "section", 4000 + k, 1,
                     " ".join(vocab[k % 7:k % 7 + 4] * 3), "", "", "{}", None, "[]", ""))
    with store.transaction():
        store.conn.executemany(
            "INSERT INTO nodes(id, collection_id, document_id, parent_id, kind, ordinal, depth, title, description, "
            "text, location, page, heading_path, heading_text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    yield store, coll.id, vocab
    store.close()


def _even_questions(vocab: list[str]) -> list[str]:
    rng = np.random.default_rng(5)
    out = [" ".join(rng.choice(vocab, size=int(rng.integers(3, 9)), replace=False)) for _ in range(30)]
    return [*out, " ".join(vocab[:8]), " ".join(vocab[2:6])]


def test_rows_of_one_word_are_not_scored_when_the_words_are_equally_common(  # type: ignore[no-untyped-def]
        even_library, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ranking is the joined statement's; most of them come from the rows holding two words or more (the
    rows holding one are never scored), and a statement that scores does so only for those rows."""
    store, cid, vocab = even_library
    monkeypatch.setattr(ranking, "SPLIT_MIN_POSTINGS", 0)
    restricted = 0
    for limit in (5, 10, 40):
        for q in _even_questions(vocab):
            match = fts_query(q)
            assert match is not None
            ran = _statements(store.conn, lambda m=match, k=limit: ranking.rank(store.conn, m, k, ("passage",),
                                                                                cid, None))
            got = ranking.rank(store.conn, match, limit, ("passage",), cid, None)
            assert _same(got, _joined(store.conn, match, limit, cid)), (q, limit)
            if any("+rowid IN" in s for s in ran) and not any(f"MATCH '{match}' ORDER BY" in s for s in ran):
                restricted += 1  # ranked from the rows of two words or more, and not again in whole
    assert restricted >= 20


def test_the_check_falls_back_to_the_whole_ranking(even_library, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Tried for every question and limit (the expectation that decides when to try set aside): where a row of one
    word could be among the best (few rows of several words, a wide limit), the whole expression is ranked, and
    every ranking is still the joined statement's."""
    store, cid, vocab = even_library
    monkeypatch.setattr(ranking, "SPLIT_MIN_POSTINGS", 0)
    monkeypatch.setattr(ranking, "_expected_at_least", lambda *args: float("inf"))
    where, params = ranking._after_match(("passage",), cid, None)
    fell_back = 0
    for limit in (5, 50, 400):
        for q in _even_questions(vocab):
            match = fts_query(q)
            assert match is not None
            terms = re.findall(r'"[^"]*"', match)
            stats = ranking._term_stats(store.conn, terms)
            assert stats is not None
            fell_back += ranking._rank_two_or_more(store.conn, match, terms, limit, where, params, stats) is None
            got = ranking.rank(store.conn, match, limit, ("passage",), cid, None)
            assert _same(got, _joined(store.conn, match, limit, cid)), (q, limit)
    assert fell_back >= 20  # the case is the one meant: the check refused
