"""Adaptive retrieval (DeepRAG's inference loop): decompose, decide per sub-question, answer, conclude.

1. **Decompose.** Rules first (:func:`split_rule`: several "?" questions, ";"-separated questions, or "..., and
   what/who/when/where/which/why/how ..." clauses); a one-sentence question the rules leave whole and that is
   long enough (:func:`worth_asking`) is given to the model with the one-shot completion prompt ``decompose.txt``;
   its lines are kept only when they look like sub-questions of this question (2..``max_sub`` lines, each a few
   words sharing a content word with it).
   The bundled 270M base model mostly repeats the question as its first line; generation stops right there.
   A simple question is one step and costs no generation here.
2. **Atomic decision** per sub-question, a probability read from the model, not generated text. The model first
   answers closed-book (``closed_book.txt``: two general-knowledge answers and two "I don't know" for questions
   about an organisation's own documents), greedily, at most ``CLOSED_BOOK_TOKENS`` tokens. Then one likelihood
   pass scores the two continuations the model could give after ``Answer:``: its own answer ``a`` and the
   abstention ``u = " I don't know"``. ``P(retrieve) = P(u) / (P(u) + P(a))`` (sequence probabilities, i.e.
   ``sigmoid(log P(u) - log P(a))``): the model's preference for abstaining over its best guess, normalised over the
   two readouts like the Yes/No readout of binary mode. When the greedy answer *is* the abstention, ``P(u)`` is the
   largest continuation and the two-way probability is at least ``max(0.5, P(u))``, which is what is used (no
   runner-up is decoded). Why this and not a zero-shot Yes/No ("can you answer this without the documents?"): the
   bundled 270M base model's Yes/No readout is at chance, whereas sequence likelihoods carry signal; it is also the
   uncertainty-triggered retrieval of FLARE/SKR-style methods, and the closed-book answer it needs is reused as the
   step's answer when the model is trusted, so the decision costs only ~10 extra tokens. The prompt keeps two "I
   don't know" examples: with one, company questions got confident invented answers (what separated the two kinds
   of question, and by how much: docs/benchmarks.md, "Adaptive retrieval's decision").
3. ``P(retrieve) >= threshold`` -> walk the tree (``shelf.search``) and answer the sub-question from the top
   passages (``core/answers/answer.py``); otherwise keep the closed-book answer. The threshold is the store's meta value
   ``adaptive_threshold:<model id>`` (fitted by ``shelfwise calibrate-adaptive``), default 0.5.
4. Each step is a :class:`~shelfwise.core.answers.types.Step`; one answered from the documents holds the answer
   extracted from its own top passages (:func:`~shelfwise.core.answers.from_passages.extractive_answer`: the value
   and its sentence, never the model's unchecked text), its citations renumbered to the passages the whole answer
   lists (:meth:`Runner.cited_in`). The answer is then made as on a single walk
   (:mod:`shelfwise.core.answers.from_passages`): one sub-question sent to the tree *is* a single walk; with
   several, the sentence(s) answering the whole question are extracted from the union of the retrieved passages
   (round-robin, :func:`merge_hits`), and the model's answer is written from those passages plus the intermediate
   (question, answer) facts (``answer_steps.txt``), streamed and kept only when grounded in them.

Nothing retrieved (every step answered from the model's knowledge): the answer is "Not found in your documents."
(``found=False``); the model's own answer (the closed-book one, or with several steps one written from their
facts, ``answer_facts.txt``, streamed) is kept in ``generated_raw`` with ``generation_note`` saying where it came
from, and the steps (``source="model"``) show it.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from shelfwise.core.answers import cues
from shelfwise.core.answers.answer import (
    NOT_FOUND_TEXT,
    TokenCallback,
    Written,
    is_abstention,
    passage_cosines,
    prompt_family,
    render_chat,
    stream,
    strip_citations,
    template,
    write_answer,
)
from shelfwise.core.answers.from_passages import (
    answer_from_search,
    extractive_answer,
    widen_lists,
    write_checked,
)
from shelfwise.core.answers.table_shown import encoder_or_none, with_table_value
from shelfwise.core.answers.tables import table_answer
from shelfwise.core.answers.tuning import tuning_for
from shelfwise.core.answers.types import QUIET, Answer, AnswerEvents, Citation, Extracted, Step
from shelfwise.core.models.backend import CancelCheck, Cost, DecisionBackend
from shelfwise.core.navigation.request import clipped_request, request_for
from shelfwise.core.navigation.scope import ResolvedScope
from shelfwise.core.navigation.trace import Hit, SearchResult
from shelfwise.core.navigation.walk import LibraryWalk
from shelfwise.core.store.db import Store

DEFAULT_THRESHOLD = 0.5
MAX_SUB = 3
CLOSED_BOOK_TOKENS = 24
DECOMPOSE_TOKENS = 60
DECOMPOSE_MIN_WORDS = 12  # shorter questions the rules leave whole are not sent to the model
DECOMPOSE_MAX_WORDS = 40
UNKNOWN = "I don't know"
META_PREFIX = "adaptive_threshold:"

_WH = r"(?:what|who|whom|whose|when|where|which|why|how)"
_STOPWORDS = frozenset({
    "a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "is", "are", "was", "were", "do", "does", "did",
    "be", "been", "can", "could", "should", "would", "will", "what", "who", "whom", "whose", "when", "where",
    "which", "why", "how", "i", "my", "me", "we", "our", "you", "your", "it", "its", "this", "that", "there",
    "their", "they", "he", "she", "his", "her", "with", "by", "from", "as", "at", "about", "into", "any", "some",
    "many", "much",
})


# --------------------------------------------------------------------------- model identity and threshold
def model_id(backend: DecisionBackend) -> str:
    """The generative model's identity (its ``model_id``: the rule calibration keys by too)."""
    return backend.model_id


def threshold_key(backend: DecisionBackend) -> str:
    return META_PREFIX + model_id(backend)


def get_threshold(store: Store, backend: DecisionBackend) -> float:
    """The threshold stored for the model (under its ``model_id``, else one of its ``legacy_ids``), else the
    default."""
    value = store.get_meta(threshold_key(backend), None)
    for legacy in backend.legacy_ids:
        if value is not None:
            break
        value = store.get_meta(META_PREFIX + legacy, None)
    return DEFAULT_THRESHOLD if value is None else float(value)


def set_threshold(store: Store, backend: DecisionBackend, value: float) -> None:
    store.set_meta(threshold_key(backend), float(value))


# --------------------------------------------------------------------------- decomposition
def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in _STOPWORDS and len(w) > 1}


def _as_question(text: str) -> str:
    text = text.strip(" ,;")
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith("?") else text.rstrip(".") + "?"


def split_rule(question: str) -> list[str]:
    """Rule-based decomposition. Splits at "?" and ";" between questions and at ", and <wh-word>" inside a
    one-sentence question; statements (a scenario) are kept as the context of the question that follows them."""
    text = " ".join(question.split())
    if not text:
        return []
    raw = [p.strip() for p in re.split(r"(?<=\?)\s+|\s*;\s+", text) if p.strip()]
    parts: list[str] = []
    carry = ""
    for p in raw:
        if not p.endswith("?") and p is not raw[-1]:
            carry = f"{carry} {p}".strip()  # a statement: context for the next question
            continue
        if carry:
            parts.append(f"{carry}; {p}" if not p.endswith("?") else f"{carry} {p}")
            carry = ""
            continue
        single_sentence = not re.search(r"[.!]\s", p)
        pieces = re.split(rf",?\s+and\s+(?={_WH}\b)", p, flags=re.IGNORECASE) if single_sentence else [p]
        parts.extend(_as_question(x) if len(pieces) > 1 else x for x in pieces)
    if carry:  # trailing statement(s): context of the last question
        parts = [*parts[:-1], f"{parts[-1]} {carry}"] if parts else [carry]
    parts = [p[0].upper() + p[1:] for p in parts if p]
    return parts or [text]


def asked_together(question: str) -> list[str]:
    """The questions of a text that asks several at once ("How many days of leave do I get? And how do I request
    it?"), each a sentence of its own ending in "?" (a statement before one is its context, as in
    :func:`split_rule`); [] for one question. Each is searched in the documents without asking the model."""
    text = " ".join(question.split())
    parts = [p for p in re.split(r"(?<=\?)\s+", text) if p]
    if len(parts) < 2 or not all(len(p.split()) >= 3 and p.endswith("?") for p in parts):
        return []
    subs = split_rule(text)
    return subs if 1 < len(subs) <= MAX_SUB and all(s.endswith("?") for s in subs) else []


def searched_as(parts: Sequence[str]) -> dict[str, str]:
    """What each of several questions asked at once (:func:`asked_together`) is searched by: one that stands a
    pronoun or "one" for something a question before it named ("How many days of leave do I get? And how do I
    request it?") with that question before it, as a conversation reads a follow-up (the shipped reading of
    ``core/conversation``: the question before, then this one); the others by their own words."""
    out: dict[str, str] = {}
    before = ""
    for part in parts:
        out[part] = f"{before} {part}" if before and cues.names_referent(part) else part
        before = out[part]
    return out


def parse_subquestions(generated: str, question: str, max_sub: int = MAX_SUB) -> list[str] | None:
    """The model's "- ..." lines as sub-questions, or None when they do not look like a decomposition of
    ``question`` (too few or too many, too short, unrelated, or just the question repeated)."""
    lines = []
    for i, line in enumerate(generated.splitlines()):
        line = line.strip()
        if i > 0 and not line.startswith(("-", "*")):
            break
        line = line.lstrip("-* ").strip()
        if line:
            lines.append(line)
    if not 2 <= len(lines) <= max_sub:
        return None
    q_words = _content_words(question)
    out = []
    for line in lines:
        if len(line.split()) < 3 or not (_content_words(line) & q_words):
            return None
        out.append(_as_question(line))
    if len({s.lower() for s in out}) < len(out) or any(s.lower() == question.lower().strip() for s in out):
        return None
    return out


def _echoes(text: str, question: str) -> bool:
    """The model's first sub-question is complete and is the question itself (the usual failure of a small base
    model): stop generating, the rules' answer stands."""
    if "\n" not in text.lstrip():
        return False
    first = text.lstrip().split("\n", 1)[0].lstrip("-* ").strip().lower()
    q = " ".join(question.split()).lower()
    return first == q or (len(first) > 0.8 * len(q) and (first in q or q in first))


def worth_asking(question: str) -> bool:
    """Whether the model is asked to decompose a question the rules left whole: one sentence (a scenario before
    the question would be lost from every sub-question) of ``DECOMPOSE_MIN_WORDS``..``DECOMPOSE_MAX_WORDS``."""
    text = " ".join(question.split())
    return DECOMPOSE_MIN_WORDS <= len(text.split()) <= DECOMPOSE_MAX_WORDS and not re.search(r"[.!?]\s", text)


def decompose(
    backend: DecisionBackend | None, question: str, *, max_sub: int = MAX_SUB, use_model: bool = True,
    cancel: CancelCheck | None = None, cost: Cost | None = None,
) -> list[str]:
    """Sub-questions of ``question`` (at least one; at most ``max_sub``, the rest merged into the last)."""
    parts = split_rule(question)
    if len(parts) == 1 and use_model and backend is not None and worth_asking(question):
        prompt = template("decompose.txt").format(question=" ".join(question.split())).rstrip()
        gen = stream(backend, prompt, max_tokens=DECOMPOSE_TOKENS, stop=("\n\n", "Question:"), cancel=cancel,
                     until=lambda text: _echoes(text, question))
        if cost is not None:
            cost.add(gen.cost)
        parts = parse_subquestions(gen.text, question, max_sub) or parts
    if len(parts) > max_sub:
        parts = [*parts[:max_sub - 1], " ".join(parts[max_sub - 1:])]
    return parts


# --------------------------------------------------------------------------- the atomic decision
@dataclass
class Decision:
    question: str
    p_retrieve: float
    model_answer: str  # the closed-book answer ("" when the model gave none)
    logp_answer: float | None
    logp_unknown: float
    cost: Cost = field(default_factory=Cost)


def closed_book_prompt(question: str) -> tuple[str, str]:
    """(shared context, per-question part); the prompt is their concatenation and ends with ``Answer:``."""
    return template("closed_book.txt"), f"Question: {' '.join(question.split())}\nAnswer:"


def p_retrieve_from(logp_answer: float | None, logp_unknown: float) -> float:
    """P(retrieve) from the two sequence log-probabilities (see the module doc)."""
    if logp_answer is None:  # the model's best continuation is the abstention itself
        return max(0.5, math.exp(min(0.0, logp_unknown)))
    d = logp_unknown - logp_answer
    return 1.0 / (1.0 + math.exp(-d)) if d > -700 else 0.0


def decide(backend: DecisionBackend, question: str, *, cancel: CancelCheck | None = None) -> Decision:
    """The closed-book answer and P(retrieve) for one (sub-)question."""
    context, part = closed_book_prompt(question)
    cost = Cost()
    gen = stream(backend, context + part, max_tokens=CLOSED_BOOK_TOKENS, stop=("\n",), cancel=cancel)
    cost.add(gen.cost)
    answer = gen.text.strip()
    unknown = backend.likelihood(context, [part], " " + UNKNOWN, cancel=cancel)
    cost.add(unknown.cost)
    lp_u = unknown.total[0]
    lp_a: float | None = None
    if answer and not is_abstention(answer):
        own = backend.likelihood(context, [part], " " + answer, cancel=cancel)
        cost.add(own.cost)
        lp_a = own.total[0]
    else:
        answer = ""
    return Decision(question, p_retrieve_from(lp_a, lp_u), answer, lp_a, lp_u, cost)


# --------------------------------------------------------------------------- running steps
@dataclass
class Retrieved:
    """A sub-question answered from the documents: its walk and the answer extracted from its top passages (the
    value asked for and the sentence it is read from, cited by those passages' numbers; no model text)."""

    result: SearchResult
    hits: list[Hit]
    found: Answer


class Runner:
    """The pieces of an adaptive run over one library, each computed once per sub-question (the calibration tree
    search explores both branches of every sub-question and reuses them)."""

    def __init__(self, library: LibraryWalk, *, collection: str | None = None, keep: Sequence[int] = (),
                 cancel: CancelCheck | None = None, events: AnswerEvents = QUIET,
                 prior: Mapping[int, float] | None = None, scope: ResolvedScope | None = None,
                 searched: Mapping[str, str] | None = None) -> None:
        self.library = library
        self.searched = dict(searched or {})  # a part -> the text its walk reads (:func:`searched_as`)
        self.prior = prior  # a conversation's branches, preferred by every sub-question's walk
        self.backend: DecisionBackend = library.backend
        self.family = prompt_family(self.backend)
        self.tuning = tuning_for(library.embedder)
        self.collection = collection
        self.scope = scope  # where every part is searched (the question's filters, read once at the door)
        self.keep = keep
        self.cancel = cancel
        self.events = events  # each walk is reported (``on_search``) the first time it is made
        self.n_passages = max(1, int(library.settings.answer_passages))
        self.cost = Cost()
        self.searches: list[SearchResult] = []
        self._decisions: dict[str, Decision] = {}
        self._retrieved: dict[str, Retrieved] = {}
        self._searched: dict[str, SearchResult] = {}

    def decide(self, question: str) -> Decision:
        if question not in self._decisions:
            d = decide(self.backend, question, cancel=self.cancel)
            self.cost.add(d.cost)
            self._decisions[question] = d
        return self._decisions[question]

    def search(self, question: str) -> SearchResult:
        """The walk for ``question`` (reported through ``events.on_search`` the first time)."""
        if question not in self._searched:
            text = self.searched.get(question, question)
            request = request_for(self.library.store, self.backend, text, self.collection, keep=self.keep,
                                  prior=self.prior or None) if self.scope is None else \
                clipped_request(text, self.collection, self.backend, scope=self.scope, keep=self.keep,
                                prior=self.prior or None)  # a sub-question is read like a question asked
            result = self.library.search(request, self.cancel)
            self.cost.add(Cost(requests=result.trace.requests, tokens=result.trace.tokens))
            self.searches.append(result)
            self.events.searched(result)
            self._searched[question] = result
        return self._searched[question]

    def retrieve(self, question: str) -> Retrieved:
        """The walk and the sub-question's answer extracted from its top passages, or computed from a table as a
        question asked alone is (a step of the narrative: what the sources say, never the model's unchecked
        text); the rows a table's value was read from lead the step's passages."""
        if question not in self._retrieved:
            result = self.search(question)
            hits = result.hits[: self.n_passages]
            # a part that points back ("How do I enrol in it?") is read with the question it points to, its table
            # too; the value that question was answered with is no answer to this one ("How many people are in it?")
            text = self.searched.get(question, question)
            found = extractive_answer(self.library, text, result, hits, time.perf_counter())
            short = table_answer(self.library.store, text, result.hits, self.scope, encoder_or_none(self.library))
            if short is not None and text != question and short.text in self._answered_before(text):
                short = None
            with_table_value(self.library, question, found, short)
            if found.short is not None and found.short is short:
                cited = [c.hit for c in found.citations]
                at = {h.node_id for h in cited}
                hits = [*cited, *(h for h in hits if h.node_id not in at)][: max(self.n_passages, len(cited))]
            self._retrieved[question] = Retrieved(result, hits, found)
        return self._retrieved[question]

    def _answered_before(self, text: str) -> set[str]:
        """The short answers of the questions already answered that ``text`` (a part read after them) starts with."""
        return {r.found.short.text for q, r in self._retrieved.items()
                if r.found.short is not None and text.startswith(self.searched.get(q, q))}

    def step(self, question: str, source: str, *, decided: bool = True) -> Step:
        """The step for ``question`` answered from ``source`` ("documents" | "model"); ``decided=False``: searched
        with no decision made (one of several questions asked at once), so no P(retrieve) is read."""
        if source == "documents":
            p = self.decide(question).p_retrieve if decided else 1.0
            r = self.retrieve(question)
            said = " — ".join(r.found.shown_first().splitlines()) if r.found.found else NOT_FOUND_TEXT
            return Step(question, said, "documents", p, list(r.hits), decided=decided)
        d = self.decide(question)
        return Step(question, d.model_answer or UNKNOWN, "model", d.p_retrieve, [])

    def _numbers(self, step: Step, hits: Sequence[Hit]) -> dict[int, int | None]:
        """The step's own citation numbers -> their numbers among ``hits`` (None: not among them)."""
        at = {h.node_id: i for i, h in enumerate(hits, 1)}
        return {c.number: at.get(c.hit.node_id) for c in self._retrieved[step.question].found.citations}

    def sentences_in(self, step: Step, hits: Sequence[Hit]) -> list[Extracted]:
        """The sentences ``step``'s answer was read from, numbered as their passages are among ``hits``."""
        if step.source != "documents" or step.question not in self._retrieved:
            return []
        own = self._numbers(step, hits)
        return [replace(e, number=n) for e in self._retrieved[step.question].found.sentences
                if (n := own.get(e.number)) is not None]

    def cited_in(self, step: Step, hits: Sequence[Hit]) -> Step:
        """``step`` with its answer's citations renumbered to ``hits`` (the passages the whole answer cites); a
        citation of a passage not among them is left out."""
        if step.source != "documents" or step.question not in self._retrieved:
            return step
        own = self._numbers(step, hits)

        def cite(m: re.Match[str]) -> str:
            n = own.get(int(m.group(1)))
            return f" [{n}]" if n is not None else ""

        return replace(step, answer=re.sub(r" ?\[(\d+)\]", cite, step.answer))

    def final(self, question: str, steps: Sequence[Step], on_token: TokenCallback | None = None) -> Written:
        """The model's final answer after ``steps``, streamed: from the passages they retrieved and their facts
        (one step from the documents: written from its own passages; one from the model: its own answer). The
        product shows it only where nothing was retrieved (kept aside, never as the answer); calibration
        (``adaptive_search``) grades trajectories by it."""
        if len(steps) == 1:
            s = steps[0]
            if s.source == "documents":
                r = self.retrieve(s.question)
                w = write_answer(self.backend, s.question, r.hits, on_token=on_token, family=self.family,
                                 tuning=self.tuning, cancel=self.cancel, result=r.result)
                self.cost.add(w.cost)
                return w
            text = s.answer if s.answer != UNKNOWN else NOT_FOUND_TEXT
            if on_token is not None:
                on_token(text)
            return Written(text, [], text != NOT_FOUND_TEXT)
        facts = [(s.question, strip_citations(s.answer)) for s in steps]
        found = [s.hits for s in steps if s.source == "documents" and s.answer != NOT_FOUND_TEXT]
        hits = merge_hits(found, self.n_passages)
        if hits:
            w = write_answer(self.backend, question, hits, on_token=on_token, family=self.family, facts=facts,
                             tuning=self.tuning,
                             cancel=self.cancel, check_evidence=False)
        else:
            facts_text = "\n".join(f"- {q} {a}" for q, a in facts)
            user = template("answer_facts.txt").format(facts=facts_text, question=" ".join(question.split())).rstrip()
            prompt = render_chat(self.family, user, self.backend) if self.family else user
            gen = stream(self.backend, prompt, on_token=on_token, stop=("\n",), cancel=self.cancel)
            text = gen.text.strip()
            w = Written(text or NOT_FOUND_TEXT, [], bool(text) and not is_abstention(text), gen.cost, gen.text)
        self.cost.add(w.cost)
        return w


def merge_hits(groups: Sequence[Sequence[Hit]], n: int) -> list[Hit]:
    """Round-robin over each step's ranked hits, without duplicates, at most ``n``."""
    out: list[Hit] = []
    seen: set[int] = set()
    depth = 0
    while len(out) < n and any(depth < len(g) for g in groups):
        for g in groups:
            if depth < len(g) and g[depth].node_id not in seen and len(out) < n:
                out.append(g[depth])
                seen.add(g[depth].node_id)
        depth += 1
    return out


def answer_adaptive(
    library: LibraryWalk, question: str, *, collection: str | None = None, events: AnswerEvents = QUIET,
    keep: Sequence[int] = (), cancel: CancelCheck | None = None,
    threshold: float | None = None, max_sub: int = MAX_SUB, prior: Mapping[int, float] | None = None,
    generate: bool = True, notes: Sequence[str] = (), parts: Sequence[str] = (), scope: ResolvedScope | None = None,
) -> Answer:
    """DeepRAG inference: decompose, decide per sub-question, answer each; then the answer from the passages the
    steps retrieved, as on a single walk (the module doc, step 4), reported through ``events``
    (:class:`~shelfwise.core.answers.types.AnswerEvents`). ``parts``: several questions typed at once
    (:func:`asked_together`), each searched in the documents (within ``scope``, the question's filters), the model
    asked nothing until the answer is written."""
    t0 = time.perf_counter()
    runner = Runner(library, collection=collection, keep=keep, cancel=cancel, events=events, prior=prior, scope=scope,
                    searched=searched_as(parts))
    decide = not parts
    if decide:
        limit = get_threshold(library.store, runner.backend) if threshold is None else threshold
        subs = decompose(runner.backend, question, max_sub=max_sub, cancel=cancel, cost=runner.cost)
    else:
        subs = list(parts)
    sources = []
    for sub in subs:  # decided and searched in turn, so the walks are reported as they happen
        sources.append("documents" if not decide or runner.decide(sub).p_retrieve >= limit else "model")
        if len(subs) == 1 and sources[-1] == "documents":
            return _one_walk(runner, question, sub, t0, events=events, generate=generate, notes=notes)
        if sources[-1] == "documents":
            runner.retrieve(sub)
    steps = [runner.step(sub, source, decided=decide) for sub, source in zip(subs, sources, strict=True)]
    found = [s.hits for s in steps if s.source == "documents" and s.answer != NOT_FOUND_TEXT]
    hits = widen_lists(library.store, merge_hits(found, runner.n_passages))
    sentences = [e for s in steps for e in runner.sentences_in(s, hits)]
    steps = [runner.cited_in(s, hits) for s in steps]
    cosines: dict[int, float] = {}
    for result in runner.searches:  # each hit's cosine from the walk that found it
        for node_id, cos in passage_cosines(result, hits).items():
            cosines[node_id] = max(cos, cosines.get(node_id, 0.0))
    search = runner.searches[-1] if runner.searches else None
    answer = extractive_answer(library, question, search, hits, t0, cosines=cosines, read=generate and decide)
    answer.steps, answer.notes[:0], answer.tokens = steps, list(notes), runner.cost.tokens
    # each part's own answer is the answer, one a line with where it came from where a decision was made (not a
    # sentence read for all the parts at once, which answered one of them at best)
    if answer.by_steps:
        answer.text = "\n".join(f"{s.question} -> {s.answer}" + (f"  ({s.label})" if s.decided else "")
                                for s in steps)
        answer.short, answer.sentences = None, sentences
        answer.found = any(s.source == "documents" and s.answer != NOT_FOUND_TEXT for s in steps)
        answer.citations = [c for c in answer.citations if f"[{c.number}]" in answer.text]
    cited = {c.number for c in answer.citations}
    for n in sorted({int(m) for st in steps for m in re.findall(r"\[(\d+)\]", st.answer)} - cited):
        answer.citations.append(Citation(n, hits[n - 1]))  # a source a step cites is listed with the answer's
    answer.citations.sort(key=lambda c: c.number)
    events.extracted(answer)
    if hits and answer.found and generate:
        numbers = list(range(1, len(hits) + 1))
        facts = [(s.question, strip_citations(s.answer)) for s in steps]
        write_checked(library, answer, hits, numbers, hits, events=events, cancel=cancel, facts=facts)
    elif not hits and generate and any(s.source == "model" and s.answer != UNKNOWN for s in steps):
        # nothing retrieved to check it by: the model's own answer is kept aside, never shown as the answer
        if len(steps) == 1:
            answer.generated_raw = steps[0].answer  # the closed-book answer the decision already read
        else:
            written = runner.final(question, steps, events.on_token)  # from the steps' facts alone, streamed
            answer.generated_raw = written.text
            answer.tokens += written.cost.tokens
        answer.generation_note = MODEL_ONLY_NOTE
        events.generated(answer)
    answer.seconds = time.perf_counter() - t0
    return answer


MODEL_ONLY_NOTE = ("The model answered from its own knowledge, not from your documents; not shown as the answer "
                   "(see the steps).")


def _one_walk(runner: Runner, question: str, sub: str, t0: float, *, events: AnswerEvents, generate: bool,
              notes: Sequence[str]) -> Answer:
    """One sub-question, sent to the tree: exactly the answer of a single walk, with its step."""
    decision_tokens = runner.cost.tokens
    result = runner.search(sub)

    def with_step(answer: Answer) -> None:
        answer.notes[:0] = list(notes)
        answer.steps = [Step(sub, answer.text, "documents", runner.decide(sub).p_retrieve, list(result.hits[
            : runner.n_passages]))]
        events.extracted(answer)

    answer = answer_from_search(runner.library, question, result, t0, events=replace(events, on_extract=with_step),
                                generate=generate, cancel=runner.cancel)
    if answer.generated:
        answer.steps[0].answer = answer.generated
    answer.tokens += decision_tokens
    answer.seconds = time.perf_counter() - t0
    return answer
