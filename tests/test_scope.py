"""Scope: the inline filters and the CLI options read once (core/navigation/scope.py), resolved on a real store, and
a scoped walk that never leaves its scope (the real bundled embedder, real SQLite)."""

from __future__ import annotations

import os
import shutil
import time
from datetime import date
from pathlib import Path

import pytest

from shelfwise.core.navigation.scope import (
    Scope,
    ScopeError,
    make_scope,
    match_expression,
    parse_date,
    parse_question,
    prepare_question,
    resolve_scope,
)
from shelfwise.resources import path as resource_path


# --------------------------------------------------------------------------- parsing (no store)
def test_inline_filters_phrases_and_excluded_words_are_taken_out() -> None:
    p = parse_question('in:handbook.pdf type:PPTX since:2025-01-01 until:2025-06 How much "annual leave" -parental?')
    assert p.text == 'How much "annual leave"?'
    assert p.scope.paths == ("handbook.pdf",) and p.scope.types == ("pptx",)
    assert p.scope.since is not None and p.scope.since.text == "2025-01-01"
    assert p.scope.until is not None and p.scope.until.end == time.mktime((2025, 7, 1, 0, 0, 0, 0, 0, -1))
    assert p.phrases == ("annual leave",) and p.excluded == ("parental",)
    assert p.lexical_match() == '(("how" OR "much" OR "annual" OR "leave") AND "annual leave") NOT "parental"'
    assert p.lexical_match(require_phrases=False) == \
        '(("how" OR "much" OR "annual" OR "leave") OR "annual leave") NOT "parental"'


def test_quoted_paths_repeated_filters_and_trailing_punctuation() -> None:
    p = parse_question('What is in in:"My Reports/q1.pdf" in:notes.md type:pdf type:word?')
    assert p.scope.paths == ("My Reports/q1.pdf", "notes.md") and p.scope.types == ("pdf", "docx")
    assert p.text == "What is in?"


def test_ordinary_text_is_left_alone() -> None:
    for q in ("Can I log in: from home?", "What is the e-mail policy?", "Meet at 10:30 in room 2-4?",
              "Is the wi-fi password -- the long one -- printed?"):
        p = parse_question(q)
        assert p.scope.is_empty() and not p.excluded and p.text == q, q


@pytest.mark.parametrize("question, key, accepts", [
    ("since:yesterdayish what changed?", "since", "YYYY-MM-DD"),
    ("until:2025-13-01 what changed?", "until", "YYYY-MM-DD"),
    ("type:pdfx leave", "type", "pdf, docx, pptx, xlsx, md, txt"),
    ("since:2025-06-01 until:2025-01 leave", "until", "on or after"),
])
def test_a_malformed_filter_names_itself_and_what_it_accepts(question: str, key: str, accepts: str) -> None:
    with pytest.raises(ScopeError) as info:
        parse_question(question)
    assert info.value.key == key and str(info.value).startswith(f"{key}:") and accepts in str(info.value)


def test_cli_options_are_checked_like_the_inline_form() -> None:
    s = make_scope(["a.pdf"], ["excel"], "2024", "today")
    assert s.types == ("xlsx",) and s.since is not None and s.until is not None
    with pytest.raises(ScopeError, match="type"):
        make_scope(types=["exe"])
    with pytest.raises(ScopeError, match="since"):
        make_scope(since="soonish")
    day = parse_date("7d", today=date(2025, 3, 10))
    assert time.localtime(day.start)[:3] == (2025, 3, 3)


def test_match_expression_requires_phrases_and_excludes_words() -> None:
    assert match_expression("leave", ["annual leave"], ["parental"]) == \
        '(("leave") AND "annual leave") NOT "parental"'
    assert match_expression("", [], ["x"]) is None  # FTS5 has no pure NOT
    # a Chinese phrase as the index's characters in order, its words as bigrams (core/languages.py)
    assert match_expression("年休假", ["年休假"]) == '("年 休" OR "休 假") AND "年 休 假"'


# --------------------------------------------------------------------------- a real library
@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """The sample, laid out in two folders with known modification dates, ingested with the real models."""
    from shelfwise.core.settings import Settings
    from shelfwise.core.shelf import Shelf

    root = tmp_path_factory.mktemp("scoped")
    docs = root / "docs"
    hr, it = docs / "hr", docs / "it"
    hr.mkdir(parents=True)
    it.mkdir()
    sample = resource_path("sample")
    for name in ("handbook.pdf", "travel-and-expenses.docx", "benefits-and-pay.xlsx", "new-starter-faq.txt"):
        shutil.copy(sample / name, hr / name)
    for name in ("it-security-onboarding.pptx", "facilities.md"):
        shutil.copy(sample / name, it / name)
    old = time.mktime((2024, 6, 15, 12, 0, 0, 0, 0, -1))
    new = time.mktime((2025, 3, 15, 12, 0, 0, 0, 0, -1))
    for f in docs.rglob("*.*"):
        stamp = old if f.name in ("handbook.pdf", "facilities.md") else new
        os.utime(f, (stamp, stamp))
    empty = root / "Reports"
    empty.mkdir()
    shelf = Shelf(Settings(db_path=root / "lib.db", answer_generate=False, embedder_path="minilm"))
    shelf.ingest([docs])
    yield shelf, docs, empty
    shelf.close()


def _names(shelf, scope: Scope, **kw) -> set[str]:
    cid = shelf.store.find_collection("default").id
    resolved = resolve_scope(shelf.store, cid, scope, **kw)
    return {Path(shelf.store.document(i).path).name for i in resolved.document_ids}


def test_each_filter_on_a_real_store(library) -> None:
    shelf, docs, _ = library
    every = {"handbook.pdf", "travel-and-expenses.docx", "benefits-and-pay.xlsx", "new-starter-faq.txt",
             "it-security-onboarding.pptx", "facilities.md"}
    assert _names(shelf, Scope()) == every
    assert _names(shelf, Scope(paths=(str(docs / "hr" / "handbook.pdf"),))) == {"handbook.pdf"}  # a file
    assert _names(shelf, Scope(paths=(str(docs / "it"),))) == {"it-security-onboarding.pptx", "facilities.md"}
    assert _names(shelf, Scope(paths=("handbook.pdf",))) == {"handbook.pdf"}  # a document's name in the library
    assert _names(shelf, Scope(paths=("it",))) == {"it-security-onboarding.pptx", "facilities.md"}  # a folder's
    assert _names(shelf, Scope(paths=("it",), types=("md",))) == {"facilities.md"}
    assert _names(shelf, make_scope(types=["pptx"])) == {"it-security-onboarding.pptx"}
    assert _names(shelf, make_scope(since="2025-01-01")) == every - {"handbook.pdf", "facilities.md"}
    assert _names(shelf, make_scope(until="2024-12")) == {"handbook.pdf", "facilities.md"}
    assert _names(shelf, make_scope(since="2024-06-15", until="2024-06-15")) == {"handbook.pdf", "facilities.md"}
    with pytest.raises(ScopeError, match=r"in:nowhere-at-all\.pdf"):
        _names(shelf, Scope(paths=("nowhere-at-all.pdf",)))


def test_a_scope_that_matches_nothing_says_so_and_searches_nothing(library) -> None:
    shelf, _, empty = library
    answer = shelf.ask(f"How many days of annual leave do I get? type:pptx in:{empty}")
    assert not answer.found and answer.citations == []
    assert answer.text == f"No documents match type:pptx in {empty}."
    result = shelf.search("leave", scope=make_scope(types=["pptx"], paths=[str(empty)]))
    assert result.hits == [] and result.trace.levels == [] and result.trace.notes == [answer.text]


@pytest.mark.parametrize("question, allowed", [
    ("How many days of annual leave do I get? in:handbook.pdf", {"handbook.pdf"}),
    ("How many days of annual leave do I get? type:pptx", {"it-security-onboarding.pptx"}),
    ("What is the daily meal allowance? in:it", {"it-security-onboarding.pptx", "facilities.md"}),
    ("Which VPN do I use? since:2025-01-01", {"travel-and-expenses.docx", "benefits-and-pay.xlsx",
                                               "new-starter-faq.txt", "it-security-onboarding.pptx"}),
    ("Where do I park? until:2024-12-31", {"handbook.pdf", "facilities.md"}),
])
def test_a_scoped_walk_never_leaves_its_scope(library, question: str, allowed: set[str]) -> None:
    shelf, _, _ = library
    prepared = prepare_question(shelf.store, "default", question)
    assert prepared.resolved is not None
    result = shelf.search(question)
    assert result.hits and {Path(h.path).name for h in result.hits} <= allowed
    assert result.trace.scope.endswith(f"{len(allowed)} of 6 documents")
    docs = prepared.resolved.document_ids
    for level in result.trace.levels:  # no branch outside the scope was even judged
        for c in level.candidates:
            node = shelf.store.node(c.node_id)
            assert node is not None and (node.document_id in docs or node.kind in ("collection", "cluster")), c.title


def test_the_same_question_unscoped_goes_elsewhere(library) -> None:
    """The scoped test above means something: unscoped, the annual-leave question finds the handbook."""
    shelf, _, _ = library
    result = shelf.search("How many days of annual leave do I get?")
    assert Path(result.hits[0].path).name == "handbook.pdf" and result.trace.scope == ""


def test_excluded_words_and_phrases_shape_the_walk(library) -> None:
    shelf, _, _ = library
    result = shelf.search('How much "parental leave" do I get? -birth')
    assert result.hits and all("birth" not in h.text.casefold() for h in result.hits)
    assert "-birth" in result.trace.scope
