"""Which value is put first and whether it is shown (core/answers/short.py, core/answers/short_confidence.py): what a
sentence excludes gives no value, a two-item series answers a list question, a later sentence sharing none of the
question's words gives none, and the confidence withholds a value the ranker cannot place. Pure functions over
strings; the same questions through the CLI on the sample: tests/test_sample_answers.py."""

from __future__ import annotations

from shelfwise.core.answers.first_value import short_answer, show_features
from shelfwise.core.answers.short import asked_kind, value_candidates
from shelfwise.core.answers.short_confidence import SHOW, SHOW_ALL, TYPICAL, ShowFeatures, confidence
from shelfwise.core.answers.types import Extracted

ROOMS = ("Meeting rooms are named after winds: Mistral,\nSirocco, Bora and Zephyr in Rotterdam, and Levante and "
         "Nortada in Lisbon.")


def sentences(*texts: str) -> list[Extracted]:
    return [Extracted(t, i + 1, 0, len(t), 1.0 - 0.1 * i) for i, t in enumerate(texts)]


def test_what_a_sentence_excludes_is_no_value() -> None:
    # "Europe" stands in "outside Europe": the sentence is about the trips beyond it, not about Europe
    question = "Who approves travel above EUR 2,000?"
    found = sentences("Trips outside Europe also need approval from a director.")
    cands = value_candidates(asked_kind(question), question, found)
    assert cands and all("Europe" not in c.text for c in cands)
    short = short_answer(question, found, show=SHOW_ALL)
    assert short is not None and "Europe" not in short.text


def test_the_series_the_question_names_answers_a_list_question() -> None:
    # two items are a series too, and the one the question's own "Lisbon" qualifies wins over Rotterdam's four
    for question in ("Which meeting rooms are there in Lisbon?", "What are the meeting rooms in Lisbon called?"):
        assert asked_kind(question) == "list"
        short = short_answer(question, sentences(ROOMS), show=SHOW_ALL)
        assert short is not None and short.text == "Levante and Nortada", question
    rotterdam = short_answer("What are the meeting rooms in Rotterdam called?", sentences(ROOMS), show=SHOW_ALL)
    assert rotterdam is not None and rotterdam.text == "Mistral, Sirocco, Bora and Zephyr"


def test_a_later_sentence_sharing_no_word_with_the_question_gives_no_value() -> None:
    # a German question over English text shares no word with any sentence: only the first sentence (the ranker's
    # best) may give a value, not a date of another passage's sentence
    found = sentences("Bikes that stay in the storage for more than 30 days without moving are labelled and then "
                      "removed.", "Fire drills are held twice a year, in April and October.")
    # (session 26: a "when" whose sentence names no date is answered by its duration, the first sentence's own)
    assert short_answer("Wann werden Fahrräder entfernt?", found, show=SHOW_ALL).text == "more than 30 days"
    # in the question's own language the later sentence still gives its value when it bears on the question
    assert short_answer("When are the fire drills held?", found, show=SHOW_ALL).text == "in April and October"


def features(**changed: object) -> ShowFeatures:
    base = {"margin": 1.0, "typed": True, "ranked": False, "held": 2, "keys": 3, "close": 1.0, "first": True,
            "number_missing": False, "candidates": 2, "held_lead": 0, "after": False, "before": False, "words": 2}
    return ShowFeatures(**(base | changed))  # type: ignore[arg-type]


def test_the_confidence_grows_with_what_places_the_value() -> None:
    # the chosen weights (benchmarks/research/short_show.py) read more confidence into a wider margin over the next
    # value, a value of the kind asked for, and more of the question's words in its sentence
    assert confidence(features(margin=2.0), SHOW) > confidence(features(margin=0.2), SHOW)
    assert confidence(features(margin=None), SHOW) > confidence(features(margin=0.2), SHOW)
    assert confidence(features(held=3), SHOW) > confidence(features(held=0), SHOW)
    assert confidence(features(), SHOW) > confidence(features(typed=False, ranked=True), SHOW)
    assert confidence(features(candidates=1), SHOW) > confidence(features(candidates=12), SHOW)


def test_a_value_the_ranker_cannot_place_is_withheld_and_a_clear_one_shown() -> None:
    clear = sentences("You receive a one-time home office allowance of EUR 600 for a desk.")
    short = short_answer("How much is the one-time home office allowance?", clear)
    assert short is not None and short.text == "EUR 600" and short.confidence is not None
    assert short.confidence >= SHOW.threshold
    # a phrase among many for a "what" question whose words its sentence hardly holds: the ranker puts one first,
    # but not with the confidence a value shown first needs
    question = "What did the committee choose for the new library?"
    vague = sentences("After long talks in the town hall, members of several parties voted on plans, costs, a site "
                      "near the river and the opening hours of the reading rooms.")
    assert short_answer(question, vague, show=SHOW_ALL) is not None
    assert short_answer(question, vague) is None
    best = value_candidates(asked_kind(question), question, vague)
    assert confidence(show_features(question, best), SHOW) < SHOW.threshold


def test_the_confidence_grows_with_the_walks_evidence_for_the_sentence() -> None:
    # the encoder's cosine of the question with the value's sentence and its lead over the other candidate sentences
    # (benchmarks/research/short_show.py chose their weights): a value read from a sentence the encoder reads far
    # below another candidate is less sure than the same value read from the encoder's best
    assert confidence(features(cosine=0.75, lead=0.2), SHOW) > confidence(features(cosine=0.25, lead=-0.25), SHOW)
    assert confidence(features(lead=0.2), SHOW) > confidence(features(lead=-0.2), SHOW)
    # sentences given without a walk read the training medians (short_confidence.TYPICAL)
    assert confidence(features(), SHOW) == confidence(features(**TYPICAL), SHOW)


def test_a_yes_or_no_is_gated_by_its_own_model_with_its_own_threshold() -> None:
    # the deciding sentence's polarity is right about two times in three on the training data, so a yes or no needs
    # strong evidence (and a wrong one costs more); with none it is not shown, and then the sentence is shown first
    # without "Yes:"/"No:"
    question = "Do I need the VPN on the office Wi-Fi?"
    vpn = "In the office, the Wi-Fi network does not need the VPN."
    assert SHOW.yes_no_threshold > SHOW.threshold
    weak = [Extracted(vpn, 1, 0, len(vpn), 0.5, cosine=0.3, lead=-0.2)]
    assert short_answer(question, weak, passages=[0.3, 0.5]) is None
    assert short_answer(question, weak, show=SHOW_ALL).text == "No"
    strong = [Extracted(vpn, 1, 0, len(vpn), 0.5, cosine=0.95, lead=0.3)]
    short = short_answer(question, strong, passages=[0.8, 0.4])
    assert short is not None and short.text == "No" and short.confidence >= SHOW.yes_no_threshold


# The yes/no gate of session 24 (docs/eval/answers.md, "Session 24"): a model of its own, fitted on the yes/no questions
# of the training data, COVID-QA's FAQ pages among them (plain questions answered by a policy statement).
VPN = "In the office, the NW-Staff Wi-Fi network does not need the VPN"


def test_a_policy_sentence_that_settles_the_question_shows_its_yes_or_no() -> None:
    # the sentence holds every word of the question and the encoder reads it far closer than any other (the walk's
    # evidence as on the sample): its "No" is shown
    found = [Extracted(VPN, 1, 0, len(VPN), 1.35, cosine=0.75, lead=0.14)]
    short = short_answer("Do I need the VPN on the office Wi-Fi?", found, passages=[0.62, 0.55, 0.5])
    assert short is not None and short.text == "No" and short.confidence >= SHOW.yes_no_threshold


def test_a_reversed_yes_or_no_stays_withheld() -> None:
    # asked about home, the deciding sentence is the office's: it lacks the question's "home" and the encoder reads
    # it barely above the sentence about working from home; its "No" would reverse the rule for home
    home = "The IT security rules apply in full when you work from home."
    found = [Extracted(VPN, 2, 0, len(VPN), 0.9, cosine=0.52, lead=0.007),
             Extracted(home, 1, 0, len(home), 0.78, cosine=0.45, lead=-0.07)]
    assert short_answer("Do I need the VPN at home?", found, show=SHOW_ALL).text == "No"
    assert short_answer("Do I need the VPN at home?", found, passages=[0.5, 0.52, 0.4]) is None


def test_a_condition_or_a_scene_makes_a_yes_or_no_less_sure() -> None:
    # what a sentence says under a condition ("if", "wenn", "si") holds only in some cases; a question that sets a
    # scene first asks about the asker's case, which such conditions decide
    question = "Can I take parental leave?"
    plain = "Employees can take parental leave."
    conditional = "Employees can take parental leave if they have worked here for a year."
    from shelfwise.core.answers.first_value import yes_no_features

    def sure(q: str, text: str) -> float:
        found = [Extracted(text, 1, 0, len(text), 1.0, cosine=0.7, lead=0.1)]
        return confidence(yes_no_features(q, found, found[0], "Yes", [0.6, 0.5]), SHOW)

    assert sure(question, plain) > sure(question, conditional)
    assert sure(question, plain) > sure("I started in May and work part time. " + question, plain)
