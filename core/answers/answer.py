"""Answers with citations: the passages the walk found, then an answer the generative model writes from them.

:func:`write_answer` streams an answer to a question from the passages found through ``on_token`` and returns it
with ``[n]`` markers that map to ``Citation(n, hit)``; :func:`shelfwise.core.answers.ask.answer_question` (the entry
point) searches first and wraps it in an :class:`~shelfwise.core.navigation.trace.Answer`.

Prompts (templates in ``resources/prompts/``):

* a model whose GGUF carries a chat template *and* is instruction-tuned gets ``answer_chat.txt`` rendered in that
  template (``DecisionBackend.chat_prompt``: the GGUF's Jinja template, as llama-cpp-python renders it), else in its
  family's turn markers (Gemma, ChatML, Llama 3, ``[INST]``, Phi-3; detected from the template text);
* anything else, including the bundled Gemma 3 270M *base* model, gets the plain completion prompt
  ``answer_completion.txt`` ("Sources: [1] ... Question: ... Answer:"), one line of answer. Measured with the
  bundled model: a one-shot example was copied into the answer ("The office opens at 8 am..."), and asking it to
  "cite sources like [1]" made it start a new "[1] ..." listing; the bare cue gave the most on-topic answers,
  which rarely cite, hence the attribution rule below.

Every prompt token costs time on a CPU (docs/benchmarks.md, "Answers"), so passages are cut to ``PASSAGE_WORDS``
words and generation is capped at ``MAX_TOKENS`` and stopped at a blank line or a new "Question:". Repetition is
stopped twice: a repeat penalty on the tokens already generated, and a guard that ends generation when a run of
five words repeats (the sentence where it repeats is cut:
:func:`~shelfwise.core.answers.grounding.cut_repetition`).

Not found: no hits, or weak evidence -> "Not found in your documents." (``found=False``) without calling the model.
The navigator's P(relevant) is relative (calibrated to pick the right passage *within* the collection: its top hit
scores high whether or not the documents answer the question), so the evidence is the embedder's absolute
query-passage cosine of the passages shown (``cos_max`` in the last level's trace): below the encoder's
``found_min_cosine`` (:mod:`~shelfwise.core.answers.tuning`) for all of them means not found (the threshold
separates answerable from unanswerable questions on a small collection: docs/benchmarks.md, "Answers"). Without
cosine evidence in the trace, the top hit's score below ``FOUND_MIN_SCORE`` decides. After generation, citation
numbers that name no passage are removed; an answer with no citation gets ``[1]`` (the best passage) only if that
passage is strong itself (score at least ``CITE_MIN_SCORE`` and, when known, cosine at least ``found_min_cosine``).
An answer the model itself abstains from ("I don't know"...) is not found too. A copied source line loses its
leading "[n] (heading)" (the citation moves to the end). ``on_token`` gets only what the model wrote (and the
``[1]`` added to an uncited answer); a not-found answer streams nothing. The streamed text is final except for these
fixes: a client that shows the stream replaces it with the checked text when the answer is done (``on_generated``,
:mod:`shelfwise.core.answers.from_passages`)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from functools import cache

from shelfwise.core.answers.answerable import unanswered
from shelfwise.core.answers.coverage import key_coverage, subject_absent
from shelfwise.core.answers.grounding import cut_repetition, repeated_ngram
from shelfwise.core.answers.tuning import MINILM, AnswerTuning
from shelfwise.core.answers.types import Citation
from shelfwise.core.languages import has_unsegmented, word_count
from shelfwise.core.models.backend import CancelCheck, Cancelled, Cost, DecisionBackend, Embedder, Generation
from shelfwise.core.navigation.trace import Hit, SearchResult
from shelfwise.core.store.db import Store

NOT_FOUND_TEXT = "Not found in your documents."
FOUND_MIN_SCORE = 0.05  # fallback without cosine evidence: the top hit's P(relevant) below this: not found
# With cosine evidence, the cosine threshold and a P(relevant) one (a walk whose best passage it still judged this
# unlikely abstains too) are the encoder's own (core/answers/tuning.py), each chosen on the ConditionalQA TUNE half
# by benchmarks/research/abstention_tune.py (docs/benchmarks.md, "Answers"; docs/eval/embeddinggemma.md).
CITE_MIN_SCORE = 0.5  # an uncited answer is attributed to the best passage only above this
PASSAGE_WORDS = 70
MAX_TOKENS = 120
REPEAT_PENALTY = 1.15  # llama.cpp's usual 1.1-1.2 range; on the tokens this answer generated, not the prompt's
STOPS = ("\n\n", "Question:", "Sources:", "\nFacts:")
TokenCallback = Callable[[str], None]

CITE = re.compile(r"\s?\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_ABSTAIN = re.compile(
    r"^\W*(not found|i don'?t know|i do not know|unknown|no answer|the sources do not)", re.IGNORECASE
)


# --------------------------------------------------------------------------- prompt texts
@cache
def template(name: str) -> str:
    """A prompt template from ``resources/prompts/`` (``{placeholders}`` filled with ``str.format``)."""
    from shelfwise.resources import path

    return path("prompts", name).read_text(encoding="utf-8")


def clip_words(text: str, n: int = PASSAGE_WORDS) -> str:
    """The first ``n`` words of ``text``; a character of Chinese, Japanese or Thai-like script counts as a word
    (``core/languages.word_count``), so an unspaced passage is clipped too."""
    words = text.split()
    if not has_unsegmented(text):
        return " ".join(words[:n]) + (" ..." if len(words) > n else "")
    kept: list[str] = []
    left = n
    for w in words:
        c = word_count(w)
        if c > left:
            if left > 0 and has_unsegmented(w):
                kept.append(w[:left])
            return " ".join(kept) + " ..."
        kept.append(w)
        left -= c
    return " ".join(kept)


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
    "llama3": ("<|start_header_id|>user<|end_header_id|>\n\n",
               ("<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n")),
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


def render_chat(family: str, user: str, backend: DecisionBackend | None = None) -> str:
    """One user turn and the opening of the model's turn: in the model's own chat template when ``backend``
    renders it (``DecisionBackend.chat_prompt``), else in the family's markers (BOS is the backend's job)."""
    own = backend.chat_prompt(user.strip()) if backend is not None else None
    if own is not None:
        return own
    if family not in FAMILIES:  # "template": the model's own, which did not render
        return user.strip()
    before, after = FAMILIES[family]
    return f"{before}{user.strip()}{after}"


_INSTRUCT_WORDS = {"it", "instruct", "chat", "sft", "dpo", "rlhf", "orpo", "assistant"}


def is_instruction_tuned(backend: DecisionBackend) -> bool:
    """Whether the GGUF's name/finetune metadata or file name says it was instruction-tuned ("-it", "instruct"...).

    Base models often ship their family's chat template too, so a template alone does not decide the prompt. Where
    the model came from may say it (``DecisionBackend.made_for_chat``: a model Ollama keeps for chat, whose file is
    named by its hash), that decides."""
    said = backend.made_for_chat()
    if said is not None:
        return said
    names = []
    for key in ("general.finetune", "general.name", "general.basename"):
        with contextlib.suppress(Exception):  # metadata is a hint only
            names.append(backend.meta(key) or "")
    names.append(str(backend.model_path or "").rsplit("/", 1)[-1])
    words = {w for n in names for w in re.split(r"[^a-z0-9]+", n.lower()) if w}
    return bool(words & _INSTRUCT_WORDS)


def prompt_family(backend: DecisionBackend) -> str | None:
    """The chat family to prompt ``backend`` with ("template": its own chat template, of no family known here), or
    None for the plain completion prompt."""
    template = backend.chat_template()
    if not template or not is_instruction_tuned(backend):
        return None
    return detect_family(template) or "template"


def build_prompt(question: str, hits: Sequence[Hit], family: str | None = None,
                 facts: Sequence[tuple[str, str]] = (), backend: DecisionBackend | None = None) -> str:
    """The answer prompt for ``question`` over ``hits`` (numbered [1]..[n]); ``facts`` = earlier (question,
    answer) steps of an adaptive run; ``backend``: the model whose own chat template renders a chat prompt."""
    q = " ".join(question.split())
    sources = format_sources(hits)
    if family is not None:
        facts_text = f"Facts:\n{format_facts(facts)}\n" if facts else ""
        user = template("answer_chat.txt").format(sources=sources, question=q, facts=facts_text)
        return render_chat(family, user, backend)
    if facts:
        return template("answer_steps.txt").format(sources=sources, question=q, facts=format_facts(facts)).rstrip()
    return template("answer_completion.txt").format(sources=sources, question=q).rstrip()


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

    out = CITE.sub(fix, text)
    return out.strip(), cited


def tidy_copied_source(text: str, hits: Sequence[Hit]) -> str:
    """A base model often copies a source line: move a leading ``[n]`` to the end and drop a leading
    ``(heading)`` that :func:`format_sources` added."""
    m = re.match(r"^((?:\[\d+(?:,\s*\d+)*\]\s*)+)(.+)$", text, re.DOTALL)
    if m:
        text = f"{m.group(2).strip()} {''.join(m.group(1).split())}"
    heads = {h.heading_path[-1] for h in hits if h.heading_path}
    m = re.match(r"^\(([^)]{1,120})\)\s+(.+)$", text, re.DOTALL)
    if m and m.group(1) in heads:
        text = m.group(2)
    return text.strip()


def strip_citations(text: str) -> str:
    return CITE.sub("", text).strip()


def is_abstention(text: str) -> bool:
    return not text.strip() or bool(_ABSTAIN.match(text.strip()))


# --------------------------------------------------------------------------- generation
def stream(backend: DecisionBackend, prompt: str, *, on_token: TokenCallback | None = None,
           max_tokens: int = MAX_TOKENS, stop: Sequence[str] = STOPS, cancel: CancelCheck | None = None,
           single_line: bool = False, until: Callable[[str], bool] | None = None,
           repeat_penalty: float = 1.0) -> Generation:
    """Run ``backend.generate``, forwarding each piece to ``on_token``; returns the final Generation.

    ``single_line``: end at the first line break after some text (a base model tends to go on with a new
    "[n] ..." listing); leading blank lines are skipped. The backend is stopped through its cancel check, so no
    token is generated after the line ends. ``until(text)`` returning True ends it the same way. Raises
    :class:`Cancelled` when ``cancel`` stopped it."""
    text = ""
    ended = False

    def should_stop() -> bool:
        return ended or (cancel is not None and cancel())

    gen: Generator[str, None, Generation] = backend.generate(
        prompt, max_tokens=max_tokens, stop=stop, cancel=should_stop, repeat_penalty=repeat_penalty
    )
    while True:
        try:
            piece = next(gen)
        except StopIteration as done:
            result = done.value
            break
        if ended:
            continue
        if single_line:
            combined = text + piece
            body = len(combined) - len(combined.lstrip())  # where the text starts after leading blank lines
            line_end = combined.find("\n", body) if body < len(combined) else -1
            if line_end >= 0:  # (text itself holds no line end after its start, or we would have ended)
                piece = combined[len(text) : line_end]
                ended = True
        text += piece
        if on_token is not None and piece:
            on_token(piece)
        if until is not None and not ended and until(text):
            ended = True
    if result is None:
        result = Generation(text)
    if result.stopped_by == "cancelled" and not ended:
        raise Cancelled("answer cancelled")
    return Generation(text, result.cost, "stop" if ended else result.stopped_by)


@dataclass
class Written:
    """An answer written from passages, before it is wrapped in an Answer."""

    text: str
    citations: list[Citation]
    found: bool
    cost: Cost = field(default_factory=Cost)
    raw: str = ""


def passage_cosines(result: SearchResult | None, hits: Sequence[Hit]) -> dict[int, float]:
    """Query-passage cosine of each hit, from the last level of the walk (``{}`` when the walk has none)."""
    if result is None or not result.trace.levels:
        return {}
    feats = {c.node_id: c.features for c in result.trace.levels[-1].candidates}
    if not any("cos_max" in f for f in feats.values()):
        return {}
    return {h.node_id: float(feats.get(h.node_id, {}).get("cos_max", 0.0)) for h in hits}


def weak_evidence(hits: Sequence[Hit], cosines: dict[int, float] | None = None,
                  min_score: float = FOUND_MIN_SCORE, tuning: AnswerTuning = MINILM, question: str = "",
                  store: Store | None = None, embedder: Embedder | None = None) -> bool:
    """No hits, or none of them close enough to the question (see the module doc); with cosine evidence, also a
    best passage whose P(relevant) is under ``abstain_p``, or (given the ``question``) top passages that leave the
    question's key terms uncovered while the best cosine is not high (:func:`key_coverage`), or (given the library's
    ``store`` and ``embedder`` too) what the question asks about occurs nowhere in the library while the best
    cosine is not high (:func:`~shelfwise.core.answers.coverage.subject_absent`). Where the encoder has a fitted
    rule (``tuning.unanswered``) that reads the question (the ``question`` and ``store`` given, the question in the
    library's language), that rule (:func:`~shelfwise.core.answers.answerable.unanswered`: the top passages name
    the subject without answering the question) takes the place of the floor on P(relevant)."""
    if not hits:
        return True
    if cosines:
        best = max(cosines.get(h.node_id, 0.0) for h in hits)
        fitted = unanswered(store, question, hits, cosines, tuning) if question and store is not None else None
        if best < tuning.found_min_cosine or (fitted is None and hits[0].score < tuning.abstain_max_p):
            return True
        if question and best < tuning.covered_max_cosine and key_coverage(question, hits) < tuning.covered_min:
            return True
        if (question and store is not None and embedder is not None and best < tuning.absent_max_cosine
                and subject_absent(store, embedder, question, hits, min_present=tuning.absent_min_present,
                                   max_keep=tuning.absent_max_keep)):
            return True
        return bool(fitted)
    return hits[0].score < min_score


def write_answer(
    backend: DecisionBackend, question: str, hits: Sequence[Hit], *, on_token: TokenCallback | None = None,
    family: str | None = None, facts: Sequence[tuple[str, str]] = (), cancel: CancelCheck | None = None,
    result: SearchResult | None = None, check_evidence: bool = True, max_tokens: int = MAX_TOKENS,
    tuning: AnswerTuning = MINILM,
) -> Written:
    """Write an answer from ``hits`` (already cut to the passages to show), with citations that resolve.

    ``result`` (the search the hits come from) gives the cosine evidence; ``check_evidence=False`` skips the
    not-found check (hits already judged, as in the final step of an adaptive run). ``on_token`` gets the model's
    pieces as they come (the first without its leading space), nothing when it is not found."""
    hits = list(hits)
    cosines = passage_cosines(result, hits)
    if (check_evidence and weak_evidence(hits, cosines, tuning=tuning)) or not hits:
        return Written(NOT_FOUND_TEXT, [], False)
    prompt = build_prompt(question, hits, family, facts, backend)
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

    gen = stream(backend, prompt, on_token=forward, max_tokens=max_tokens, cancel=cancel,
                 single_line=family is None, until=repeated_ngram, repeat_penalty=REPEAT_PENALTY)
    text, cited = clean_citations(cut_repetition(gen.text), len(hits))
    text = tidy_copied_source(text, hits)
    if is_abstention(text):
        return Written(NOT_FOUND_TEXT, [], False, gen.cost, gen.text)
    strong = hits[0].score >= CITE_MIN_SCORE and cosines.get(hits[0].node_id, 1.0) >= tuning.found_min_cosine
    if not cited and strong:
        text += " [1]"
        cited = [1]
        if on_token is not None:
            on_token(" [1]")
    return Written(text, [Citation(n, hits[n - 1]) for n in cited], True, gen.cost, gen.text)
