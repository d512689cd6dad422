"""The grounding check (core/answers/grounding.py) and the facts it reads (core/answers/facts.py): pure rules, no
model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shelfwise.core.answers.facts import dates_in, names_in, numbers_in, words_to_number
from shelfwise.core.answers.grounding import (
    check_grounding,
    cut_repetition,
    repeated_ngram,
    unsupported_facts,
)

LEAVE = "Full-time employees receive 27 days of paid annual leave per calendar year."
CARRY = "Carried-over days must be taken by 31 March, after which they expire."


@pytest.mark.parametrize(("phrase", "value"), [
    ("twenty-seven", 27), ("twenty seven", 27), ("one hundred and five", 105), ("fourth", 4),
    ("two thousand", 2000), ("eight", 8), ("banana", None),
])
def test_number_words(phrase: str, value: int | None) -> None:
    assert words_to_number(phrase) == value


def test_numbers_are_compared_as_values() -> None:
    assert numbers_in("EUR 1,500 and 0.30 per km, the 4th day") == {1500.0, 0.3, 4.0}
    assert numbers_in("twenty-seven days") == {27.0}


def test_the_sample_case_10_days_is_rejected_27_accepted() -> None:
    bad = check_grounding("Employees get 10 days of annual leave.", [LEAVE])
    assert not bad.ok and [f.text for f in bad.unsupported] == ["10"] and "10" in bad.reason
    good = check_grounding("Employees get twenty-seven days of annual leave [1].", [LEAVE])
    assert good.ok and good.text.startswith("Employees get twenty-seven")
    assert check_grounding("27 days.", ["You get twenty-seven days of leave."]).ok


@pytest.mark.parametrize("written", ["31 March", "March 31", "31/03", "31.03.", "the 31st of March"])
def test_dates_in_any_common_form_match(written: str) -> None:
    assert unsupported_facts(f"Take them by {written}.", [CARRY]) == []


def test_a_different_date_is_caught() -> None:
    facts = unsupported_facts("Take them by 30 April.", [CARRY])
    assert [(f.kind, f.text) for f in facts] == [("date", "30 April")]
    assert [f.kind for f in unsupported_facts("Take them by 31/04.", [CARRY])] == ["date"]


def test_years_must_agree_when_both_give_one() -> None:
    src = ["Northwind Founders Day: Friday 12 June 2026"]
    assert unsupported_facts("It is on 12 June 2026.", src) == []
    assert [f.kind for f in unsupported_facts("It is on 12 June 2025.", src)] == ["date"]
    assert dates_in("2026-06-12")[0][1] == {(12, 6, 2026)}


def test_decimals_are_not_dates_and_amounts_are_numbers() -> None:
    src = ["Business trips in your own car are reimbursed at EUR 0.30 per kilometre."]
    assert unsupported_facts("The rate is EUR 0.30 per kilometre.", src) == []
    assert [f.text for f in unsupported_facts("The rate is EUR 0.35 per kilometre.", src)] == ["0.35"]


def test_percentages_and_times() -> None:
    src = ["Reduce the per diem by 35 percent for lunch. The alarm is tested every Monday at 11:00."]
    assert unsupported_facts("Lunch: 35%. Tested Mondays at 11:00.", src) == []
    bad = unsupported_facts("Lunch: 40%. Tested at 11 am and at 3 pm.", src)
    assert {f.text for f in bad} >= {"40", "3 pm"}
    assert all(f.text != "11 am" for f in bad)  # 11 am is 11:00


def test_names_must_be_in_the_sources_or_the_question() -> None:
    src = ["Book a space in the ParkPal app by 16:00 on the previous working day."]
    assert names_in("Use the ParkPal app, says Maria.") == ["ParkPal", "Maria"]
    facts = unsupported_facts("Use the ParkPal app, says Maria.", src)
    assert [(f.kind, f.text) for f in facts] == [("name", "Maria")]
    assert unsupported_facts("Ask Maria to use ParkPal.", src, question="Where does Maria book parking?") == []


def test_unsupported_and_repeated_sentences_are_dropped() -> None:
    text = ("Employees get 27 days of leave. I love my cat and my dog very much. "
            "Employees get 27 days of leave.")
    verdict = check_grounding(text, [LEAVE])
    assert verdict.ok and verdict.text == "Employees get 27 days of leave."
    assert len(verdict.dropped) == 2
    nothing = check_grounding("I love my cat very much.", [LEAVE])
    assert not nothing.ok and nothing.text == "" and "no sentence" in nothing.reason


def test_repetition_guard() -> None:
    looping = "I am a manager at the office. I am a manager at the office. I am a manager"
    assert repeated_ngram(looping)
    assert cut_repetition(looping) == "I am a manager at the office."
    assert not repeated_ngram("Employees get 27 days of leave per year.")
    assert cut_repetition("One line.\nAnother line.") == "One line.\nAnother line."


def test_citation_markers_are_not_numbers() -> None:
    assert unsupported_facts("Employees get 27 days [1].", [LEAVE]) == []
    assert unsupported_facts("Employees get 27 days [1, 3].", [LEAVE]) == []


def test_a_number_from_elsewhere_in_the_passage_that_contradicts_the_sentence_found() -> None:
    passage = LEAVE + " Submit the request at least 10 working days in advance."
    assert check_grounding("Employees get 10 days.", [passage]).ok  # "10" is in the passage...
    verdict = check_grounding("Employees get 10 days.", [passage], evidence=LEAVE)  # ...but the answer says 27 days
    assert not verdict.ok and [f.text for f in verdict.unsupported] == ["10 days"]  # as written
    assert check_grounding("Employees get 27 days [1].", [passage], evidence=LEAVE).ok
    assert check_grounding("Lunch: 35%.", ["Lunch: 35 percent."], evidence="Lunch: 35 percent.").ok


def test_amounts_with_a_currency_and_echoed_questions() -> None:
    evidence = "Business trips in your own car are reimbursed at EUR 0.30 per kilometre."
    passages = [evidence + " The hotel cap is EUR 140."]
    verdict = check_grounding("The daily allowance is EUR 140.", passages, evidence=evidence)
    assert not verdict.ok and [f.text for f in verdict.unsupported] == ["EUR 140"]  # as written
    echoed = check_grounding("By what date must carried-over days be taken?", [CARRY])
    assert not echoed.ok and echoed.dropped == ["By what date must carried-over days be taken?"]


# --------------------------------------------------------------------------- issue 38, case 5: does it answer?
TRAPS = [json.loads(line) for line in (Path(__file__).parent / "data" / "answer_traps.jsonl").read_text().splitlines()
         if line.strip()]


def test_a_number_from_the_source_that_does_not_answer_the_question_is_not_kept() -> None:
    """Issue 38, case 5: the port, which is in the source, was kept as the VPN server's address."""
    src = ["The VPN server address is vpn.northwind.example and it uses port 1194."]
    verdict = check_grounding("1194 [1]", src, "What is the VPN server address?")
    assert not verdict.ok and "bare number" in verdict.reason
    assert check_grounding("The VPN server address is vpn.northwind.example [1].", src,
                           "What is the VPN server address?").ok
    assert check_grounding("1194 [1]", src, "What port does the VPN use?").ok


@pytest.mark.parametrize("trap", TRAPS, ids=[t["question"] for t in TRAPS])
def test_the_answer_must_hold_what_the_question_asks_for(trap: dict[str, str]) -> None:
    """Each trap: a wrong answer whose facts are all in the source (rejected) and a right one (kept)."""
    if trap["wrong"]:
        wrong = check_grounding(trap["wrong"], [trap["source"]], trap["question"])
        assert wrong.ok == bool(trap.get("missed")), trap  # a known miss is marked, so that catching it is seen
    assert check_grounding(trap["right"], [trap["source"]], trap["question"]).ok, trap


def test_a_number_from_another_clause_of_the_source_does_not_answer_a_number_question() -> None:
    """Issue 38: a number question answered with a number the source gives about something else."""
    from shelfwise.core.answers.grounding import off_the_subject

    src = ["Full-time employees get 27 days of annual leave, and requests must be made 5 days in advance."]
    question = "How many days of annual leave do full-time employees get?"
    verdict = check_grounding("5 days [1]", src, question)
    assert not verdict.ok and "about something else" in verdict.reason
    assert check_grounding("27 days [1]", src, question).ok
    # the extracted answer's numbers are kept: the walk found that sentence for the question
    assert check_grounding("5 days [1]", src, question, evidence="Requests must be made 5 days in advance.").ok
    # the unit asked for: the floor is not how many people
    seats = ["The canteen is on floor 4 and seats 120 people."]
    verdict = check_grounding("4 [1]", seats, "How many people does the canteen seat?")
    assert not verdict.ok and "unit" in verdict.reason
    # a question that is not about a number, and a source with one number, are left alone
    assert check_grounding("Floor 4 [1].", seats, "Which floor is the canteen on?").ok
    assert check_grounding("27 days [1]", ["Employees get 27 days."], "How many days do I get?").ok
    # the closest-clause rule (off) catches a neighbouring subject
    fathers = ["Fathers can take 2 weeks of paternity leave; mothers can take 52 weeks of maternity leave."]
    question = "How many weeks of paternity leave can fathers take?"
    assert not off_the_subject("52 weeks [1]", question, fathers)
    assert off_the_subject("52 weeks [1]", question, fathers, closest=True)
    assert not off_the_subject("2 weeks [1]", question, fathers, closest=True)


@pytest.mark.parametrize(("question", "kind"), [
    ("What is the VPN server address?", "address"), ("When is the deadline?", "date"),
    ("How many days of leave do I get?", "number"), ("Who approves travel?", "person"),
    ("What is the travel policy about?", ""),
])
def test_the_kind_a_question_asks_for(question: str, kind: str) -> None:
    from shelfwise.core.answers.grounding import asked_kind

    assert asked_kind(question) == kind


def test_a_count_in_words_or_past_a_modifier_is_a_quantity_the_text_must_not_contradict() -> None:
    from shelfwise.core.answers.facts import quantities

    assert quantities("You may carry over five unused days.") == [(5.0, "day")]
    assert quantities("three additional days") == [(3.0, "day")]
    assert quantities("within 2 working days") == [(2.0, "working")]  # a working day is a unit of its own
    assert quantities("on the first day") == []  # an ordinal counts nothing
    assert quantities("EUR 600 per trip") == [(600.0, "eur")]  # "per" names no unit; "per cent" does
    assert quantities("35 per cent") == [(35.0, "percent")]
    # the passage holds a 10 elsewhere; the sentence found gives five days: "10 days" contradicts it
    sources = ["You may carry over five unused days to the next year. Requests take 10 minutes to approve."]
    evidence = "You may carry over five unused days to the next year."
    verdict = check_grounding("You can carry over 10 days.", sources, "How many days can I carry over?", evidence)
    assert not verdict.ok and "\u201c10 days\u201d" in verdict.reason, verdict
    assert check_grounding("You can carry over 5 days.", sources, "How many days can I carry over?", evidence).ok
