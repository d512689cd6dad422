"""Sentence splitting and candidate building of the extractive answer (core/answers/extractive.py). The ranking
with the real embedder is checked on the sample in tests/test_answer_model.py; here the logic, with a hashed
bag-of-words embedder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from shelfwise.core.answers.extractive import (
    candidates,
    embedder_scorer,
    extract_answer,
    extract_text,
    list_end,
    passage_sentences,
    type_cue,
)
from shelfwise.core.answers.from_passages import widen_lists
from shelfwise.core.answers.types import Extracted
from shelfwise.core.navigation.trace import Hit
from shelfwise.core.store.db import Store
from shelfwise.core.store.types import FileMeta
from shelfwise.evaluation.datasets import conditionalqa_document
from shelfwise.ingest.model import Location
from tests.fakes import HashEmbedder


def hit(text: str, heading: str = "Parking", n: int = 1) -> Hit:
    return Hit(n, 1, text, 0.9, "/docs/f.md", "Facilities", ["Facilities Guide", heading], Location(line=n))


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in passage_sentences(text)]


def test_sentences_cut_at_ends_lines_and_bullets_but_not_wrapped_lines() -> None:
    text = ("The office has 12 spaces. Book a space in the ParkPal app by 16:00\non the previous working day.\n"
            "Report Phish button in the mail client\nNo button? Forward it to phish@example.org")
    assert sentences(text) == [
        "The office has 12 spaces.", "Book a space in the ParkPal app by 16:00\non the previous working day.",
        "Report Phish button in the mail client", "No button?", "Forward it to phish@example.org",
    ]


def test_table_rows_stay_whole_and_the_rule_row_is_skipped() -> None:
    text = "| City | Daily allowance |\n|---|---|\n| London | EUR 75 |\n| Paris | EUR 70 |"
    assert sentences(text) == ["| City | Daily allowance |", "| London | EUR 75 |", "| Paris | EUR 70 |"]
    cands = candidates([hit(text, "Per diems")])
    assert [c.text for c in cands] == ["| London | EUR 75 |", "| Paris | EUR 70 |"]
    assert cands[0].context == "| City | Daily allowance | | London | EUR 75 |"


def test_headings_and_faq_questions_are_context_not_answers() -> None:
    text = "4.3 Home office allowance\nQ: What time should I arrive?\nA: Come to reception at 09:00."
    cands = candidates([hit(text, "4.3 Home office allowance")])
    assert [c.text for c in cands] == ["A: Come to reception at 09:00."]
    assert "What time should I arrive?" in cands[0].context


def test_extract_picks_the_sentence_and_gives_its_offsets() -> None:
    hits = [hit("The office has 12 spaces in the garage. Book a space in the ParkPal app by 16:00.", n=1),
            hit("Visitors sign in at reception.", "Visitors", n=2)]
    got = extract_answer("I drive to work. How do I book a parking space in the app?", hits,
                         embedder_scorer(HashEmbedder()), sentences=1)
    assert [s.text for s in got] == ["Book a space in the ParkPal app by 16:00."]
    assert hits[0].text[got[0].start:got[0].end] == got[0].text and got[0].number == 1
    assert extract_text(got) == "Book a space in the ParkPal app by 16:00. [1]"
    assert extract_answer("anything?", [hit("")], embedder_scorer(HashEmbedder())) == []
    two = extract_answer("How do I book a parking space in the app?", hits, embedder_scorer(HashEmbedder()),
                         second_margin=9.0)
    assert len(two) == 2 and two[0].text == got[0].text and two[0].score >= two[1].score


def test_focus_question() -> None:
    from shelfwise.core.answers.extractive import focus_question

    assert focus_question("I am 67. I live in Wales. Can I claim? Thanks.") == "Can I claim?"
    assert focus_question("parking rules") == "parking rules"


def test_a_second_table_in_the_passage_is_read_with_its_own_header() -> None:
    text = ("| Band | Minimum |\n|---|---|\n| L7 | 110000 |\n| Pay item | When | Details |\n|---|---|---|\n"
            "| Holiday allowance | With the May salary | 8 percent |")
    cands = candidates([hit(text, "Salary bands")])
    assert [c.text for c in cands] == ["| L7 | 110000 |", "| Holiday allowance | With the May salary | 8 percent |"]
    assert cands[0].context.startswith("| Band | Minimum |")
    assert cands[1].context.startswith("| Pay item | When | Details |")


def test_type_cue_counts_what_the_question_asks_for() -> None:
    from shelfwise.core.answers.extractive import type_cue

    texts = ["It is paid at 75 percent.", "Paid with the May salary: 8 percent.", "No figure here."]
    assert list(type_cue("When is it paid and how much is it?", texts)) == [1.0, 2.0, 0.0]
    hours = ["A working week is 38 hours.", "Core hours are 10:00 to 15:00."]
    assert list(type_cue("What are the core hours?", hours)) == [0.0, 1.0]
    booking = ["The office has 12 parking spaces.", "Book a space in the app."]
    assert list(type_cue("How do you book a parking space?", booking)) == [0.0, 1.0]


def test_a_day_of_the_month_is_a_date_for_the_when_cue() -> None:
    # the short answer reads "the 25th of each month" as a date; so does the cue that shortlists sentences for "when"
    from shelfwise.core.answers.extractive import type_cue

    texts = ["Salaries are paid on the 25th of each month.", "| Monthly salary | 25th of each month |",
             "The payroll team answers within 2 working days."]
    assert list(type_cue("Wann wird das Gehalt gezahlt?", texts)) == [1.0, 1.0, 0.0]


def test_a_question_sharing_no_word_with_the_passages_has_every_sentence_read() -> None:
    # a German question over English passages: the cheap pre-score knows only the passages' rank and the "when" cue,
    # so the sentences with a date would fill the shortlist; the encoder reads them all and picks the pay day
    rows = "\n".join(f"| Item {i} | {i} April | Reviewed in spring |" for i in range(1, 16))
    passage = f"| Pay item | When | Details |\n|---|---|---|\n{rows}\n| Monthly salary | paid monthly | On the 25th |"
    read: list[int] = []

    def scorer(question: str, texts: Sequence[str]) -> np.ndarray:
        read.append(len(texts))
        return np.array([0.9 if "Monthly salary" in t else 0.3 for t in texts], dtype=np.float32)

    found = extract_answer("Wann wird das Gehalt gezahlt?", [hit(passage, "Pay")], scorer)
    assert read == [16] and "Monthly salary" in found[0].text
    # a question that shares words with them keeps the short list
    read.clear()
    extract_answer("When is item 3 reviewed?", [hit(passage, "Pay")], scorer)
    assert read == [12]


def test_word_overlap_stems_and_leaves_out_the_document_title() -> None:
    from shelfwise.core.answers.extractive import word_overlap

    texts = ["A working week at Northwind Labs is 38 hours.", "Core hours are 10:00 to 15:00."]
    with_title = word_overlap("What are the core working hours at Northwind Labs?", texts)
    without = word_overlap("What are the core working hours at Northwind Labs?", texts,
                           scope="Northwind Labs Employee Handbook")
    assert with_title[0] > with_title[1] and without[0] < with_title[0]
    claims = word_overlap("When must claims be submitted?", ["Submit your claim in the app.", "Other text."])
    assert claims[0] > 0.9 and claims[1] == 0.0


def test_a_lead_in_is_shown_with_the_list_it_introduces() -> None:
    text = ("Your State Pension can be paid into:\n- an account in your name\n- a joint account\n"
            "- a bank in the country you live in\nYou cannot use a friend's account.")
    assert text[:list_end(text, text.index(":") + 1)].endswith("- a bank in the country you live in")
    assert list_end(text, text.index(":") + 1, items=1) == text.index("\n- a joint")
    assert list_end("No list follows:\nA sentence.", 17) == 17
    got = extract_answer("Which bank accounts can my State Pension be paid into?", [hit(text, "Bank accounts")],
                         embedder_scorer(HashEmbedder()), sentences=1)
    assert got[0].text == text[: text.index("\nYou cannot")] and got[0].start == 0
    assert extract_text(got) == ("Your State Pension can be paid into:\n- an account in your name\n- a joint account\n"
                                 "- a bank in the country you live in [1]")


def test_a_list_cut_at_the_passage_boundary_is_read_on_from_the_store(tmp_path: Path) -> None:
    # one passage per item (how ConditionalQA's guides are stored, and how a list can fall across passages)
    parsed = conditionalqa_document("Pensions abroad", "https://example.org/p", [
        "<h2>Bank accounts</h2>", "<p>Your State Pension can be paid into:</p>",
        "<li>an account in your name</li>", "<li>a joint account</li>", "<p>Tell the office if you move.</p>",
        "<li>an unrelated later item</li>"])
    with Store(tmp_path / "lib.db") as store:
        cid = store.collection("default").id
        store.write_document(cid, "/docs/p.html", FileMeta(size=1, mtime=0.0, sha256="x"), parsed)
        passages = {p.text: p for p in store.passages(collection_id=cid)}
        lead, item = passages["Your State Pension can be paid into:"], passages["- a joint account"]
        hits = [Hit(lead.id, 1, lead.text, 0.9, "/docs/p.html", "Pensions abroad", ["Bank accounts"], Location()),
                Hit(item.id, 1, item.text, 0.8, "/docs/p.html", "Pensions abroad", ["Bank accounts"], Location())]
        wide = widen_lists(store, hits)
    assert wide[0].text == "Your State Pension can be paid into:\n- an account in your name\n- a joint account"
    assert wide[1] == hits[1]  # not a lead-in: as it was
    assert widen_lists(None, hits) == hits


@pytest.mark.parametrize(("text", "sentences"), [
    ("See the handbook p. 3 for the rules. Leave is 27 days.", ["See the handbook p. 3 for the rules.",
                                                                "Leave is 27 days."]),
    ("Ask Dr. Lopez in room 4. She decides.", ["Ask Dr. Lopez in room 4.", "She decides."]),
    ("Claims (see No. 12 and pp. 4-5) go to HR. Then wait.", ["Claims (see No. 12 and pp. 4-5) go to HR.",
                                                              "Then wait."]),
])
def test_an_abbreviation_does_not_end_a_sentence(text: str, sentences: list[str]) -> None:
    """Issue 38: "p." before a page number split the extractive answer's sentence in two."""
    assert [text[a:b] for a, b in passage_sentences(text)] == sentences


def test_a_table_row_answer_reads_with_its_column_names() -> None:
    text = ("| City | Country | Daily allowance | Hotel cap per night |\n|---|---|---|---|\n"
            "| Berlin | Germany | EUR 55 | EUR 160 |\n| Singapore | Singapore | SGD 90 | |")
    got = extract_answer("What is the daily allowance in Berlin?", [hit(text, "Per diems")],
                         embedder_scorer(HashEmbedder()), sentences=1)
    assert got[0].text == "| Berlin | Germany | EUR 55 | EUR 160 |"  # as written: the offsets highlight it
    assert text[got[0].start:got[0].end] == got[0].text
    assert extract_text(got) == "Berlin, Germany: daily allowance EUR 55, hotel cap per night EUR 160 [1]"


@pytest.mark.parametrize(("header", "row", "read"), [
    ("| Date | Day | Holiday |", "| 2026-01-01 | Thursday | New Year's Day |",
     "2026-01-01, Thursday: holiday New Year's Day"),
    # a long second cell is not part of the label; a cell with a comma parts the cells by semicolons
    ("| Level | Examples | Handling |", "| Public | Product brochures, blog posts | No restrictions |",
     "Public: examples Product brochures, blog posts; handling No restrictions"),
    ("| Item | VAT rate |", "| Books | 9% |", "Books: VAT rate 9%"),  # an acronym keeps its capitals
    ("| Item | Note |", "| a \\| b | empty next |", "a | b: note empty next"),  # an escaped pipe is text
    ("| One | Two |", "| x | y | z |", "| x | y | z |"),  # cells do not line up: the row as written
    ("| | |", "| x | y |", "| x | y |"),  # no column names
])
def test_read_row(header: str, row: str, read: str) -> None:
    from shelfwise.core.answers.table_rows import read_row

    assert read_row(header, row) == read


def test_a_number_of_months_announces_no_list() -> None:
    # "a probation period of three months" was read as announcing three items: the next three sentences were
    # brought as its list, and the answer showed the passage's last sentence twice
    from shelfwise.core.answers.extractive import announced_count, is_lead_in

    assert not is_lead_in("Every new employee starts with a probation period of three months.")
    assert not is_lead_in("You get three working days off.")
    assert is_lead_in("We work by three values.") and announced_count("We work by three values.") == 3
    assert announced_count("Wir haben die folgenden drei Werte.") == 3


def test_no_sentence_is_shown_twice() -> None:
    # an item ranked first, then its lead-in, which brings the item again with its list: the lead-in is left out
    text = ("We work by three values. Measure twice: we check data. Share the weather: we tell colleagues early. "
            "Leave the quay cleaner: we tidy up.")

    def scorer(question: str, contexts: Sequence[str]) -> np.ndarray:
        return np.asarray([2.0 if "weather" in c else 1.0 if "values" in c else 0.0 for c in contexts])

    found = extract_answer("What are our values?", [hit(text)], scorer, second_margin=10.0)
    spans = [(x.start, x.end) for x in found]
    assert len(spans) >= 1 and all(not (a < d and c < b) for i, (a, b) in enumerate(spans)
                                   for c, d in spans[i + 1:]), spans


def test_lines_without_a_sentence_end_are_not_run_together() -> None:
    # two bullets of one slide, neither ending with a full stop, are shown one a line, not as one run-on sentence
    slide = "NorthGate VPN is required on every hotel Wi-Fi network\nIn the office, the staff network does not need it"
    first, second = slide.split("\n")
    text = extract_text([Extracted(first, 1, 0, len(first), 0.9),
                         Extracted(second, 1, len(first) + 1, len(slide), 0.8)])
    assert text == f"{first}\n{second} [1]"
    ended = extract_text([Extracted("It is required.", 1, 0, 15, 0.9), Extracted("It is free.", 1, 16, 27, 0.8)])
    assert ended == "It is required. It is free. [1]"


def test_a_when_that_opens_a_clause_asks_for_no_date() -> None:
    texts = ["Moving house: 1 day per calendar year.", "Carried-over days must be taken by 31 March."]
    # a number in both: the quantity cue alone; "when I move house" asks for no date
    assert list(type_cue("How many days off do I get when I move house?", texts)) == [1.0, 1.0]
    assert list(type_cue("When must carried-over days be taken?", texts)) == [0.0, 1.0]
