"""Conversations without models: the migration (from an empty library and from the previous version), storage
of turns (each turn committed on its own, a killed process keeps the finished ones), citations of removed
documents, the rules on words (cues, rewrite), the reading's topic-shift test on vectors we make, the prior in
the walk, and the Markdown export. The behaviour with the real models is in tests/test_conversation_models.py."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from dataclasses import replace as with_rule
from pathlib import Path

import numpy as np
import pytest

from shelfwise.core.answers.extractive import share_held
from shelfwise.core.conversation.cues import (
    names_referent,
    own_words,
    points_back,
    rewrite,
    topic_of,
)
from shelfwise.core.conversation.export import REMOVED, conversation_markdown
from shelfwise.core.conversation.model import Conversation, Reading, Turn, TurnCitation
from shelfwise.core.conversation.reading import (
    SHIPPED,
    ReadingRule,
    alone_confidence,
    compose,
    prior_for,
    read,
    section_confidence,
)
from shelfwise.core.conversation.storage import ConversationStore, NoSuchConversation
from shelfwise.core.conversation.turn import trace_dict, trace_from_dict
from shelfwise.core.models.backend import EmbedderBase
from shelfwise.core.navigation.decision import DecisionModel
from shelfwise.core.navigation.trace import Candidate, Level, Trace
from shelfwise.core.store import fts
from shelfwise.core.store.db import FileMeta, Store
from shelfwise.core.store.migrations import MIGRATIONS, applied, migrate
from shelfwise.core.store.snapshot import Snapshot, build_snapshot
from shelfwise.core.store.vectors import quantize
from shelfwise.ingest.model import Location, ParsedDocument, ParsedNode


def _doc(title: str, *sections: tuple[str, list[str]]) -> ParsedDocument:
    return ParsedDocument(title=title, format="md", pages=1, children=[
        ParsedNode("section", head, location=Location(line=1),
                   children=[ParsedNode("passage", "", t, Location(line=i + 1)) for i, t in enumerate(texts)])
        for head, texts in sections])


def _library(tmp_path: Path) -> tuple[Store, int]:
    store = Store(tmp_path / "lib.db")
    coll = store.collection("default")
    store.write_document(coll.id, str(tmp_path / "handbook.md"), FileMeta(1, 1.0, "a" * 64), _doc(
        "Handbook", ("3.1 Annual leave", ["Full-time employees receive 27 days of paid annual leave."]),
        ("3.2 Requesting leave", ["All leave is requested in the LeaveDesk portal."])))
    store.write_document(coll.id, str(tmp_path / "travel.md"), FileMeta(1, 1.0, "b" * 64), _doc(
        "Travel", ("Hotels", ["Book hotels within the hotel cap for the city."])))
    return store, coll.id


def _turn(store: Store, question: str, passage_text: str) -> Turn:
    node = next(p for p in store.passages() if p.text.startswith(passage_text))
    doc = store.document(node.document_id or 0)
    assert doc is not None
    cite = TurnCitation(1, node.id, doc.id, doc.path, doc.title, list(node.heading_path), node.location,
                        passage_text)
    return Turn(-1, question, Reading("first", question, question), passage_text + " [1]", True, [cite],
                trace={"query": question, "levels": []}, hit_nodes=[node.id], hit_documents=[doc.id])


# ----------------------------------------------------------------------------- migration
def test_conversation_tables_from_an_empty_library_and_from_the_previous_version(tmp_path: Path) -> None:
    fresh = Store(tmp_path / "new.db")
    assert "0007_conversations" in fresh.migrations_applied
    assert {"conversations", "conversation_turns"} <= {
        r[0] for r in fresh.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    fresh.close()
    db = tmp_path / "old.db"
    conn = sqlite3.connect(str(db), isolation_level=None)
    fts.register(conn)  # the migration before it builds the full-text index through this function
    names = [n for n, _ in MIGRATIONS]
    migrate(conn, db, MIGRATIONS[: names.index("0007_conversations")])  # as the previous version left it
    conn.execute("INSERT INTO meta(key, value) VALUES ('kept', '\"yes\"')")
    conn.close()
    store = Store(db)
    assert store.migrations_applied[:2] == ["0007_conversations", "0008_turn_vectors"]
    assert store.backup_path is not None
    assert "0007_conversations" not in applied(sqlite3.connect(str(store.backup_path)))
    assert store.get_meta("kept") == "yes"
    conv = ConversationStore(store).create("default")
    assert ConversationStore(store).get(conv.id or 0).turns == []
    store.close()


# ----------------------------------------------------------------------------- storage
def test_turns_are_stored_reopened_listed_and_deleted(tmp_path: Path) -> None:
    store, _ = _library(tmp_path)
    convs = ConversationStore(store)
    conv = convs.create("default")
    convs.add_turn(conv, _turn(store, "How many days of annual leave?", "Full-time employees"))
    convs.add_turn(conv, _turn(store, "and how do I request it?", "All leave is requested"))
    again = convs.get(conv.id or 0)
    assert [t.position for t in again.turns] == [0, 1]
    assert again.title == "How many days of annual leave?"
    assert again.turns[1].citations[0].heading_path == ["3.2 Requesting leave"]
    assert again.turns[1].citations[0].location == Location(line=1)
    assert not any(c.missing for t in again.turns for c in t.citations)
    assert [(s.id, s.turns) for s in convs.list()] == [(conv.id, 2)]
    convs.delete(conv.id or 0)
    assert convs.list() == []
    with pytest.raises(NoSuchConversation, match="no conversation"):
        convs.get(conv.id or 0)
    with pytest.raises(NoSuchConversation):
        convs.delete(12345)
    store.close()


def test_a_citation_of_a_removed_document_says_so(tmp_path: Path) -> None:
    store, coll = _library(tmp_path)
    convs = ConversationStore(store)
    conv = convs.create("default")
    convs.add_turn(conv, _turn(store, "What is the hotel cap?", "Book hotels"))
    travel = next(d for d in store.documents(coll) if d.path.endswith("travel.md"))
    store.remove_document(travel.id)
    again = convs.get(conv.id or 0)
    assert again.turns[0].citations[0].missing
    md = conversation_markdown(again)
    assert REMOVED in md and "travel.md" in md and "> Book hotels" in md
    store.close()


KILLED = textwrap.dedent("""
    import os, signal, sys
    from shelfwise.core.store.db import Store
    from shelfwise.core.conversation.model import Reading, Turn
    from shelfwise.core.conversation.storage import ConversationStore
    store = Store(sys.argv[1])
    convs = ConversationStore(store)
    conv = convs.create("default")
    for q in ("first question?", "second question?"):
        convs.add_turn(conv, Turn(-1, q, Reading("first", q, q), "an answer", True))
    print(conv.id, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_finished_turns_survive_kill_9(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    Store(db).close()
    r = subprocess.run([sys.executable, "-c", KILLED, str(db)], capture_output=True, text=True, timeout=120)
    assert r.returncode == -signal.SIGKILL
    store = Store(db)
    conv = ConversationStore(store).get(int(r.stdout.split()[0]))
    assert [t.question for t in conv.turns] == ["first question?", "second question?"]
    store.close()


# ----------------------------------------------------------------------------- words
@pytest.mark.parametrize(("question", "cue"), [
    ("and how do I request it?", 1), ("What about Berlin?", 1), ("Who approves them?", 1),
    ("How many days of annual leave do employees get?", 0), ("OK, new question: what is the hotel cap?", -1),
    ("How do I order one?", 1), ("Is there one at the Lisbon studio too?", 1), ("And the ones in Lisbon?", 1),
    ("When does the one-time allowance become available again?", 0), ("Is one week of notice enough?", 0),
])
def test_words_that_point_back(question: str, cue: int) -> None:
    assert points_back(question) == cue


def test_rewrite_fills_in_the_referent() -> None:
    topic = topic_of(["3 Leave", "3.1 Annual leave"], "How many days of annual leave do employees get?")
    assert topic == "annual leave"
    assert rewrite("and how do I request it?", "How many days of annual leave?", topic) == \
        "How do I request annual leave?"
    assert rewrite("and in Berlin?", "What is the hotel cap in London?", "hotels") == \
        "What is the hotel cap in London? in Berlin?"
    assert rewrite("thanks — and what is the expenses limit for hotels?", "q", "annual leave") == \
        "what is the expenses limit for hotels? (annual leave)"


# ----------------------------------------------------------------------------- reading
class _Vectors(EmbedderBase):
    """An embedder for the reading's logic: a fixed vector per text (unit axes), nothing learnt."""

    model_id = "test-vectors"

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table

    def embed_query(self, text: str) -> np.ndarray:
        return self.table[text]


def _three_axes(tmp_path: Path) -> tuple[Store, Snapshot, tuple[int, int, int], list[Turn]]:
    """The library's snapshot with the leave, leave-request and hotel passages on three orthogonal axes (every other
    passage at zero), and a history of one turn that cited the leave passage."""
    store, coll = _library(tmp_path)
    snap = build_snapshot(store, coll, None)
    leave, request, hotel = (next(p.id for p in store.passages() if p.text.startswith(s))
                             for s in ("Full-time", "All leave", "Book hotels"))
    vecs = np.zeros((len(snap.passage_ids), 3), np.float32)
    for axis, nid in enumerate((leave, request, hotel)):
        vecs[snap.row_of[nid], axis] = 1.0
    snap.data.passage_q, snap.data.passage_scale = quantize(vecs)
    snap.data.dim = 3
    history = [_turn(store, "How many days of annual leave?", "Full-time employees")]
    return store, snap, (leave, request, hotel), history


def test_the_reading_follows_up_or_detects_a_topic_shift(tmp_path: Path) -> None:
    store, snap, (leave, request, hotel), history = _three_axes(tmp_path)
    vec = _Vectors({"and how do I request it?": np.array([0.2, 0.5, 0.3], np.float32),
                    "what is the hotel cap?": np.array([0.1, 0.1, 0.9], np.float32),
                    "How many days of annual leave?": np.array([1.0, 0.0, 0.0], np.float32)})
    rule = ReadingRule(text="rewrite", document_bonus=1.0, threshold=0.0, cue_weight=0.1)
    first, _ = read("How many days of annual leave?", [], snap, vec, rule)
    assert first.mode == "first" and first.query == "How many days of annual leave?" and not first.prior
    follow, _ = read("and how do I request it?", history, snap, vec, rule)
    assert follow.mode == "followup" and follow.query == "How do I request annual leave?"
    handbook_node = snap.document_of(leave)
    assert handbook_node is not None and follow.prior[handbook_node.id] == 1.0 and follow.prior[request] == 1.0
    shift, q_vec = read("what is the hotel cap?", history, snap, vec, rule)
    assert shift.mode == "shift" and shift.query == "what is the hotel cap?" and not shift.prior
    assert q_vec is not None and "elsewhere" in shift.why
    alone, _ = read("and how do I request it?", history, snap, vec, rule, alone=True)
    assert alone.mode == "alone" and alone.query == "and how do I request it?"
    assert compose("all", "and how?", history) == "How many days of annual leave? and how?"
    assert compose("answer", "and how?", history) == "Full-time employees. and how?"
    sec_rule = ReadingRule(document_bonus=0.5, section_bonus=0.25)
    prior = prior_for(snap, history[0], sec_rule)
    # the document and all inside it +0.5, the cited passage's section and what it holds +0.25
    assert prior[handbook_node.id] == 0.5 and prior[request] == 0.5 and hotel not in prior
    assert prior[leave] == pytest.approx(0.75) and len(prior) == 5
    store.close()


def test_a_question_in_its_own_words_is_read_alone_even_beside_the_last_answer(tmp_path: Path) -> None:
    store, snap, _, history = _three_axes(tmp_path)
    own = "How many paid bereavement days does the handbook allow?"  # same document, 5 content words, no pointer
    vec = _Vectors({own: np.array([0.6, 0.8, 0.0], np.float32),
                    "and how do I request it?": np.array([0.2, 0.5, 0.3], np.float32),
                    "OK, new question: how do I request leave?": np.array([0.2, 0.9, 0.1], np.float32),
                    "How many days of annual leave?": np.array([1.0, 0.0, 0.0], np.float32)})
    margins_only = ReadingRule(threshold=-0.3, cue_weight=0.0, lexical_weight=0.0, mix=0.5)
    assert read(own, history, snap, vec, margins_only)[0].mode == "followup"  # inside the last answer's document
    words = ReadingRule(threshold=-0.3, cue_weight=0.0, lexical_weight=0.0, mix=0.5, own_words=4)
    reading, q_vec = read(own, history, snap, vec, words)
    assert reading.mode == "shift" and "words of its own" in reading.why and not reading.prior
    assert q_vec is not None and np.allclose(q_vec, vec.table[own])  # the walk reads the question's own vector
    follow, mixed = read("and how do I request it?", history, snap, vec, words)
    assert follow.mode == "followup" and mixed is not None
    want = vec.table["and how do I request it?"] + 0.5 * vec.table["How many days of annual leave?"]
    assert np.allclose(mixed, want / np.linalg.norm(want), atol=1e-6)
    assert read("OK, new question: how do I request leave?", history, snap, vec, words)[0].mode == "shift"
    store.close()


def test_a_short_question_pointing_nowhere_is_read_alone_when_the_library_is_sure_of_its_answer(
        tmp_path: Path) -> None:
    store, snap, _, history = _three_axes(tmp_path)
    sure = "How do I request days?"  # no pointer, 2 content words, its answer in the last answer's document
    unsure = "Which of them applies?"  # points back: the margins decide, however sure
    vague = "Any exceptions?"  # no pointer, 1 content word, nothing stands out
    vec = _Vectors({sure: np.array([0.0, 1.0, 0.0], np.float32), unsure: np.array([0.0, 1.0, 0.0], np.float32),
                    vague: np.array([0.58, 0.58, 0.57], np.float32),
                    "How many days of annual leave?": np.array([1.0, 0.0, 0.0], np.float32)})
    focused, diffuse = (alone_confidence(snap, vec.table[q], {}, DecisionModel()) for q in (sure, vague))
    assert focused > diffuse
    margins_only = ReadingRule(threshold=-0.3, lexical_weight=0.0, mix=0.5, own_words=4)
    assert read(sure, history, snap, vec, margins_only)[0].mode == "followup"  # inside the last answer's document
    rule = with_rule(margins_only, confidence=(focused + diffuse) / 2)
    reading, q_vec = read(sure, history, snap, vec, rule)
    assert reading.mode == "shift" and reading.scores["confidence"] == pytest.approx(focused, abs=1e-4)
    assert not reading.prior and q_vec is not None and "sure" in reading.why
    assert read(vague, history, snap, vec, rule)[0].mode == "followup"  # not sure alone: read with the history
    pointing = read(unsure, history, snap, vec, rule)[0]
    assert pointing.mode == "followup" and "confidence" not in pointing.scores
    store.close()


def test_own_word_coverage_uses_the_extractive_matcher_and_names_referents() -> None:
    stems = own_words("Thanks. And who founded Northwind Labs?")  # the leading "thanks - and" is not its own
    assert stems == ["found", "north", "labs"]  # the extractive answer's keys: content words cut to 5 letters
    assert share_held(stems, "Northwind Labs: the founders") == 1.0
    assert share_held(own_words("And how do I register my claims?"), "Registration of a claim") == 1.0
    assert share_held(stems, "Founded in Lisbon") == pytest.approx(1 / 3)
    assert share_held(["cat"], "concatenate") == 0.0 and share_held([], "anything") == 0.0
    japanese = own_words("年次休暇は何日ですか？")  # an unsegmented script: its character bigrams
    assert share_held(japanese, "年次休暇は27日です") > 0.5 and share_held(japanese, "出張の日当") == 0.0
    assert names_referent("And who approves it?") and names_referent("How do I order one?")
    assert not names_referent("And who founded Northwind Labs?") and not names_referent("Daily working window?")


def test_coverage_gap_reads_alone_a_follow_up_whose_reading_lost_the_questions_own_words(tmp_path: Path) -> None:
    store, snap, (leave, _, hotel), history = _three_axes(tmp_path)
    moved = "And where do I book hotels?"  # opens with "And", names what it asks: the hotel passage has its words
    pointing = "And where do I book them?"  # a pronoun: the history says what it asks, the test is not applied
    vec = _Vectors({q: np.array([0.7, 0.0, 0.7], np.float32) for q in (moved, pointing)}
                   | {"How many days of annual leave?": np.array([1.0, 0.0, 0.0], np.float32)})

    def search(text: str) -> dict[int, float]:  # alone: the hotel passage; the composed text: the leave passage
        return {hotel: 9.0} if text in (moved, pointing) else {leave: 9.0}

    assert read(moved, history, snap, vec, with_rule(SHIPPED, coverage_gap=None), search=search)[0].mode == "followup"
    rule = with_rule(SHIPPED, coverage_gap=0.5)
    reading, q_vec = read(moved, history, snap, vec, rule, search=search)
    assert reading.mode == "shift" and not reading.prior and q_vec is not None
    assert reading.scores["coverage_alone"] == 1.0 and reading.scores["coverage_followup"] == 0.0
    assert "own words" in reading.why
    assert read(pointing, history, snap, vec, rule, search=search)[0].mode == "followup"
    assert read(moved, history, snap, vec, with_rule(rule, coverage_words=3), search=search)[0].mode == "followup"
    store.close()


def test_middle_reading_keeps_the_documents_but_reads_the_questions_own_words(tmp_path: Path) -> None:
    store, snap, (leave, request, hotel), history = _three_axes(tmp_path)
    moved = "And how do I request days?"  # opens with "And", two own words, its answer in the last answer's document
    pointing = "And how do I request it?"  # a pronoun: the history says what it asks, read as what ships reads it
    short = "Request days?"  # no pointer, no continuing opening
    first = "How many days of annual leave?"
    vec = _Vectors({moved: np.array([0.0, 1.0, 0.0], np.float32), pointing: np.array([0.0, 1.0, 0.0], np.float32),
                    short: np.array([0.0, 1.0, 0.0], np.float32), first: np.array([1.0, 0.0, 0.0], np.float32)})
    shipped, mixed = read(moved, history, snap, vec, SHIPPED)
    assert shipped.mode == "followup" and shipped.query == f"{first} {moved}" and mixed is not None
    rule = with_rule(SHIPPED, middle_words=2)
    reading, q_vec = read(moved, history, snap, vec, rule)
    handbook = snap.document_of(leave)
    assert handbook is not None
    assert reading.mode == "followup" and reading.query == moved and "own words" in reading.why
    assert q_vec is not None and np.allclose(q_vec, vec.table[moved])  # its own vector, no mix
    assert reading.vector is not None and np.allclose(reading.vector, vec.table[moved])  # kept for the next turn
    assert reading.prior[handbook.id] == 1.0 and reading.prior[request] == 1.0 and hotel not in reading.prior
    assert read(moved, history, snap, vec, with_rule(rule, middle_words=3))[0].query == shipped.query  # 2 own words
    assert read(pointing, history, snap, vec, rule)[0].query == f"{first} {pointing}"  # names a referent
    assert read(short, history, snap, vec, with_rule(rule, confidence=0.0, threshold=-9.0))[0].query == short
    store.close()


def test_middle_gap_reads_in_the_middle_only_a_question_that_leads_to_another_section(tmp_path: Path) -> None:
    store, snap, _, history = _three_axes(tmp_path)
    moved = "And how do I request days?"  # alone: the leave-request section, not the annual-leave one it answered from
    stays = "And how many days do part-timers get?"  # alone: the annual-leave section itself
    first = "How many days of annual leave?"
    vec = _Vectors({moved: np.array([0.0, 1.0, 0.0], np.float32), stays: np.array([1.0, 0.1, 0.0], np.float32),
                    first: np.array([1.0, 0.0, 0.0], np.float32)})
    sec, rest = section_confidence(snap, vec.table[moved], {}, history[0], DecisionModel())
    assert rest > sec
    rule = with_rule(SHIPPED, middle_words=2, middle_gap=(rest - sec) / 2)
    reading = read(moved, history, snap, vec, rule)[0]
    assert reading.query == moved and reading.scores["rest_confidence"] == pytest.approx(rest, abs=1e-4)
    assert read(moved, history, snap, vec, with_rule(rule, middle_gap=rest - sec + 0.01))[0].query == f"{first} {moved}"
    s_sec, s_rest = section_confidence(snap, vec.table[stays], {}, history[0], DecisionModel())
    assert s_sec > s_rest and read(stays, history, snap, vec, rule)[0].query == f"{first} {stays}"
    store.close()


class _Counted(_Vectors):
    """The same fixed vectors, with every text it was asked to embed written down."""

    def __init__(self, table: dict[str, np.ndarray], model_id: str = "test-vectors") -> None:
        super().__init__(table)
        self.model_id = model_id
        self.asked: list[str] = []

    def embed_query(self, text: str) -> np.ndarray:
        self.asked.append(text)
        return self.table[text]


def test_a_reopened_conversation_mixes_the_stored_vector_without_embedding_the_last_query(tmp_path: Path) -> None:
    store, snap, _, _ = _three_axes(tmp_path)
    first_q, follow_q = "How many days of annual leave?", "and how do I request it?"
    table = {first_q: np.array([0.6, 0.0, 0.8], np.float32), follow_q: np.array([0.2, 0.5, 0.3], np.float32)}
    convs = ConversationStore(store)
    conv = convs.create("default")
    reading, walk_vec = read(first_q, [], snap, _Counted(table), ReadingRule(mix=0.5))
    assert walk_vec is None and reading.vector is not None and np.allclose(reading.vector, table[first_q])
    turn = _turn(store, first_q, "Full-time employees")
    turn.reading = reading
    convs.add_turn(conv, turn)
    store.close()
    store = Store(tmp_path / "lib.db")  # after a restart: the turn comes back from the database
    snap = Snapshot(snap.data, store)  # the same arrays, seen through the new store
    reopened = ConversationStore(store).get(conv.id or 0)
    kept = reopened.turns[0].reading
    assert kept.vector_model == "test-vectors" and kept.vector is not None
    assert np.allclose(kept.vector, table[first_q])
    fresh = _Counted(table)  # a new process: nothing kept in the embedder
    follow, mixed = read(follow_q, reopened.turns, snap, fresh, ReadingRule(threshold=-1.0, mix=0.5))
    assert follow.mode == "followup" and mixed is not None
    assert fresh.asked == [follow_q]  # the last query's vector came from the stored turn
    want = table[follow_q] + 0.5 * table[first_q]
    assert np.allclose(mixed, want / np.linalg.norm(want), atol=1e-6)
    other = _Counted(table, model_id="another-embedder")  # a vector of another embedder is not mixed in
    read(follow_q, reopened.turns, snap, other, ReadingRule(threshold=-1.0, mix=0.5))
    assert other.asked == [follow_q, first_q]
    store.close()


def test_a_stored_trace_comes_back_for_the_walk_view() -> None:
    cands = [Candidate(i, "passage", f"t{i}", "", 1 - i / 100, i < 2, features={"cos_max": 0.5})
             for i in range(60)]
    trace = Trace(query="q", levels=[Level(1, "passages", cands, tokens=3)], readout="fused", notes=["n"])
    d = trace_dict(trace)
    assert len(d["levels"][0]["candidates"]) == 40 and d["levels"][0]["judged_count"] == 60
    back = trace_from_dict(d)
    assert back.levels[0].candidates[0] == cands[0] and back.levels[0].tokens == 3 and back.notes == ["n"]
    assert len(back.levels[0].kept) == 2


def test_export_names_the_reading_and_the_sources(tmp_path: Path) -> None:
    store, _ = _library(tmp_path)
    conv = Conversation(1, "default", "Leave")
    first = _turn(store, "How many days of annual leave?", "Full-time employees")
    second = _turn(store, "and how do I request it?", "All leave is requested")
    second.reading = Reading("followup", "How do I request annual leave?", "and how do I request it?")
    conv.turns = [first, second]
    md = conversation_markdown(conv)
    assert "## 2. and how do I request it?" in md
    assert "*Read as a follow-up: How do I request annual leave?*" in md
    assert "[1] handbook.md, line 1, 3.2 Requesting leave" in md and "> All leave is requested" in md
    store.close()
    assert os.path.exists(tmp_path / "lib.db")
