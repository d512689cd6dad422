"""Adaptive retrieval's inference loop (core/adaptive.py) with scripted backends: no model."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from shelfwise.app.cli.render import render_answer_text
from shelfwise.core.answers.adaptive import (
    DEFAULT_THRESHOLD,
    UNKNOWN,
    answer_adaptive,
    decide,
    decompose,
    get_threshold,
    merge_hits,
    model_id,
    p_retrieve_from,
    parse_subquestions,
    set_threshold,
    split_rule,
    threshold_key,
)
from shelfwise.core.answers.answer import NOT_FOUND_TEXT
from shelfwise.core.answers.ask import answer_question
from shelfwise.core.answers.types import AnswerEvents
from shelfwise.core.models.fake import FakeBackend
from tests.test_answer import HITS, FakeShelf, ScriptedBackend


# --------------------------------------------------------------------------- decomposition
@pytest.mark.parametrize(("question", "parts"), [
    ("How many days of leave do I get?", ["How many days of leave do I get?"]),
    ("What are the rules for travel and meals?", ["What are the rules for travel and meals?"]),
    ("Who leads the design team and where does it meet?", ["Who leads the design team?", "Where does it meet?"]),
    ("Who approves leave? How early must I ask?", ["Who approves leave?", "How early must I ask?"]),
    ("Who approves leave?; how early must I ask?", ["Who approves leave?", "How early must I ask?"]),
    ("My son is 17 and is at school. Can I claim child benefit and how much is it?",
     ["My son is 17 and is at school. Can I claim child benefit and how much is it?"]),
    ("I moved house. Who do I tell? What does it cost?", ["I moved house. Who do I tell?", "What does it cost?"]),
])
def test_split_rule(question: str, parts: list[str]) -> None:
    assert split_rule(question) == parts


def test_parse_subquestions_accepts_related_lines_only() -> None:
    q = "Which team does Ann Lee lead and in which room does that team review designs?"
    good = " Which team does Ann Lee lead?\n- Where does the team review designs?\n\nQuestion: x"
    assert parse_subquestions(good, q) == ["Which team does Ann Lee lead?", "Where does the team review designs?"]
    assert parse_subquestions(" " + q, q) is None  # one line: not a decomposition
    assert parse_subquestions(" Who is the king of France?\n- What is the weather?", q) is None  # unrelated
    assert parse_subquestions(" a\n- b\n- c\n- d", q) is None


def test_decompose_asks_the_model_only_for_long_single_questions() -> None:
    b = ScriptedBackend(" Which team does Ann Lee lead?\n- Where does that team review its designs?")
    long_q = "Which team does Ann Lee lead and in which room does that team usually review its designs?"
    assert decompose(b, "Who approves leave?") == ["Who approves leave?"] and b.prompts == []
    assert decompose(b, long_q) == ["Which team does Ann Lee lead?", "Where does that team review its designs?"]
    assert decompose(b, long_q, use_model=False) == [long_q]
    many = "A? B? C? D? E?"
    assert decompose(None, many, max_sub=3) == ["A?", "B?", "C? D? E?"]


# --------------------------------------------------------------------------- the decision
def test_p_retrieve_from_likelihoods() -> None:
    assert p_retrieve_from(-1.0, -1.0) == pytest.approx(0.5)
    assert p_retrieve_from(-1.0, -5.0) == pytest.approx(1 / (1 + math.exp(4)))
    assert p_retrieve_from(-5.0, -1.0) > 0.95
    assert p_retrieve_from(None, math.log(0.8)) == pytest.approx(0.8)  # greedy answer was the abstention
    assert p_retrieve_from(None, math.log(0.1)) == 0.5


def _closed_book_backend(answer: str, lp_answer: float, lp_unknown: float) -> ScriptedBackend:
    return ScriptedBackend(answer + "\nQuestion: next",
                           lambda cand, query: lp_unknown if query.strip() == UNKNOWN else lp_answer)


def test_decide_reads_the_two_way_likelihood() -> None:
    d = decide(_closed_book_backend("Paris", -0.5, -6.0), "What is the capital of France?")
    assert d.model_answer == "Paris" and d.p_retrieve == pytest.approx(1 / (1 + math.exp(5.5)))
    assert d.cost.tokens > 0
    d = decide(_closed_book_backend("I don't know", -0.5, -0.2), "What is our leave policy?")
    assert d.model_answer == "" and d.logp_answer is None and d.p_retrieve == pytest.approx(math.exp(-0.2))


def test_threshold_is_stored_per_model(tmp_path) -> None:
    s = FakeShelf(tmp_path, FakeBackend())
    assert model_id(s.backend) == "fake" and threshold_key(s.backend) == "adaptive_threshold:fake"
    assert get_threshold(s.store, s.backend) == DEFAULT_THRESHOLD
    set_threshold(s.store, s.backend, 0.31)
    assert get_threshold(s.store, s.backend) == 0.31
    assert s.store.get_meta("adaptive_threshold:fake") == 0.31

    class Named(FakeBackend):  # the one identity rule: a backend's model_id, whatever its file is called
        model_path = Path("/x/my-model.gguf")

        @property
        def model_id(self) -> str:
            return "gguf:0123456789abcdef"

    assert model_id(Named()) == "gguf:0123456789abcdef"
    assert get_threshold(s.store, Named()) == DEFAULT_THRESHOLD  # another model: its own threshold
    s.store.close()


# --------------------------------------------------------------------------- the loop
def _router(closed: dict[str, tuple[str, float]], docs_answer: str = "25 days [1]."):
    """A backend answering closed-book prompts from ``closed`` (question -> (answer, log P(answer))) with
    log P(unknown) = -2, and passage prompts with ``docs_answer``."""
    def reply(prompt: str) -> str:
        last = prompt[prompt.rindex("Question:") + len("Question:"):].split("\n")[0].strip()
        if "Sources:" in prompt:
            return docs_answer
        if prompt.rstrip().endswith("Sub-questions:\n-"):
            return ""
        return closed.get(last, ("I don't know", 0.0))[0]

    def loglik(cand: str, query: str) -> float:
        q = cand.split("\n")[0][len("Question: "):]
        if query.strip() == UNKNOWN:
            return -2.0
        return closed.get(q, ("", -9.0))[1]

    return ScriptedBackend(reply, loglik)


def _events() -> tuple[list[tuple[str, str]], AnswerEvents]:
    events: list[tuple[str, str]] = []
    return events, AnswerEvents(on_search=lambda r: events.append(("search", r.query)),
                                on_extract=lambda a: events.append(("extract", a.text)),
                                on_token=lambda t: events.append(("token", t)),
                                on_generated=lambda a: events.append(("generated", a.generated or "withdrawn")))


def test_confident_model_answers_without_retrieval(tmp_path) -> None:
    """Nothing retrieved: not found in the documents, the model's own answer kept aside and said to be its own."""
    s = FakeShelf(tmp_path, _router({"What is the capital of France?": ("Paris", -0.1)}))
    events, recorded = _events()
    ans = answer_question(s, "What is the capital of France?", adaptive=True, events=recorded)
    assert s.searches == [] and ans.text == NOT_FOUND_TEXT and not ans.found and ans.citations == []
    assert ans.generated == "" and ans.generated_raw == "Paris" and "own knowledge" in ans.generation_note
    assert events == [("extract", NOT_FOUND_TEXT), ("generated", "withdrawn")]  # nothing written now: no tokens
    [step] = ans.steps
    assert step.source == "model" and step.answer == "Paris" and step.p_retrieve < 0.5 and step.hits == []
    assert "model's own knowledge" in render_answer_text(ans)


def test_unsure_model_retrieves_and_answers_as_one_walk_does(tmp_path) -> None:
    """One sub-question sent to the tree: the same extraction, events and grounding as the plain path."""
    s = FakeShelf(tmp_path, _router({}))
    events, recorded = _events()
    ans = answer_question(s, "How much leave do new staff get?", adaptive=True, events=recorded)
    assert s.searches == ["How much leave do new staff get?"]
    plain_events, plain_recorded = _events()
    plain = answer_question(FakeShelf(tmp_path, _router({})), "How much leave do new staff get?",
                            events=plain_recorded)
    assert (ans.text, ans.generated, ans.found) == (plain.text, plain.generated, plain.found)
    assert events == plain_events
    assert ans.text == "New employees receive 25 days of paid annual leave per year. [1]"
    # the model's "25 days [1]." says nothing the value shown first and the sentence do not: streamed, not kept
    assert ans.generated == "" and "says nothing" in ans.generation_note and [c.hit for c in ans.citations] == [HITS[0]]
    assert ans.short is not None and ans.short.text == "25 days"
    tokens = [t for name, t in events if name == "token"]
    assert len(tokens) > 1 and "".join(tokens) == "25 days [1]."  # streamed piece by piece
    assert [name for name, _ in events] == ["search", "extract", *["token"] * len(tokens), "generated"]
    [step] = ans.steps
    assert step.source == "documents" and step.p_retrieve >= 0.5 and step.hits == HITS
    assert step.answer == ans.text and ans.search is not None  # the model's text was not kept


def test_threshold_from_the_store_moves_the_decision(tmp_path) -> None:
    s = FakeShelf(tmp_path, _router({"Who wrote Hamlet?": ("Shakespeare", -2.5)}))
    assert answer_adaptive(s, "Who wrote Hamlet?").steps[0].source == "documents"  # p = 0.62
    set_threshold(s.store, s.backend, 0.7)
    assert answer_adaptive(s, "Who wrote Hamlet?").steps[0].source == "model"


def test_multi_step_narrative_ends_in_a_final_answer(tmp_path) -> None:
    b = _router({"Who leads the design team?": ("Ann Lee", -0.1)}, docs_answer="In room 4B [2].")
    s = FakeShelf(tmp_path, b)
    ans = answer_adaptive(s, "Who leads the design team and where does it meet?")
    assert [(st.question, st.source) for st in ans.steps] == [
        ("Who leads the design team?", "model"), ("Where does it meet?", "documents")]
    final_prompt = b.prompts[-1]
    # a step from the documents answers with what its passages say (the extracted sentence), never with a text the
    # model wrote from them, which no check read: the model's "In room 4B" is in no step
    docs_step = ans.steps[1]
    assert docs_step.answer.startswith(HITS[0].text) and "4B" not in docs_step.answer
    assert "Facts:\n- Who leads the design team? Ann Lee\n- Where does it meet? New employees receive" in final_prompt
    assert final_prompt.endswith("Question: Who leads the design team and where does it meet?\nAnswer:")
    # the answer is extracted from the steps' passages; the final "In room 4B" is in none of them: withdrawn
    assert ans.found and ans.sentences and {c.hit.node_id for c in ans.citations} <= {h.node_id for h in HITS}
    assert ans.generated == "" and ans.generated_raw == "In room 4B [2]."
    assert ans.withdrawn and "not shown" in ans.generation_note
    # the answer is each part's own, one a line, where it came from said (not one sentence read for both parts)
    first, second = ans.text.splitlines()
    assert first.startswith("Who leads the design team? -> Ann Lee  (the model's own knowledge, not checked")
    assert second.startswith(f"Where does it meet? -> {HITS[0].text}") and "(searched the documents" in second
    rendered = render_answer_text(ans)
    assert rendered.startswith("Answer:\n1. Who leads the design team? -> Ann Lee") and "Steps:" not in rendered


def test_several_retrievals_extract_once_then_stream_the_final_answer(tmp_path) -> None:
    s = FakeShelf(tmp_path, _router({}, docs_answer="New employees receive 25 days [1]."))
    events, recorded = _events()
    ans = answer_question(s, "How much leave do new staff get? Who approves it?", adaptive=True, events=recorded)
    names = [name for name, _ in events]
    assert names[:3] == ["search", "search", "extract"] and names[-1] == "generated"
    assert set(names[3:-1]) == {"token"} and len(names) > 5  # the final answer, streamed
    assert "".join(t for name, t in events if name == "token") == ans.generated_raw == \
        "New employees receive 25 days [1]."
    assert ans.generated == "" and "not shown" in ans.generation_note  # it says no name for "Who approves it?"
    assert [st.source for st in ans.steps] == ["documents", "documents"] and ans.found and ans.sentences


def test_all_retrievals_not_found(tmp_path) -> None:
    s = FakeShelf(tmp_path, _router({}), hits=[])
    ans = answer_adaptive(s, "What is the moon made of?")
    assert not ans.found and ans.text == NOT_FOUND_TEXT


def test_merge_hits_round_robin_without_duplicates() -> None:
    a, b, c = HITS
    assert merge_hits([[a, b], [a, c]], 5) == [a, b, c]
    assert merge_hits([[a, b], [c]], 2) == [a, c]


def test_decompose_stops_when_the_model_repeats_the_question() -> None:
    q = "Which team does Ann Lee lead and in which room does that team usually review its designs?"
    b = ScriptedBackend(f" {q}\n- " + "filler " * 50)
    assert decompose(b, q) == [q]
    [prompt] = b.prompts
    assert prompt.endswith(f"Question: {q}\nSub-questions:\n-")


def test_scenarios_are_not_sent_to_the_model() -> None:
    b = ScriptedBackend(" x")
    q = "My father died last month and I am his only child. Can I claim the funeral payment for him and his wife?"
    assert decompose(b, q) == [q] and b.prompts == []
