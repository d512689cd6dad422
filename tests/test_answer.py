"""Answers with citations (core/answer.py): prompts, citation clean-up, not-found logic, streaming. No model.

``ScriptedBackend`` and ``FakeShelf`` are reused by ``test_adaptive*.py`` and ``test_answer_eval.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from shelfwise.app.cli.render import render_answer_text, render_sources
from shelfwise.core.answers.answer import (
    CITE_MIN_SCORE,
    FOUND_MIN_SCORE,
    NOT_FOUND_TEXT,
    Written,
    build_prompt,
    clean_citations,
    detect_family,
    is_instruction_tuned,
    prompt_family,
    render_chat,
    write_answer,
)
from shelfwise.core.answers.ask import answer_question
from shelfwise.core.answers.types import AnswerEvents
from shelfwise.core.models.backend import Cancelled, Cost, Generation, Likelihoods
from shelfwise.core.models.fake import FakeBackend
from shelfwise.core.models.generation import StreamText
from shelfwise.core.models.loaded import Models
from shelfwise.core.navigation.request import SearchRequest
from shelfwise.core.navigation.trace import Hit, SearchResult, Trace
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.settings import Settings
from shelfwise.core.store.db import Store
from shelfwise.ingest.model import Location
from tests.fakes import HashEmbedder


class ScriptedBackend(FakeBackend):
    """FakeBackend whose generations come from ``reply(prompt)`` and whose likelihoods from ``loglik(query)``."""

    def __init__(self, reply: Callable[[str], str] | str = "", loglik: Callable[[str, str], float] | None = None):
        super().__init__()
        self.reply = reply if callable(reply) else (lambda _p, r=reply: r)
        self.loglik = loglik
        self.prompts: list[str] = []

    def generate(self, prompt: str, *, max_tokens: int = 256, stop: Sequence[str] = (), temperature: float = 0.0,
                 cancel=None, repeat_penalty: float = 1.0) -> Iterator[str]:
        self.prompts.append(prompt)
        stream = StreamText(stop)
        words = self.reply(prompt).split(" ")
        n = 0
        for i, w in enumerate(words[:max_tokens]):
            if cancel is not None and cancel():
                return Generation(stream.text, Cost(1, n), "cancelled")
            out = stream.feed((w if i == 0 else " " + w).encode())
            n += 1
            if out:
                yield out
            if stream.stopped:
                break
        tail = stream.finish()
        if tail:
            yield tail
        return Generation(stream.text, Cost(1, len(prompt.split()) + n), "stop" if stream.stopped else "eos")

    def likelihood(self, context, candidates, query, *, cancel=None) -> Likelihoods:
        if self.loglik is None:
            return super().likelihood(context, candidates, query, cancel=cancel)
        vals = [self.loglik(c, query) for c in candidates]
        return Likelihoods(vals, vals, len(query.split()), Cost(1, len(query.split())))


def make_hit(i: int, text: str, score: float, heading: str = "Leave", page: int | None = None) -> Hit:
    return Hit(node_id=100 + i, document_id=1, text=text, score=score, path="/docs/hr.pdf", title="HR handbook",
               heading_path=["Policies", heading], location=Location(page=page or i))


HITS = [
    make_hit(1, "New employees receive 25 days of paid annual leave per year.", 0.9),
    make_hit(2, "Sick leave needs a doctor's note after three days.", 0.4, "Sick leave"),
    make_hit(3, "Meals abroad are covered up to 40 euros per day.", 0.2, "Travel"),
]


class FakeShelf(LibraryWalk):
    """The walk answer_question is handed, with canned hits: it fills in only ``walk`` (``search`` is
    LibraryWalk's own, the empty-scope note included); a real store, a scripted backend, a hashing embedder."""

    def __init__(self, tmp_path: Path, backend, hits: Callable[[str], list[Hit]] | list[Hit] = HITS) -> None:
        settings = Settings(db_path=tmp_path / "lib.db")
        super().__init__(Store(settings.db_path), Models(settings, backend=backend, embedder=HashEmbedder()))
        self._hits = hits if callable(hits) else (lambda _q, h=list(hits): h)
        self.searches: list[str] = []

    def walk(self, request: SearchRequest, cancel=None) -> SearchResult:
        question = request.question
        self.searches.append(question)
        return SearchResult(question, list(self._hits(question)), Trace(question))


def written(shelf: FakeShelf, question: str, **kwargs) -> Written:
    """The model's answer as ``write_answer`` gives it (what ``answer_question`` then checks for grounding)."""
    result = shelf.search(SearchRequest(question))
    return write_answer(shelf.backend, question, result.hits[: shelf.settings.answer_passages], result=result,
                        **kwargs)


@pytest.fixture
def shelf(tmp_path):
    s = FakeShelf(tmp_path, ScriptedBackend("New staff get 25 days [1].\n\nQuestion: more"))
    yield s
    s.store.close()


# --------------------------------------------------------------------------- prompts
def test_completion_prompt_numbers_passages_and_ends_with_the_answer_cue() -> None:
    p = build_prompt("How  much leave?", HITS)
    assert p.endswith("\n\nQuestion: How much leave?\nAnswer:")
    tail = p[p.rindex("Sources:"):]
    assert "[1] New employees receive 25 days" in tail and "[3] (Travel) Meals abroad" in tail
    assert "[4]" not in tail


def test_completion_prompt_cuts_long_passages() -> None:
    long = make_hit(1, "word " * 500, 0.9)
    assert len(build_prompt("q?", [long]).split()) < 200


def test_steps_prompt_lists_facts() -> None:
    p = build_prompt("Where?", HITS[:1], facts=[("Who leads?", "Ann Lee.")])
    assert "Facts:\n- Who leads? Ann Lee.\n\nQuestion: Where?\nAnswer:" in p


@pytest.mark.parametrize(("template", "family"), [
    ("{{ bos_token }}{% for m in messages %}<start_of_turn>{{ m.role }}\n...", "gemma"),
    ("{% for m in messages %}<|im_start|>{{ m.role }}...", "chatml"),
    ("<|start_header_id|>{{ role }}<|end_header_id|>", "llama3"),
    ("{{ '[INST] ' + content + ' [/INST]' }}", "inst"),
    ("<|user|>{{ c }}<|end|><|assistant|>", "phi3"),
    ("something else", None),
    (None, None),
])
def test_detect_family(template, family) -> None:
    assert detect_family(template) == family


def test_chat_prompt_for_instruction_tuned_gemma() -> None:
    class Gemma(FakeBackend):
        model_path = "/models/gemma-3-1b-it-Q4_K_M.gguf"

        def chat_template(self) -> str:
            return "<start_of_turn>user ..."

    b = Gemma()
    assert is_instruction_tuned(b) and prompt_family(b) == "gemma"
    p = build_prompt("How much leave?", HITS, family="gemma")
    assert p.startswith("<start_of_turn>user\nAnswer the question using only")
    assert p.endswith("Question: How much leave?<end_of_turn>\n<start_of_turn>model\n")
    assert render_chat("chatml", "hi") == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_base_model_with_template_gets_completion_prompt() -> None:
    class Base(FakeBackend):
        model_path = "/models/gemma-3-270m-q4_k_m.gguf"

        def chat_template(self) -> str:
            return "<start_of_turn>"

        def meta(self, key: str) -> str | None:
            return {"general.name": "Gemma 3 270m"}.get(key)

    assert prompt_family(Base()) is None
    assert prompt_family(FakeBackend()) is None  # no chat_template at all


# --------------------------------------------------------------------------- citations
def test_clean_citations_keeps_only_existing_numbers() -> None:
    text, cited = clean_citations("Yes [2]. Also [7], see [1, 9] and [3][2].", 3)
    assert text == "Yes [2]. Also, see [1] and [3][2]."
    assert cited == [2, 1, 3]
    assert clean_citations("No sources [4].", 3) == ("No sources.", [])


# --------------------------------------------------------------------------- answering
def recorder() -> tuple[list[tuple[str, str]], AnswerEvents]:
    """The events of an answer as (name, text) pairs, and the AnswerEvents that record them."""
    events: list[tuple[str, str]] = []
    return events, AnswerEvents(on_search=lambda r: events.append(("search", r.query)),
                                on_extract=lambda a: events.append(("extract", a.text)),
                                on_token=lambda t: events.append(("token", t)),
                                on_generated=lambda a: events.append(("generated", a.generated or "withdrawn")))


def test_the_extracted_sentence_comes_first_then_the_checked_generation(shelf) -> None:
    events, recorded = recorder()
    ans = answer_question(shelf, "How much paid annual leave do new employees receive?", events=recorded)
    extracted = "New employees receive 25 days of paid annual leave per year. [1]"
    tokens = [t for name, t in events if name == "token"]
    assert events == [("search", "How much paid annual leave do new employees receive?"), ("extract", extracted),
                      *(("token", t) for t in tokens), ("generated", "New staff get 25 days [1].")]
    assert len(tokens) > 2 and "".join(tokens) == "New staff get 25 days [1]."  # the model's pieces, streamed
    assert ans.found and ans.text == extracted and [s.number for s in ans.sentences] == [1]
    sentence = ans.sentences[0]
    assert HITS[0].text[sentence.start:sentence.end] == sentence.text
    assert [(c.number, c.hit.node_id) for c in ans.citations] == [(1, HITS[0].node_id)]
    # the model's "25 days" is in passage [1]: shown beside the extracted sentence
    assert ans.generated == "New staff get 25 days [1]." and ans.generation_note == ""
    assert ans.search is not None and ans.tokens > 0 and ans.first_seconds <= ans.seconds


def test_a_generated_number_not_in_the_cited_passage_is_not_shown(tmp_path) -> None:
    s = FakeShelf(tmp_path, ScriptedBackend("New staff get 10 days [1]."))
    events, recorded = recorder()
    ans = answer_question(s, "How much paid annual leave do new employees receive?", events=recorded)
    assert ans.text.startswith("New employees receive 25 days") and ans.generated == ""
    assert ans.generated_raw == "New staff get 10 days [1]." and "\u201c10\u201d" in ans.generation_note
    # streamed as it was written, then withdrawn by one event
    assert "".join(t for name, t in events if name == "token") == "New staff get 10 days [1]."
    assert events[-1] == ("generated", "withdrawn") and ans.withdrawn
    # the model's number is in a passage, but not in the one it cites: still refused
    s = FakeShelf(tmp_path, ScriptedBackend("Meals are covered up to 25 euros [3]."))
    assert answer_question(s, "How much are meals covered abroad?").generated == ""


def test_no_generation_when_switched_off(tmp_path) -> None:
    b = ScriptedBackend("New staff get 25 days [1].")
    s = FakeShelf(tmp_path, b)
    events, recorded = recorder()
    ans = answer_question(s, "How much leave?", generate=False, events=recorded)
    assert ans.found and ans.generated == "" and ans.generation_note == "" and b.prompts == []
    assert [name for name, _ in events] == ["search", "extract"] and not ans.withdrawn


def test_generation_streams_tokens_and_cites(shelf) -> None:
    tokens: list[str] = []
    w = written(shelf, "How much leave?", on_token=tokens.append)
    assert len(tokens) > 2 and "".join(tokens) == "New staff get 25 days [1]."
    assert w.found and w.text == "New staff get 25 days [1]."
    assert [(c.number, c.hit.node_id) for c in w.citations] == [(1, HITS[0].node_id)]


def test_answer_uses_at_most_answer_passages(shelf) -> None:
    shelf.settings = replace(shelf.settings, answer_passages=2)
    answer_question(shelf, "q?")
    prompt = shelf.backend.prompts[-1]
    assert "[2]" in prompt[prompt.rindex("Sources:"):] and "[3]" not in prompt[prompt.rindex("Sources:"):]


def test_invalid_citations_are_dropped(tmp_path) -> None:
    s = FakeShelf(tmp_path, ScriptedBackend("Take the form [3] and [9]."))
    ans = written(s, "q?")
    assert ans.text == "Take the form [3] and." and [c.number for c in ans.citations] == [3]
    assert ans.citations[0].hit is HITS[2]


def test_uncited_answer_gets_best_passage_only_when_strong(tmp_path) -> None:
    strong = FakeShelf(tmp_path, ScriptedBackend("Twenty-five days."))
    tokens: list[str] = []
    ans = written(strong, "q?", on_token=tokens.append)
    assert ans.text == "Twenty-five days. [1]" and "".join(tokens) == ans.text
    assert [c.number for c in ans.citations] == [1]
    weak_hits = [make_hit(1, "x", (FOUND_MIN_SCORE + CITE_MIN_SCORE) / 2)]
    weak = FakeShelf(tmp_path, ScriptedBackend("Twenty-five days."), weak_hits)
    ans = written(weak, "q?")
    assert ans.found and ans.text == "Twenty-five days." and ans.citations == []


@pytest.mark.parametrize("hits", [[], [make_hit(1, "unrelated", FOUND_MIN_SCORE / 2)]])
def test_not_found_without_calling_the_model(tmp_path, hits) -> None:
    b = ScriptedBackend("invented")
    s = FakeShelf(tmp_path, b, hits)
    events, recorded = recorder()
    ans = answer_question(s, "What is the moon made of?", events=recorded)
    assert not ans.found and ans.text == NOT_FOUND_TEXT and ans.citations == []
    assert events == [("search", "What is the moon made of?"), ("extract", NOT_FOUND_TEXT)] and b.prompts == []


def test_model_abstaining_means_not_found(tmp_path) -> None:
    w = written(FakeShelf(tmp_path, ScriptedBackend("I don't know.")), "q?")
    assert not w.found and w.text == NOT_FOUND_TEXT
    ans = answer_question(FakeShelf(tmp_path, ScriptedBackend("I don't know.")), "How much leave?")
    assert ans.found and ans.generated == "" and "did not find" in ans.generation_note


def test_cancel_during_generation(tmp_path) -> None:
    s = FakeShelf(tmp_path, ScriptedBackend("one two three four five six"))
    calls = iter(range(100))
    with pytest.raises(Cancelled):
        written(s, "q?", cancel=lambda: next(calls) > 2)


def test_with_the_fake_backend(tmp_path) -> None:
    """The documented FakeBackend (echoes the first [1] line) works end to end."""
    ans = written(FakeShelf(tmp_path, FakeBackend()), "leave?")
    assert ans.found and ans.text.startswith("According to the passages") and ans.citations


# --------------------------------------------------------------------------- rendering
def test_render_answer_text(shelf) -> None:
    ans = answer_question(shelf, "How much paid annual leave do new employees receive?")
    assert render_answer_text(ans) == (
        "Answer: 25 days [1]\nIn the sources: New employees receive 25 days of paid annual leave per year. [1]\n\n"
        "Model's answer (checked: its numbers, dates and names are in the passages shown; each of its sentences "
        "stands in one sentence of a passage; it gives a number, as the question asks; its number is one the sentences "
        "found give): New staff get 25 days [1].\n\n"
        "Sources:\n[1] HR handbook > Policies > Leave (p. 1) /docs/hr.pdf"
    )
    assert render_sources(ans)[0] == "Sources:"


def test_completion_answers_end_at_the_first_line_break(tmp_path) -> None:
    b = ScriptedBackend("\n Twenty-five days [1].\n[2] More listing text [2].")
    tokens: list[str] = []
    ans = written(FakeShelf(tmp_path, b), "q?", on_token=tokens.append)
    assert ans.text == "Twenty-five days [1]." and "".join(tokens) == ans.text


def _with_cosines(hits: list[Hit], cosines: list[float]):
    from shelfwise.core.navigation.trace import Candidate, Level

    cands = [Candidate(h.node_id, "passage", h.text[:20], h.text, h.score, True,
                       features={"cos_max": c} if c else {}) for h, c in zip(hits, cosines, strict=True)]

    def walk(request, cancel=None) -> SearchResult:
        return SearchResult(request.question, list(hits),
                            Trace(request.question, levels=[Level(1, "passages", cands)]))

    return walk


def test_not_found_uses_the_absolute_cosine_of_the_passages(tmp_path) -> None:
    from shelfwise.core.answers.tuning import MINILM

    FOUND_MIN_COSINE = MINILM.found_min_cosine  # the test shelf's encoder is a MiniLM-like double

    b = ScriptedBackend("Twenty-five days.")
    s = FakeShelf(tmp_path, b)  # every hit has P(relevant) >= 0.2: the relative score alone would answer
    s.walk = _with_cosines(HITS, [FOUND_MIN_COSINE - 0.1, FOUND_MIN_COSINE - 0.01, 0.0])
    ans = answer_question(s, "What is the capital of France?")
    assert not ans.found and ans.text == NOT_FOUND_TEXT and b.prompts == []
    # the evidence is the best of the passages shown; [1] is attached only if the first one is itself strong
    s.walk = _with_cosines(HITS, [FOUND_MIN_COSINE - 0.1, FOUND_MIN_COSINE + 0.2, 0.0])
    ans = written(s, "q?")
    assert ans.found and ans.text == "Twenty-five days." and ans.citations == []
    s.walk = _with_cosines(HITS, [FOUND_MIN_COSINE + 0.2, 0.1, 0.0])
    assert written(s, "q?").text == "Twenty-five days. [1]"


def test_copied_source_lines_are_tidied(tmp_path) -> None:
    b = ScriptedBackend("[3] (Travel) Meals abroad are covered up to 40 euros per day.")
    ans = written(FakeShelf(tmp_path, b), "q?")
    assert ans.text == "Meals abroad are covered up to 40 euros per day. [3]"
    assert [c.number for c in ans.citations] == [3]


def test_the_model_writes_from_the_extracted_sentences_and_cites_their_passages(tmp_path) -> None:
    b = ScriptedBackend("Meals abroad are covered up to 40 euros [1].")
    s = FakeShelf(tmp_path, b)
    tokens: list[str] = []
    ans = answer_question(s, "How much are meals abroad covered per day?",
                          events=AnswerEvents(on_token=tokens.append))
    assert "".join(tokens) == "Meals abroad are covered up to 40 euros [3]."  # renumbered as it streams
    assert ans.sentences and {x.number for x in ans.sentences} == {3}
    prompt = b.prompts[-1]
    assert "[1] (Travel) Meals abroad are covered up to 40 euros per day.\n" in prompt  # numbered 1 for the model
    assert "25 days" not in prompt and "[2]" not in prompt  # the passages it was not extracted from are left out
    assert ans.generated_raw == "Meals abroad are covered up to 40 euros [3]."  # [1] of the prompt is passage 3
    assert ans.generated == "" and "says nothing" in ans.generation_note  # it only repeats the sentence found
    assert [c.number for c in ans.citations] == [3] and ans.citations[0].hit.text == HITS[2].text


def test_the_shipped_judge_ranks_sentences_only_when_switched_on(monkeypatch, tmp_path) -> None:
    """The judge in resources ranks below the embedder on the tune half, so answers use the embedder unless
    SHELFWISE_JUDGE (or Settings.judge) asks for a judge."""
    from shelfwise.core.answers import from_passages
    from shelfwise.core.models.encoders import cross_encoder as judge_module
    from shelfwise.core.shelf import Shelf

    def no_load(*args, **kwargs):
        raise AssertionError("no judge may be loaded when none is switched on")

    monkeypatch.delenv("SHELFWISE_JUDGE", raising=False)
    monkeypatch.setattr(judge_module, "Judge", no_load)
    with Shelf(Settings(db_path=tmp_path / "lib.db"), embedder=HashEmbedder()) as shelf:
        assert shelf.judge is None  # not even looked for: the Judge class was never called
        assert from_passages.sentence_scorer(shelf).__qualname__.startswith("cached_scorer.")  # the embedder ranks


def test_a_walk_unsure_of_its_best_passage_abstains(tmp_path) -> None:
    from shelfwise.core.answers.tuning import MINILM

    ABSTAIN_MAX_P, FOUND_MIN_COSINE = MINILM.abstain_max_p, MINILM.found_min_cosine

    b = ScriptedBackend("Twenty-five days.")
    s = FakeShelf(tmp_path, b)
    unsure = [make_hit(i, h.text, ABSTAIN_MAX_P / (i + 1)) for i, h in enumerate(HITS, 1)]
    s.walk = _with_cosines(unsure, [FOUND_MIN_COSINE + 0.3, 0.1, 0.0])  # close in words, but judged unlikely
    ans = answer_question(s, "How many days of leave?")
    assert not ans.found and ans.text == NOT_FOUND_TEXT and b.prompts == []
    sure = [make_hit(i, h.text, ABSTAIN_MAX_P * 2) for i, h in enumerate(HITS, 1)]
    s.walk = _with_cosines(sure, [FOUND_MIN_COSINE + 0.3, 0.1, 0.0])
    assert answer_question(s, "How many days of leave?").found


def test_citation_stream_renumbers_citations_split_across_pieces() -> None:
    from shelfwise.core.answers.from_passages import CitationStream

    out: list[str] = []
    stream = CitationStream([2, 5], out.append)
    for piece in ["Yes", " [", "1", ",", " 2", "]", " and [", "3] see [x] [2", "]."]:
        stream(piece)
    stream.flush()
    assert "".join(out) == "Yes [2, 5] and see [x] [5]."
    assert out[:2] == ["Yes", " [2, 5]"]  # a piece is held only while it may still be a citation



def test_the_thresholds_and_weights_are_the_encoders_own() -> None:
    """EmbeddingGemma's cosines sit on another scale than MiniLM's: each family gets the values chosen with its
    own (core/answers/tuning.py); a test double or an unknown family gets MiniLM's."""
    from shelfwise.core.answers.tuning import EMBEDDINGGEMMA, MINILM, tuning_for
    from shelfwise.core.models.backend import EncoderProfile

    class Encoder(HashEmbedder):
        def __init__(self, name: str | None) -> None:
            super().__init__()
            self.profile = EncoderProfile(name) if name else None

    assert tuning_for(Encoder("embeddinggemma")) == EMBEDDINGGEMMA
    assert tuning_for(Encoder("minilm")) == MINILM
    assert tuning_for(Encoder("nomic-bert")) == MINILM and tuning_for(Encoder(None)) == MINILM
    assert EMBEDDINGGEMMA != MINILM
