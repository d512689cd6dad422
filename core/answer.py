"""Answers with citations: the passages the walk found, then an answer the generative model writes from them.

``answer_question`` searches (or, with ``adaptive=True``, runs DeepRAG's loop in ``core/adaptive.py``), calls
``on_search(result)`` as soon as the walk is done, then streams the answer through ``on_token`` and returns an
:class:`~shelfwise.core.trace.Answer` whose ``[n]`` markers map to ``Citation(n, hit)``.

Prompts (templates in ``resources/prompts/``):

* a model whose GGUF carries a chat template *and* is instruction-tuned gets ``answer_chat.txt`` rendered in its
  family's turn markers (Gemma, ChatML, Llama 3, ``[INST]``, Phi-3; detected from the template text, no Jinja);
* anything else, including the bundled Gemma 3 270M *base* model, gets the one-shot completion prompt
  ``answer_completion.txt`` ("Sources: [1] ... Question: ... Answer (cite sources like [1]):"), which a base model
  continues far better than it follows instructions.

Every prompt token costs ~2 ms on two cores, so passages are cut to ``PASSAGE_WORDS`` words and generation is
capped at ``MAX_TOKENS`` and stopped at a blank line or a new "Question:".

Not found: no hits, or the best passage's calibrated P(relevant) below ``FOUND_MIN_SCORE`` -> "Not found in your
documents." (``found=False``) without calling the model. After generation, citation numbers that name no passage are
removed; an answer with no citation gets ``[1]`` (the best passage) only if that passage scores at least
``CITE_MIN_SCORE``. Text the model streamed is final except for those two fixes: a client that shows the stream
should replace it with ``Answer.text`` when the call returns.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from shelfwise.core.backend import Cancelled, CancelCheck, Cost, DecisionBackend, Generation
from shelfwise.core.trace import Answer, Citation, Hit, SearchResult

NOT_FOUND_TEXT = "Not found in your documents."
FOUND_MIN_SCORE = 0.05  # best passage's P(relevant) below this: not found (measured; see tests/test_answer_model)
CITE_MIN_SCORE = 0.5  # an uncited answer is attributed to the best passage only above this
PASSAGE_WORDS = 70
MAX_TOKENS = 120
STOPS = ("\n\n", "Question:", "Sources:", "\nFacts:")
TokenCallback = Callable[[str], None]
SearchCallback = Callable[[SearchResult], None]

_CITE = re.compile(r"\s?\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_ABSTAIN = re.compile(r"^\W*(not found|i don'?t know|i do not know|unknown|no answer|the sources do not)", re.I)


# --------------------------------------------------------------------------- prompt texts
@cache
def template(name: str) -> str:
    """A prompt template from ``resources/prompts/`` (``{placeholders}`` filled with ``str.format``)."""
    from shelfwise.resources import path

    return path("prompts", name).read_text(encoding="utf-8")


def clip_words(text: str, n: int = PASSAGE_WORDS) -> str:
    words = text.split()
    return " ".join(words[:n]) + (" ..." if len(words) > n else "")


def format_sources(hits: Sequence[Hit], words: int = PASSAGE_WORDS) -> str:
    """``[n] (heading) text`` lines, one per passage, numbered from 1."""
    lines = []
    for i, h in enumerate(hits, 1):
        head = h.heading_path[-1] if h.heading_path else ""
        lead = f"({head}) " if head and head.lower() not in h.text[:120].lower() else ""
        lines.append(f"[{i}] {lead}{clip_words(h.text, words)}")
    return "\n".join(lines)


def format_facts(facts: Sequence[tuple[str, str]]) -> str:
    return "\n".join(f"- {q} {a}" for q, a in facts)


FAMILIES: dict[str, tuple[str, str]] = {
    # family: (text before the user message, text between the user message and the model's answer)
    "gemma": ("<start_of_turn>user\n", "<end_of_turn>\n<start_of_turn>model\n"),
    "chatml": ("<|im_start|>user\n", "<|im_end|>\n<|im_start|>assistant\n"),
    "llama3": ("<|start_header_id|>user<|end_header_id|>\n\n", "<|eot_id|><|start_header_id|>assistant"
               "<|end_header_id|>\n\n"),
    "phi3": ("<|user|>\n", "<|end|>\n<|assistant|>\n"),
    "inst": ("[INST] ", " [/INST]"),
}


def detect_family(chat_template: str | None) -> str | None:
    """The chat family of a GGUF chat template (from its marker tokens), or None when unknown or absent."""
    if not chat_template:
        return None
    for family, marker in (("gemma", "<start_of_turn>"), ("chatml", "<|im_start|>"),
                           ("llama3", "<|start_header_id|>"), ("phi3", "<|assistant|>"), ("inst", "[INST]")):
        if marker in chat_template:
            return family
    return None


def render_chat(family: str, user: str) -> str:
    """One user turn and the opening of the model's turn, in the family's markers (BOS is the backend's job)."""
    before, after = FAMILIES[family]
    return f"{before}{user.strip()}{after}"


_INSTRUCT_WORDS = {"it", "instruct", "chat", "sft", "dpo", "rlhf", "orpo", "assistant"}


def is_instruction_tuned(backend: Any) -> bool:
    """Whether the GGUF's name/finetune metadata or file name says it was instruction-tuned ("-it", "instruct"...).

    Base models often ship their family's chat template too, so a template alone does not decide the prompt."""
    names = []
    meta = getattr(backend, "meta", None)
    if callable(meta):
        for key in ("general.finetune", "general.name", "general.basename"):
            try:
                names.append(meta(key) or "")
            except Exception:  # noqa: BLE001 - metadata is a hint only
                pass
    names.append(str(getattr(backend, "model_path", "")).rsplit("/", 1)[-1])
    words = {w for n in names for w in re.split(r"[^a-z0-9]+", n.lower()) if w}
    return bool(words & _INSTRUCT_WORDS)


def prompt_family(backend: Any) -> str | None:
    """The chat family to prompt ``backend`` with, or None for the plain completion prompt."""
    get = getattr(backend, "chat_template", None)
    family = detect_family(get() if callable(get) else None)
    if family is None or not is_instruction_tuned(backend):
        return None
    return family


def build_prompt(question: str, hits: Sequence[Hit], family: str | None = None,
                 facts: Sequence[tuple[str, str]] = ()) -> str:
    """The answer prompt for ``question`` over ``hits`` (numbered [1]..[n]); ``facts`` = earlier (question,
    answer) steps of an adaptive run."""
    q = " ".join(question.split())
    sources = format_sources(hits)
    if family is not None:
        facts_text = f"Facts:\n{format_facts(facts)}\n" if facts else ""
        user = template("answer_chat.txt").format(sources=sources, question=q, facts=facts_text)
        return render_chat(family, user)
    if facts:
        return template("answer_steps.txt").format(sources=sources, question=q, facts=format_facts(facts))
    return template("answer_completion.txt").format(sources=sources, question=q)


# --------------------------------------------------------------------------- citations
def clean_citations(text: str, n_sources: int) -> tuple[str, list[int]]:
    """Drop citation numbers outside 1..n_sources (and brackets left empty); return the text and the numbers
    cited, in order of first use. ``[1, 3]`` and ``[1][3]`` both count."""
    cited: list[int] = []

    def fix(m: re.Match[str]) -> str:
        nums = [int(x) for x in re.split(r"\s*[,;]\s*", m.group(1))]
        keep = [x for x in nums if 1 <= x <= n_sources]
        for x in keep:
            if x not in cited:
                cited.append(x)
        if not keep:
            return ""
        lead = " " if m.group(0).startswith((" ", "\n", "\t")) else ""
        return lead + "[" + ", ".join(str(x) for x in keep) + "]"

    out = _CITE.sub(fix, text)
    return out.strip(), cited


def strip_citations(text: str) -> str:
    return _CITE.sub("", text).strip()


def is_abstention(text: str) -> bool:
    return not text.strip() or bool(_ABSTAIN.match(text.strip()))


# --------------------------------------------------------------------------- generation
def stream(backend: DecisionBackend, prompt: str, *, on_token: TokenCallback | None = None,
           max_tokens: int = MAX_TOKENS, stop: Sequence[str] = STOPS, cancel: CancelCheck | None = None
           ) -> Generation:
    """Run ``backend.generate``, forwarding each piece to ``on_token``; returns the final Generation."""
    gen: Iterator[str] = backend.generate(prompt, max_tokens=max_tokens, stop=stop, cancel=cancel)
    pieces: list[str] = []
    while True:
        try:
            piece = next(gen)
        except StopIteration as done:
            result = done.value
            break
        pieces.append(piece)
        if on_token is not None:
            on_token(piece)
    if result is None:
        result = Generation("".join(pieces))
    if result.stopped_by == "cancelled":
        raise Cancelled("answer cancelled")
    return result


@dataclass
class Written:
    """An answer written from passages, before it is wrapped in an Answer."""

    text: str
    citations: list[Citation]
    found: bool
    cost: Cost = field(default_factory=Cost)
    raw: str = ""


def weak_evidence(hits: Sequence[Hit], min_score: float = FOUND_MIN_SCORE) -> bool:
    return not hits or hits[0].score < min_score


def write_answer(
    backend: DecisionBackend, question: str, hits: Sequence[Hit], *, on_token: TokenCallback | None = None,
    family: str | None = None, facts: Sequence[tuple[str, str]] = (), cancel: CancelCheck | None = None,
    min_score: float = FOUND_MIN_SCORE, cite_score: float = CITE_MIN_SCORE, max_tokens: int = MAX_TOKENS,
) -> Written:
    """Write an answer from ``hits`` (already cut to the passages to show), with citations that resolve."""
    hits = list(hits)
    if weak_evidence(hits, min_score):
        if on_token is not None:
            on_token(NOT_FOUND_TEXT)
        return Written(NOT_FOUND_TEXT, [], False)
    prompt = build_prompt(question, hits, family, facts)
    started = [False]

    def forward(piece: str) -> None:  # drop the leading space/newline of the first piece
        if on_token is None:
            return
        if not started[0]:
            piece = piece.lstrip()
            if not piece:
                return
            started[0] = True
        on_token(piece)

    gen = stream(backend, prompt, on_token=forward, max_tokens=max_tokens, cancel=cancel)
    text, cited = clean_citations(gen.text, len(hits))
    if is_abstention(text):
        if on_token is not None and not started[0]:
            on_token(NOT_FOUND_TEXT)
        return Written(NOT_FOUND_TEXT, [], False, gen.cost, gen.text)
    if not cited and hits[0].score >= cite_score:
        text += " [1]"
        cited = [1]
        if on_token is not None:
            on_token(" [1]")
    return Written(text, [Citation(n, hits[n - 1]) for n in cited], True, gen.cost, gen.text)


# --------------------------------------------------------------------------- the entry point
def answer_question(
    shelf: Any, question: str, *, collection: str | None = None, on_token: TokenCallback | None = None,
    on_search: SearchCallback | None = None, adaptive: bool = False, keep: Sequence[int] = (),
    cancel: CancelCheck | None = None,
) -> Answer:
    """Search (or run adaptive retrieval), report the walk through ``on_search``, then stream an answer."""
    if adaptive:
        from shelfwise.core.adaptive import answer_adaptive

        return answer_adaptive(shelf, question, collection=collection, on_token=on_token, on_search=on_search,
                               keep=keep, cancel=cancel)
    t0 = time.perf_counter()
    result: SearchResult = shelf.search(question, collection, keep=keep, cancel=cancel)
    if on_search is not None:
        on_search(result)
    hits = result.hits[: max(1, shelf.settings.answer_passages)]
    backend = shelf.backend
    written = write_answer(backend, question, hits, on_token=on_token, family=prompt_family(backend),
                           cancel=cancel)
    return Answer(
        question=question, text=written.text, citations=written.citations, found=written.found, search=result,
        tokens=result.trace.tokens + written.cost.tokens, seconds=time.perf_counter() - t0,
    )


# --------------------------------------------------------------------------- rendering (CLI)
def source_line(c: Citation) -> str:
    """``[1] title > heading > ... (p. 4) path``."""
    h = c.hit
    where = " > ".join(x for x in [h.title, *h.heading_path] if x)
    loc = h.location.label()
    return f"[{c.number}] {where}" + (f" ({loc})" if loc else "") + (f" {h.path}" if h.path else "")


def render_sources(answer: Answer) -> list[str]:
    """The "Sources:" block under an answer (or a note that the answer came from the model alone)."""
    if answer.citations:
        return ["Sources:", *(source_line(c) for c in answer.citations)]
    if answer.found and answer.steps and all(s.source == "model" for s in answer.steps):
        return ["(Answered from the model's own knowledge, not from your documents.)"]
    return []


def render_steps(answer: Answer) -> list[str]:
    lines = []
    for i, s in enumerate(answer.steps, 1):
        how = "searched the documents" if s.source == "documents" else "model's own knowledge"
        lines.append(f"{i}. {s.question} -> {s.answer}  ({how}, P(retrieve)={s.p_retrieve:.2f})")
    return lines


def render_answer_text(answer: Answer) -> str:
    """The answer, the adaptive steps if there were several, then "Sources:" lines."""
    parts = [answer.text]
    if len(answer.steps) > 1:
        parts += ["", "Steps:", *render_steps(answer)]
    sources = render_sources(answer)
    if sources:
        parts += ["", *sources]
    return "\n".join(parts)
