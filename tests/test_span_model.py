"""The answer model's reading of the phrases of a thing (``core/answers/span_model.py``, issue 48, session 30): the
bundled Gemma 3 270M base reads each phrase after three worked examples of a short phrase copied from its sentence.
Without them it favours a phrase that copies more of the sentence; with them, the short answer (on the training
items: docs/eval/answers.md, "Session 30"). The real bundled model, through the product's backend."""

from __future__ import annotations

from typing import Any

from shelfwise.core.answers.short import WEIGHTS
from shelfwise.core.answers.span_model import EXAMPLES, FEW_SHOT, PROMPT, phrase_likelihoods, read_phrases

SENTENCE = "The committee meets in the council chamber on the first floor of the old town hall."
QUESTION = "Where does the committee meet?"
PHRASES = ["the council chamber", "the council chamber on the first floor of the old town hall", "the first floor"]


def test_the_worked_examples_are_in_the_prompts_layout() -> None:
    assert len(EXAMPLES) == 3 and FEW_SHOT.count("\nQuestion: ") == 3 and FEW_SHOT.endswith("\n\n")
    for sentence, question, answer in EXAMPLES:
        assert answer in sentence  # a phrase copied from its sentence
        assert PROMPT.format(sentence=sentence, question=question) + f" {answer}\n\n" in FEW_SHOT


def test_after_the_examples_the_short_phrase_reads_best(llama_backend: Any) -> None:
    bare = phrase_likelihoods(llama_backend, SENTENCE, QUESTION, PHRASES)
    shown = phrase_likelihoods(llama_backend, SENTENCE, QUESTION, PHRASES, prefix=FEW_SHOT)
    assert bare is not None and shown is not None
    per_token = [mean for _, mean in shown]
    assert bare[1][1] > bare[0][1]  # without the examples: the phrase that copies the sentence on
    assert per_token[0] == max(per_token), per_token  # with them: the council chamber
    # the product's reading is the one with the examples, weighed as the short answer weighs it
    read = read_phrases(llama_backend, SENTENCE, QUESTION, PHRASES, WEIGHTS)
    assert [r[0] for r in read] == shown
    assert read[0][1] == max(r[1] for r in read)


def test_where_the_kits_are_read_from_their_own_clause(llama_backend: Any) -> None:
    # session 30's sample walk with generation: the reading put "a defibrillator (AED) hangs next to the reception
    # desk in Rotterdam" first; the phrases now come from the clause about the kits, the places joined by "and"
    from shelfwise.core.answers.short import value_candidates
    from shelfwise.core.answers.types import Extracted

    kits = ("First-aid kits are kept at reception and in the hardware lab, and a defibrillator (AED) hangs next to "
            "the reception desk in Rotterdam.")
    got = value_candidates("place", "Where are the first-aid kits?", [Extracted(kits, 1, 0, len(kits), 1.0)],
                           model=llama_backend)
    assert got and got[0].text == "at reception and in the hardware lab", [c.text for c in got]
    assert not any("defibrillator" in c.text or "Rotterdam" in c.text for c in got)
