"""The value asked for (core/answers/short.py): the kind a question asks for, in English, German and French, and the
span of the found sentence that answers it; yes/no from the deciding sentence's polarity. Pure functions over
strings (the CLI and the window: tests/test_answer_shown.py)."""

from __future__ import annotations

import re

import pytest

from shelfwise.core.answers.first_value import short_answer
from shelfwise.core.answers.polarity import polarity
from shelfwise.core.answers.short import asked_value
from shelfwise.core.answers.short_confidence import SHOW_ALL
from shelfwise.core.answers.types import Answer, Extracted


def one(question: str, sentence: str) -> tuple[str, str] | None:
    """The value the ranker puts first in ``sentence``, whether or not it is sure enough to be shown (that decision:
    tests/test_short_show.py)."""
    short = short_answer(question, [Extracted(sentence, 1, 0, len(sentence), 0.5)], show=SHOW_ALL)
    return (short.kind, short.text) if short else None


@pytest.mark.parametrize(("question", "kind"), [
    ("How many days of annual leave do I get?", "number"),
    ("By how much is the per diem reduced when lunch is provided?", "number"),  # "how much" comes before "when"
    ("When is the fire alarm tested?", "date"),
    ("What are the core working hours?", "time"),
    ("How long is the notice period?", "duration"),
    ("What percentage of the salary is the holiday allowance?", "percent"),
    ("Where is the headquarters?", "place"),
    ("Who do I call if my laptop breaks?", "name"),
    ("Do I need the VPN on the office Wi-Fi?", "yes_no"),
    ("Do I use the red form or the blue one?", "span"),  # a choice is not a yes/no question
    ("Wie viele Tage Urlaub bekomme ich?", "number"),
    ("Wann wird der Feueralarm getestet?", "date"),
    ("Brauche ich im Büro das VPN?", "yes_no"),
    ("Wo ist der Hauptsitz?", "place"),
    ("Combien de jours de congé ai-je ?", "number"),
    ("Quand le salaire est-il versé ?", "date"),
    ("Faut-il un VPN au bureau ?", "yes_no"),
    ("Est-ce que je peux amener mon chien ?", "yes_no"),
    ("Tell me about the wiki", "span"),
    # a yes/no question after a condition or a statement; not after a question word
    ("When I travel abroad, do I need the VPN?", "yes_no"),
    ("Wenn ich Pakete bestellt habe: Werden diese noch ausgeliefert?", "yes_no"),
    ("Ich bin Unternehmer, darf ich meinen Betriebsrat nachträglich beteiligen?", "yes_no"),
    ("Si je suis malade, dois-je appeler mon manager ?", "yes_no"),
    ("Who, if anyone, can approve travel?", "name"),
    # a "when" opening a clause after another question word asks for no date
    ("Who do I tell when I'm ill?", "name"),
    ("Where do I go when the fire alarm sounds?", "place"),
    ("What do I do when I am sick?", "span"),
    ("Since when is the policy in force?", "date"),
])
def test_the_kind_a_question_asks_for(question: str, kind: str) -> None:
    assert asked_value(question) == kind


@pytest.mark.parametrize(("question", "sentence", "expected"), [
    ("How many days of paid annual leave does a full-time employee get per year?",
     "Full-time employees receive 27 days of paid annual leave per calendar year.", ("duration", "27 days")),
    ("How much is the one-time home office allowance?",
     "You receive a one-time home office allowance of EUR 600 for a desk, and EUR 25 a month for internet.",
     ("money", "EUR 600")),
    ("Up to what value may an employee accept a gift?", "Gifts up to EUR 50 per occasion may be accepted.",
     ("money", "EUR 50 per occasion")),
    ("By how much is the per diem reduced when lunch is provided free of charge?",
     "Reduce the per diem for that day by 20 percent for breakfast and by 35 percent each for lunch and dinner.",
     ("percent", "35 percent")),
    ("What is the mileage rate for business trips in your own car?",
     "Business trips in your own car are reimbursed at EUR 0.30 per kilometre.", ("money", "EUR 0.30 per kilometre")),
    ("What are the core working hours?",
     "Outside core hours you choose when to start, within the window of 07:00 to 20:00. Core hours are 10:00 to "
     "15:00, Monday to Friday.", ("time", "10:00 to 15:00, Monday to Friday")),
    ("When is the fire alarm tested?", "The alarm is tested every Monday at 11:00 with a short tone.",
     ("date", "every Monday at 11:00")),
    ("On what date is Founders Day in 2026?", "Founders Day 2026 is on Friday 12 June 2026.",
     ("date", "on Friday 12 June 2026")),  # the question's own "2026" is not the answer
    ("Which form do you use to get overtime approved?",
     "Approval is requested with the Overtime Request form OT-2 in the HR system.",
     ("name", "Overtime Request form OT-2")),
    ("When is the company shutdown?", "The offices close for the company shutdown from 29 to 31 December.",
     ("date", "from 29 to 31 December")),  # a range whose days share one month: not "31 December" alone
    ("Where is the headquarters?", "The headquarters is at Lantern Quay 14, Rotterdam.",
     ("place", "Lantern Quay 14, Rotterdam")),
    ("What are the meeting rooms in Rotterdam called?",
     "Meeting rooms are named after winds: Mistral, Sirocco, Bora and Zephyr in Rotterdam.",
     ("list", "Mistral, Sirocco, Bora and Zephyr")),
    ("How many hours a day do cats sleep?", "Cats sleep sixteen hours a day.", ("duration", "sixteen hours a day")),
    ("Wie viele Tage bezahlten Urlaub bekommt ein Vollzeitbeschäftigter?",
     "Vollzeitbeschäftigte erhalten 27 Tage bezahlten Urlaub pro Kalenderjahr.", ("duration", "27 Tage")),
    ("Wann wird der Feueralarm getestet?", "Der Alarm wird jeden Montag um 11:00 Uhr getestet.",
     ("date", "jeden Montag um 11:00 Uhr")),
    ("Combien de jours de congés payés reçoit un salarié à temps plein ?",
     "Les salariés à temps plein reçoivent 27 jours de congés payés par an.", ("duration", "27 jours")),
    ("Quel est le montant de l'indemnité ?", "L'indemnité est de 102.000 EUR par an.", ("money", "102.000 EUR par an")),
])
def test_the_value_is_a_span_of_the_sentence(question: str, sentence: str, expected: tuple[str, str]) -> None:
    assert one(question, sentence) == expected
    assert expected[1] in sentence  # never new words


def test_a_sentence_without_a_value_of_the_kind_gives_none() -> None:
    assert one("When is the fire alarm tested?", "Fire wardens wear orange vests.") is None
    assert one("Tell me about the wiki", "The wiki is at wiki.northwindlabs.example.") is None


def test_a_later_sentence_that_bears_less_on_the_question_gives_no_value() -> None:
    first = "A medical certificate is required after a few days of absence."
    second = "Notify your manager before 09:30 on your first day."
    sentences = [Extracted(first, 1, 0, len(first), 0.9), Extracted(second, 1, 60, 60 + len(second), 0.8)]
    assert short_answer("From which day of sickness is a medical certificate required?", sentences) is None


@pytest.mark.parametrize(("question", "sentence", "verdict"), [
    ("Do I need the VPN on the office Wi-Fi?", "In the office, the Wi-Fi network does not need the VPN.", "No"),
    ("Do I need the VPN on hotel Wi-Fi?", "The VPN is required on every public or hotel Wi-Fi network.", "Yes"),
    ("Can I bring my dog to the office?", "Dogs are welcome in the office on Fridays only.", "Yes"),
    ("Can I bring my dog on Mondays?", "Dogs are welcome in the office on Fridays only.", "No"),
    ("Are visitors allowed everywhere?", "Visitors may go everywhere except the hardware lab.", "Yes"),
    ("Are visitors allowed in the hardware lab?", "Visitors may go everywhere except the hardware lab.", "No"),
    ("Brauche ich im Büro das VPN?", "Im Büro brauchen Sie das VPN nicht.", "No"),
    ("Darf ich meinen Hund mitbringen?", "Hunde sind freitags willkommen.", "Yes"),
    ("Faut-il un VPN au bureau ?", "Au bureau, vous n'avez pas besoin du VPN.", "No"),
    ("Puis-je apporter mon chien ?", "Les chiens ne sont jamais admis.", "No"),
    # a word of the question said with a negating prefix
    ("Is the lunch break paid?", "You must take a lunch break of at least 30 minutes, which is unpaid.", "No"),
    ("Ist die Mittagspause bezahlt?", "Die Mittagspause ist unbezahlt.", "No"),
    ("Are unused days carried over?", "Up to five unused days may be carried over.", "Yes"),
    # a scene set before the question is the asker's case, not what is asked: its "not" denies nothing
    ("I have not worked here for a year. Can I take parental leave?", "Employees can take parental leave.", "Yes"),
    ("Ich habe kein Auto. Darf ich meinen Hund mitbringen?", "Hunde sind freitags willkommen.", "Yes"),
])
def test_yes_or_no_is_the_deciding_sentences_polarity(question: str, sentence: str, verdict: str) -> None:
    assert polarity(question, sentence) == verdict
    # the polarity read, every yes or no shown (whether it is shown: tests/test_short_show.py)
    short = short_answer(question, [Extracted(sentence, 2, 0, len(sentence), 0.5)], show=SHOW_ALL)
    assert short is not None and short.kind == "yes_no" and short.text == verdict and short.sentence == sentence
    assert short.shown() == f"{verdict}: {sentence}" and short.number == 2


def test_what_is_shown_first() -> None:
    sentence = "You receive a home office allowance of EUR 600."
    found = Extracted(sentence, 1, 0, len(sentence), 0.5)
    answer = Answer("How much is the home office allowance?", f"{sentence} [1]", [], True, sentences=[found],
                    short=short_answer("How much is the home office allowance?", [found]))
    assert answer.shown_first() == f"EUR 600 [1]\n{sentence} [1]"
    yes_no = short_answer("Do I get a home office allowance?", [found], show=SHOW_ALL)
    assert yes_no is not None
    answer.short = yes_no
    assert answer.shown_first() == f"Yes: {sentence} [1]"
    answer.found, answer.text = False, "Not found in your documents."
    assert answer.shown_first() == "Not found in your documents."


# --------------------------------------------------------------------------- a thing asked for (session 21)
@pytest.mark.parametrize(("question", "kind"), [
    ("Was finanzierten die beiden Geschäftsleute?", "thing"),  # German "Was": no English "Was the ...?"
    ("Was verwenden die Techniker als Werkzeug?", "thing"),
    ("Was the office closed on Friday?", "yes_no"),
    ("Was Tesla born in Smiljan?", "yes_no"),
    ("What do ribbons consist of?", "thing"),
    ("The team beat which rival in the final?", "name"),
    ("Wie viele Häuser wurden bis zum 18. Jahrhundert gebaut?", "number"),  # an ordinal's dot ends no sentence
    ("Was kostet die Kilometerpauschale?", "number"),
    ("Wie hießen die neuen Partner?", "name"),
    ("How do I book a desk?", "span"),  # how and why ask for a clause: no value
    ("Why was the meeting moved?", "span"),
])
def test_the_kind_with_things(question: str, kind: str) -> None:
    from shelfwise.core.answers.short import asked_kind

    assert asked_kind(question) == kind


@pytest.mark.parametrize(("question", "sentence", "value"), [
    # a phrase the question's words leave over, next to them
    ("What do the rooms on the third floor use for heat?",
     "The rooms on the third floor use district heating from the city network.", "district heating"),
    ("Who signs the travel requests before booking?", "Travel requests are signed by the team lead before booking.",
     "the team lead"),
    # numbers written as words, in English and German
    ("How many rooms does the Lisbon office have?", "The Lisbon office has three rooms.", "three rooms"),
    ("Wie viele Parkplätze haben eine Ladesäule?", "Vier der Parkplätze haben eine Ladesäule.", "Vier"),
    # a year of any century, with its season
    ("Wann wurde die Firma gegründet?", "Die Firma wurde im Sommer 1887 in Rotterdam gegründet.", "Sommer 1887"),
    # a label before a colon and a citation mark are no answers
    ("What is the main cause of delays?", "Abstract: The main cause of delays is missing approvals [12].",
     "missing approvals"),
])
def test_a_thing_is_a_phrase_of_the_sentence(question: str, sentence: str, value: str) -> None:
    from shelfwise.core.answers.phrases import MAX_WORDS

    got = one(question, sentence)
    assert got is not None and value in got[1] and len(got[1].split()) <= MAX_WORDS, got


@pytest.mark.parametrize(("sentence", "spans"), [
    ("The Rotterdam office has 12 parking spaces in the underground garage.", ["12 parking spaces"]),
    ("Book 3 meeting rooms now.", ["3 meeting rooms"]),
    ("5 unused days may be carried over.", ["5 unused days"]),
    ("You get 27 days of leave.", ["27 days"]),  # a plural unit is the noun itself
    ("1 person receives it.", ["1 person"]),  # after one, a word ending in -s is a verb
    ("It holds 60 bikes and more.", ["60 bikes"]),
    # a number word too: not "five unused"; the bound before it is part of the value (session 26)
    ("Up to five unused days may be carried over.", ["Up to five unused days"]),
])
def test_a_number_counts_a_noun_with_the_word_before_it(sentence: str, spans: list[str]) -> None:
    # before: "12 parking", "3 meeting", "5 unused": the unit was one word unless it was a known modifier
    from shelfwise.core.answers.typed_spans import quantity_spans

    assert [sentence[s.start:s.end] for s in quantity_spans(sentence)] == spans


def test_the_value_of_a_count_names_what_it_counts() -> None:
    sentence = "The Rotterdam office has 12 parking spaces in the underground garage."
    assert one("How many parking spaces does the Rotterdam office have?", sentence) == ("number", "12 parking spaces")


_LUNCH_ROW = ("| Lunch | Office canteen | Free lunch on office days | Everyone working in the office "
              "| No enrolment needed |")


@pytest.mark.parametrize(("question", "sentence", "said"), [
    # a table row's other cell opening with "No" says nothing about what is asked
    ("Is there free lunch in the office?",
     _LUNCH_ROW, "Yes"),
    ("Is there free lunch in the office?", "Lunch, Office canteen: company contribution Free lunch on office days, "
     "how to enrol No enrolment needed", "Yes"),
    # the cell that is asked about keeps its negation; so do plain sentences
    ("Do I need to enrol for lunch?",
     _LUNCH_ROW, "No"),
    ("Do I need the VPN at home?", "No, you do not need the VPN at home.", "No"),
    ("Can I bring my dog?", "No dogs are allowed in the office.", "No"),
    ("Can I bring pets?", "You cannot, under any circumstances, bring pets.", "No"),
])
def test_a_negation_opening_another_cell_of_a_row_does_not_decide(question: str, sentence: str, said: str) -> None:
    assert polarity(question, sentence) == said


@pytest.mark.parametrize(("question", "sentence", "offered"), [
    # a phrase with the parenthesis after it, and two phrases with one between them
    ("What inhibits the enzyme?", "We used an inhibitor of the enzyme, 2-bromopalmitic acid (2BP), in every test.",
     "2-bromopalmitic acid (2BP)"),
    ("What is another name for the antigen?", "It is also known as the bone-restricted (BRIL) protein.",
     "the bone-restricted (BRIL) protein"),
    # a series joined by commas and "and"
    ("What describes the genome?", "Its genome is a single-stranded, linear, and nonsegmented RNA of 31 kb.",
     "a single-stranded, linear, and nonsegmented RNA of 31 kb"),
    ("Who must be told?", "You must notify the parents, brothers and sisters.", "the parents, brothers and sisters"),
    # the question's own noun right after the phrase
    ("Which form do I fill in?", "Download and fill in a part 8 claim form.", "a part 8 claim form"),
    # a scene set before the question does not cut the phrase: only the question's own words do
    ("My dog had a microchip. What information do I need to make a report?",
     "You will need the microchip number to make a report.", "the microchip number"),
    # a possessive opens the phrase as an article does (session 26): "your birth certificate", not "birth certificate"
    ("What identity document do I have to submit?", "With the form, you need to send your birth certificate.",
     "your birth certificate"),
    ("Wen muss ich informieren?", "Sie müssen sofort Ihre Krankenkasse informieren.", "Ihre Krankenkasse"),
])
def test_a_whole_answer_is_offered_where_the_cuts_split_it(question: str, sentence: str, offered: str) -> None:
    # session 25: the phrases were cut at every parenthesis, comma and word of the question (scene included), so the
    # gold was offered whole for 340 of 602 training questions; with these joins 424 (docs/eval/answers.md)
    from shelfwise.core.answers.short import asked_kind, nominal_features

    phrases = [sentence[s.start:s.end] for s, _ in nominal_features(asked_kind(question), sentence, question)]
    assert offered in phrases, phrases


def test_a_bare_date_time_or_count_is_no_phrase_for_what_or_who() -> None:
    # "2 working days" answers no "who", "09:30" no "what" (those would ask how long and when)
    from shelfwise.core.answers.short import nominal_features

    def offered(kind: str, sentence: str, question: str) -> list[str]:
        return [sentence[s.start:s.end] for s, _ in nominal_features(kind, sentence, question)]

    payroll = "The payroll team answers questions at payroll@example.org within 2 working days."
    assert "2 working days" not in offered("name", payroll, "Who answers payroll questions?")
    handover = "Your buddy takes you to the IT hand-over at 09:30, where you set up MFA."
    assert "09:30" not in offered("thing", handover, "What do I set up at the IT hand-over?")
    assert "MFA" in offered("thing", handover, "What do I set up at the IT hand-over?")


def test_the_word_that_ties_the_asked_value_picks_among_values() -> None:
    # "within how many days" is answered by the value said "within 30 days", not by "more than 90 days"
    late = "Claims submitted more than 90 days after the expense are not reimbursed."
    due = "Submit expense claims in the Ledgerly app within 30 days of returning from your trip."
    sentences = [Extracted(late, 1, 0, len(late), 0.9), Extracted(due, 1, len(late) + 1, len(late) + 1 + len(due), 0.8)]
    short = short_answer("Within how many days must I submit an expense claim?", sentences, show=SHOW_ALL)
    assert short is not None and short.text == "30 days"
    short = short_answer("After how many days are claims no longer reimbursed?", sentences, show=SHOW_ALL)
    # the sentence's own bound stays with its value (session 26); the question's "after" is not repeated
    assert short is not None and short.text == "more than 90 days"


def test_where_the_model_reads_a_clause_weighs_less_than_a_noun_phrase() -> None:
    # session 26: the per-token reading favours a phrase that copies its sentence ("ROS accumulation was detected in
    # ..."); where the model reads, a phrase holding an auxiliary or copula inside it weighs SpanWeights.model_clause
    from shelfwise.core.answers.phrases import is_clause
    from shelfwise.core.answers.short import WEIGHTS, SpanWeights, value_candidates
    from shelfwise.core.models.backend import Likelihoods

    class Even:  # reads every phrase alike: only the ranker and the clause weight differ
        def continuations(self, context, options, *, cancel=None):  # type: ignore[no-untyped-def]
            return Likelihoods(total=[-2.0] * len(options), mean=[-1.0] * len(options), n_tokens=0)

    assert is_clause("ROS accumulation was detected in T cells") and not is_clause("reactive oxygen species")
    assert not is_clause("is detected")  # at an edge: no clause
    # the second clause holds a word of the question ("responses"), so its phrases are offered too
    sentence = ("Excessive reactive oxygen species hinder T cells, and during such responses ROS accumulation was "
                "detected in mice.")
    question = "What molecules hinder T cell responses?"
    s = [Extracted(sentence, 1, 0, len(sentence), 1.0)]
    read = {c.text: c.score for c in value_candidates("thing", question, s, model=Even())}
    flat = {c.text: c.score for c in value_candidates("thing", question, s, SpanWeights(model_mean=3.0), Even())}
    clause = "ROS accumulation was detected in mice"
    assert WEIGHTS.model_clause < 0 and read[clause] == flat[clause] + WEIGHTS.model_clause
    assert read["Excessive reactive oxygen species"] == flat["Excessive reactive oxygen species"]


def test_the_verb_may_is_no_month() -> None:
    from shelfwise.core.answers.typed_spans import date_spans

    def dates(text: str) -> list[str]:
        return [text[s.start:s.end] for s in date_spans(text)]

    assert dates("You may carry over five unused days.") == []
    assert dates("We may meet on 3 May 2026.") == ["on 3 May 2026"]
    assert dates("Bonuses are paid with the May salary.") == ["with the May salary"]
    short = short_answer("When can I carry over leave?", [
        Extracted("You may carry over five unused days to the next year.", 1, 0, 53, 0.9)], show=SHOW_ALL)
    assert short is None or "may" not in short.text


def test_a_comparison_under_a_negation_is_not_shown_as_the_bound() -> None:
    # "No one may work more than 10 overtime hours" allows at most 10: "more than 10" would say the opposite
    def value(question: str, sentence: str) -> str | None:
        short = short_answer(question, [Extracted(sentence, 1, 0, len(sentence), 0.9)], show=SHOW_ALL)
        return short.text if short else None

    assert value("How many overtime hours can I work in a week?",
                 "No one may work more than 10 overtime hours in a single week.") == "10 overtime hours"
    assert value("How many hours per week can I work on a side job?",
                 "Side jobs take no more than 8 hours per week.") == "no more than 8 hours per week"
    # the negation after the bound, in the clause that follows, leaves it
    assert value("After how many days are claims no longer reimbursed?",
                 "Claims submitted more than 90 days after the expense are not reimbursed.") == "more than 90 days"


def test_an_faq_answers_first_word_is_no_name() -> None:
    # the sample FAQ's "A: Come to reception at 09:00 ..." showed "Come" for "Who meets me at reception ...?"
    from shelfwise.core.answers.typed_spans import name_spans

    faq = "A: Come to reception at 09:00 on your first day."
    assert name_spans(faq, "Who meets me at reception?") == []
    short = short_answer("Who meets me at reception on my first day?", [Extracted(faq, 1, 0, len(faq), 0.9)],
                         show=SHOW_ALL)
    assert short is None or short.text != "Come", short
    named = "A: Marta Ilves handles every report."
    assert [named[s.start:s.end] for s in name_spans(named, "Who handles reports?")] == ["Marta Ilves"]


def test_a_phrase_is_taken_from_a_clause_that_bears_on_the_question() -> None:
    # session 30's sample walk: "Where are the first-aid kits?" showed the second clause, "a defibrillator (AED)
    # hangs next to the reception desk in Rotterdam", which holds no word of the question
    from shelfwise.core.answers.phrases import bearing_clauses, place_phrases
    from shelfwise.core.answers.short import stems

    kits = ("First-aid kits are kept at reception and in the hardware lab, and a defibrillator (AED) hangs next to "
            "the reception desk in Rotterdam.")
    asked = stems("Where are the first-aid kits?")
    clauses = bearing_clauses(kits, lambda t: len(asked & stems(t)))
    assert [kits[a:b] for a, b in clauses] == ["First-aid kits are kept at reception and in the hardware lab"]
    # no clause holds the question's words, or the comma closes a series: the sentence whole
    series = "Gastric acids, pepsin, and trypsin reduce the vaccine's effect."
    assert bearing_clauses(series, lambda t: len(stems("What reduces the effect?") & stems(t))) == [(0, len(series))]
    assert bearing_clauses(kits, lambda t: 0) == [(0, len(kits))]
    # where the kits are: the places joined by "and" kept together, in German too
    def places(text: str, question: str) -> list[str]:
        from shelfwise.core.answers.short import _stem

        asked = stems(question) | set(re.findall(r"\d+", question))  # as nominal_features: its numbers too
        return [text[p.start:p.end] for p in place_phrases(text, asked, _stem)]  # the product's word stem

    assert "at reception and in the hardware lab" in places(kits, "Where are the first-aid kits?")
    german = "Erste-Hilfe-Kästen stehen am Empfang und im Labor, der Defibrillator hängt neben der Tür."
    assert "am Empfang und im Labor" in places(german, "Wo sind die Erste-Hilfe-Kästen?")
    # cut before the question's own words: "in Erfurt", not "in Erfurt on 17 July 1505"
    luther = "Luther sold his books and entered a closed Augustinian cloister in Erfurt on 17 July 1505."
    assert places(luther, "Where did Luther go on 17 July 1505?") == ["in Erfurt"]
    short = short_answer("Where are the first-aid kits?", [Extracted(kits, 1, 0, len(kits), 1.0)], show=SHOW_ALL)
    assert short is not None and "reception" in short.text and "defibrillator" not in short.text, short
