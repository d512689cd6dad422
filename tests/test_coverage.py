"""What the not-found rule reads (core/answers/coverage.py, core/answers/answer.py's weak_evidence): the key-term
coverage of the hits (pure functions), and the question's key terms the library holds nowhere (a real SQLite
library in memory; the encoder's cosine scripted). Through the CLI on the sample with the real encoder:
tests/test_sample_answers.py."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

import numpy as np
import pytest

from shelfwise.core.answers.answer import weak_evidence
from shelfwise.core.answers.coverage import (
    absent_terms,
    index_tokens,
    key_coverage,
    key_terms,
    subject_absent,
)
from shelfwise.core.answers.tuning import EMBEDDINGGEMMA
from shelfwise.core.navigation.trace import Hit, Location
from shelfwise.core.store.db import Store
from tests.handbook_store import handbook_store

LEAVE = Hit(1, 1, "Full-time employees receive 27 days of paid annual leave per calendar year.", 0.9, "/h.pdf",
            "Employee Handbook", ["3 Leave", "3.1 Annual leave"], Location(page=5))
PARKING = Hit(2, 2, "The Rotterdam office has 12 parking spaces in the underground garage.", 0.8, "/f.md",
              "Facilities Guide", ["Parking"], Location(line=30))


def test_key_terms_leave_out_what_kind_of_answer_is_wanted() -> None:
    assert key_terms("How many days of annual leave do I get?") == {"day", "annua", "leave"}
    assert key_terms("I moved in March. How long is the notice period?") == {"notic", "perio"}  # the asking sentence


def test_coverage_counts_the_terms_the_top_passages_hold_with_their_headings() -> None:
    assert key_coverage("How many days of annual leave do I get?", [LEAVE]) == 1.0
    assert key_coverage("How many parking spaces are there for bicycles?", [PARKING]) == 2 / 3
    assert key_coverage("What is the sabbatical policy?", [LEAVE, PARKING]) == 0.0
    assert key_coverage("What?", [LEAVE]) == 1.0  # no key terms: nothing to miss


def test_the_rule_says_not_found_only_when_terms_are_missing_and_the_cosine_is_not_high() -> None:
    tuning = replace(EMBEDDINGGEMMA, covered_min=0.5, covered_max_cosine=0.6)
    low, high = {1: 0.45, 2: 0.40}, {1: 0.70, 2: 0.65}
    hits = [LEAVE, PARKING]
    assert weak_evidence(hits, low, tuning=tuning, question="What is the sabbatical policy?")
    assert not weak_evidence(hits, low, tuning=tuning, question="How many days of annual leave do I get?")
    # a question in another language shares no words with the documents: a high cosine keeps it found
    assert not weak_evidence(hits, high, tuning=tuning, question="Wie viele Urlaubstage bekomme ich?")
    assert not weak_evidence(hits, low, tuning=tuning)  # without the question, the old rule alone


HANDBOOK = ["Full-time employees receive 27 days of paid annual leave per calendar year.",
            "The passphrase of a Northwind account has at least 14 characters.",
            "Accommodation abroad is booked through the travel agency.",
            "What is allowed at the office is set out in the code of conduct."]


@pytest.fixture
def store() -> Iterator[Store]:
    s = handbook_store(HANDBOOK)
    yield s
    s.close()


def test_a_key_term_the_library_holds_nowhere_is_absent(store: Store) -> None:
    cid = store.collection("default").id
    a = absent_terms(store, "What is the dress code at the office?", cid)
    assert a.keys == ("dress",) and a.key_count == 3 and 0.5 < a.present < 1.0
    # words held in a passage, a title or a heading, in another form (plural, stem) are not absent
    assert absent_terms(store, "How many days of annual leave does an employee get?", cid).keys == ()
    assert absent_terms(store, "Is leave in the handbook?", cid).keys == ()
    # a misspelt word one edit from a held one is not absent; a short word one edit from another still is
    assert absent_terms(store, "How long must a pasphrase be?", cid).keys == ()
    assert absent_terms(store, "Who books accomodation abroad?", cid).keys == ()
    assert absent_terms(store, "How do I book a desk?", cid).keys == ("desk",)
    # a question in another language shares almost none of its words with the library
    assert absent_terms(store, "Wie viele Urlaubstage bekomme ich?", cid).present == 0.0
    assert index_tokens("Accomodation") == ["accomod"]


def test_the_full_text_index_drives_the_look_up_of_a_word(store: Store) -> None:
    # session 29: with a plain JOIN, SQLite walked every node of the collection and asked the index of each: ~0.9 s
    # at 10^5 passages for each word the library does not hold (the query plan is what such a word costs)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    try:
        absent_terms(store, "What is the dress code at the office?", store.collection("default").id)
    finally:
        store.conn.set_trace_callback(None)
    looked_up = [s for s in statements if "MATCH" in s or "i.term" in s]
    assert looked_up, statements
    for sql in looked_up:
        plan = store.conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
        first = str(plan[0][-1])
        assert first.startswith("SCAN nodes_fts") or "shelfwise_fts_instances" in first, (sql, plan)


class Scripted:
    """An encoder whose query vectors are scripted: the question and the question without its absent words are
    ``keep`` apart in cosine."""

    def __init__(self, keep: float) -> None:
        self.keep = keep

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.array([[1.0, 0.0], [self.keep, (1 - self.keep ** 2) ** 0.5]])[: len(texts)]


def test_the_absent_subject_rule_needs_the_question_to_change_without_the_term(store: Store) -> None:
    tuning = replace(EMBEDDINGGEMMA, absent_min_present=0.6, absent_max_keep=0.8, absent_max_cosine=0.5)
    hit = Hit(store.passages()[0].id, store.passages()[0].document_id, HANDBOOK[0], 0.9, "/handbook.md",
              "Employee Handbook", ["Leave"], Location(line=2))
    question, cos = "What is the dress code at the office?", {hit.node_id: 0.4}
    assert subject_absent(store, Scripted(0.6), question, [hit], min_present=0.6, max_keep=0.8)  # type: ignore[arg-type]
    assert weak_evidence([hit], cos, tuning=tuning, question=question, store=store, embedder=Scripted(0.6))  # type: ignore[arg-type]
    # the absent words only dress the question: it keeps its meaning without them
    assert not weak_evidence([hit], cos, tuning=tuning, question=question, store=store, embedder=Scripted(0.95))  # type: ignore[arg-type]
    # a close passage keeps it found; so does the rule switched off (MiniLM's values) and a question in another
    # language
    assert not weak_evidence([hit], {hit.node_id: 0.6}, tuning=tuning, question=question, store=store,
                             embedder=Scripted(0.6))  # type: ignore[arg-type]
    assert not weak_evidence([hit], cos, tuning=replace(tuning, absent_max_keep=0.0), question=question,
                             store=store, embedder=Scripted(0.6))  # type: ignore[arg-type]
    assert not weak_evidence([hit], cos, tuning=tuning, question="Was ist die Kleiderordnung im Büro?", store=store,
                             embedder=Scripted(0.6))  # type: ignore[arg-type]
