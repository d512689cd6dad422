"""The key-term coverage the not-found rule reads (core/answers/coverage.py, core/answers/answer.py's
weak_evidence): pure functions over hits. Through the CLI on the sample: tests/test_sample_answers.py."""

from __future__ import annotations

from dataclasses import replace

from shelfwise.core.answers.answer import weak_evidence
from shelfwise.core.answers.coverage import key_coverage, key_terms
from shelfwise.core.answers.tuning import EMBEDDINGGEMMA
from shelfwise.core.navigation.trace import Hit, Location

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
