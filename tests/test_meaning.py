"""The checks of meaning on the model's text (core/answers/meaning.py): pure rules, no model. The same rules through
the CLI and the window: tests/test_answer_rules.py."""

from __future__ import annotations

from shelfwise.core.answers.facts import numbers_in, other_readings
from shelfwise.core.answers.first_value import short_answer
from shelfwise.core.answers.grounding import check_grounding
from shelfwise.core.answers.meaning import check_meaning, restates, text_polarity, unsupported_sentences
from shelfwise.core.answers.short_confidence import SHOW_ALL
from shelfwise.core.answers.types import Extracted

VPN = "In the office, the staff Wi-Fi network does not need the VPN."
REVENUE = "Revenue in 2025 was EUR 102,000, up from EUR 95,000."


def found(sentence: str, question: str):
    s = Extracted(sentence, 1, 0, len(sentence), 0.5)
    return short_answer(question, [s], show=SHOW_ALL), [s]


def test_a_reversed_yes_no_is_withdrawn_and_an_agreeing_one_kept() -> None:
    q = "Do I need the VPN on the office Wi-Fi?"
    short, sentences = found(VPN, q)
    assert short is not None and short.text == "No"
    bad = check_meaning("Yes, you do [1].", q, [VPN], short, sentences)
    assert bad.reason == "it says yes where the deciding sentence [1] says no"
    good = check_meaning("No, the staff network in the office works without it [1].", q, [VPN], short, sentences)
    assert not good.reason and not good.adds_nothing
    assert "its no is the deciding sentence's [1]" in good.checks
    assert text_polarity("You do not need it.", q) == "No" and text_polarity("Nein.", q) == "No"


def test_a_yes_or_no_is_withdrawn_where_none_is_shown() -> None:
    # the confidence withheld the yes or no (core/answers/short_confidence.py): the sentences found do not settle it
    # surely enough, so a model's text that opens with one is not shown either; one that does not take a side is
    q = "Do I need the VPN on the office Wi-Fi?"
    _, sentences = found(VPN, q)
    bad = check_meaning("No, the staff network in the office works without it [1].", q, [VPN], None, sentences)
    assert bad.reason == "it says yes or no where the sentences found do not settle it"
    # its polarity is still checked against the deciding sentence's, shown or not
    reversed_ = check_meaning("Yes, you do [1].", q, [VPN], None, sentences)
    assert reversed_.reason == "it says yes where the deciding sentence [1] says no"
    kept = check_meaning("The staff network in the office works without it [1].", q, [VPN], None, sentences)
    assert not kept.reason


def test_a_restatement_is_withdrawn() -> None:
    q = "Which company provides health insurance?"
    assert restates("The company that provides health insurance.", q)
    assert check_meaning("The company that provides health insurance.", q, ["Health insurance is provided by "
                         "Zilver Care."], None).reason == "it only restates the question"
    assert not restates("Zilver Care provides it.", q)


def test_a_claim_no_passage_makes_is_withdrawn_even_when_its_words_occur_apart() -> None:
    sources = ["The company covers the cost of glasses for screen work.", "Gym membership is not discounted."]
    q = "Does the company cover gym membership?"
    assert unsupported_sentences("Yes, the company covers gym membership for all staff.", sources, q)
    verdict = check_meaning("The company covers gym membership fees and yoga classes.", q, sources, None)
    assert verdict.reason.startswith("no passage says")


def test_numbers_are_compared_as_values_across_writings() -> None:
    assert 102000.0 in numbers_in("EUR 102.000") and other_readings("102 000 €") == {102000.0}
    assert 0.3 in numbers_in("0,30 EUR pro Kilometer")
    q = "What was the revenue in 2025?"
    for text in ("The revenue was EUR 102000 [1].", "The revenue was 102.000 EUR [1]."):
        assert check_grounding(text, [REVENUE], q).ok, text
    assert not check_grounding("The revenue was EUR 103,000 [1].", [REVENUE], q).ok


def test_a_text_without_the_kind_of_value_asked_for_is_withdrawn() -> None:
    q = "How much was the revenue in 2025?"
    short, sentences = found(REVENUE, q)
    verdict = check_meaning("Revenue grew strongly over the year before.", q, [REVENUE + " Revenue grew strongly."],
                            short, sentences)
    assert verdict.reason == "it gives no number, which the question asks for"


def test_a_text_that_adds_nothing_is_not_shown_and_a_kept_text_lists_its_checks() -> None:
    q = "How much was the revenue in 2025?"
    short, sentences = found(REVENUE, q)
    assert check_meaning("Revenue in 2025 was EUR 102,000 [1].", q, [REVENUE], short, sentences).adds_nothing
    kept = check_meaning("It was EUR 102,000, up from EUR 95,000 [1]. Costs fell to EUR 80,000 [2].", q,
                         [REVENUE, "Costs fell to EUR 80,000 in 2025."], short, sentences)
    assert not kept.reason and not kept.adds_nothing
    assert kept.checks == ["its numbers, dates and names are in the passages shown",
                           "each of its sentences stands in one sentence of a passage",
                           "it gives a number, as the question asks",
                           "its number is one the sentences found give"]


def test_a_value_other_than_the_one_found_is_withdrawn() -> None:
    # "10 days." under a sentence found that says five: 10 stands in another passage shown, so the fact check passes
    q = "How many unused leave days can I carry over?"
    carry = "Up to five unused days may be carried over into the next calendar year."
    sources = [carry, "You may take up to 10 days of care leave per calendar year."]
    short, sentences = found(carry, q)
    verdict = check_meaning("10 days [1].", q, sources, short, sentences)
    assert verdict.reason == "it gives 10 days, which the sentences found do not"
    assert not check_meaning("Up to 5 unused days may be carried over into the next year [1].", q, sources, short,
                             sentences).reason


def test_a_list_item_says_yes_or_no_with_its_lead_in() -> None:
    # "- Traffic fines and parking fines." says nothing of being reimbursed; the lead-in above it says "never"
    lead_in = "The following costs are never reimbursed:"
    item = "- Traffic fines and parking fines."
    q = "Are parking fines reimbursed?"
    s = Extracted(item, 1, 0, len(item), 0.9, intro=lead_in)
    short = short_answer(q, [s], show=SHOW_ALL)
    assert short is not None and short.text == "No", short
    assert short.sentence.startswith(lead_in)
    source = f"{lead_in}\n{item}"
    bad = check_meaning("Yes, parking fines are reimbursed [1].", q, [source], None, [s])
    assert bad.reason == "it says yes where the deciding sentence [1] says no"


def test_a_text_that_gives_another_thing_than_the_value_shown_is_withdrawn() -> None:
    # the sample's "Which days are the anchor days?": the model wrote "the last two weeks of each month" under
    # "Tuesday and Thursday"; "two" was counted twice (as a word and as 2), so the support check passed it
    q = "Which days are the anchor days?"
    anchor = "Tuesday and Thursday are anchor days, on which every team in Rotterdam and Lisbon meets in person."
    sources = [f"The standard arrangement is hybrid: you work from the office at least two days per week. {anchor}"]
    short, sentences = found(anchor, q)
    assert short is not None and short.text == "Tuesday and Thursday"
    wrong = "The anchor days are the last two weeks of each month [1]."
    assert unsupported_sentences(wrong, sources, q) == [wrong.removesuffix(" [1].") + "."]
    assert check_meaning("Every team meets on the anchor days in person [1].", q, sources, short,
                         sentences).reason == "it does not give Tuesday and Thursday, the value the sources give"
    kept = check_meaning("The anchor days are Tuesday and Thursday, when every team meets in person [1].", q,
                         sources, short, sentences)
    assert not kept.reason and "it gives the value shown above it" in kept.checks


def test_a_sentence_that_adds_words_no_passage_has_is_withdrawn() -> None:
    # session 29's blind check: the reimbursement rate right, then "(in the case of a car with an automatic
    # transmission)", which no document says; labelled checked
    q = "Wie hoch ist die Kilometerpauschale für das eigene Auto?"
    sources = ["Business trips in your own car are reimbursed at EUR 0.30 per kilometre, plus parking and tolls."]
    added = ("The mileage is reimbursed at EUR 0.30 per kilometre, plus parking and tolls (in the case of a car "
             "with an automatic transmission).")
    assert unsupported_sentences(added, sources, q)
    # one word of its own (a paraphrase's) is not an addition
    assert not unsupported_sentences("Trips in your own car are refunded at EUR 0.30 per kilometre.", sources, q)


def test_a_text_without_the_rate_asked_for_is_withdrawn() -> None:
    # session 29's blind check: "The commuting allowance is a monthly payment of up to 60 km one way." was shown,
    # labelled checked, for a rate per kilometre (the row says EUR 0.19 per km)
    q = "What is the commuting allowance per kilometre?"
    sources = ["Commuting allowance: EUR 0.19 per km for office days, up to 60 km one way.",
               "Salaries are paid monthly."]
    found = [Extracted(sources[0], 1, 0, len(sources[0]), 1.0)]
    verdict = check_meaning("The commuting allowance is paid monthly, up to 60 km one way.", q, sources, None, found)
    assert verdict.reason == "it gives no value per kilometre, which the question asks for", verdict
    kept = check_meaning("The commuting allowance is EUR 0.19 per km for office days.", q, sources, None, found)
    assert not kept.reason.startswith("it gives no value per"), kept
