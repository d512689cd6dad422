"""The answer model's reading of which phrase of a sentence answers a question asking for a thing (issue 48): the
log-probability of " <phrase>" after "<sentence>\\nQuestion: <question>\\nAnswer:", summed and per token, read by the
bundled base model (Gemma 3 270M) through the backend's ``continuations`` (every phrase of a sentence in one batch,
the prompt evaluated once), after three worked examples in the same layout (:data:`FEW_SHOT`, the team's own
sentences: a short phrase copied from its sentence; without them the base model favours a phrase that copies more).
:func:`read_phrases` weighs it as ``core/answers/short.py``'s ``SpanWeights`` say, and
``short.value_candidates`` adds that to the phrase ranker's score where a model is given; a backend that cannot
read it (a server, the test double) leaves the ranker alone. ``benchmarks/research/span_choice.py`` measured the
prompt and chose the weight on the training data (docs/eval/answers.md, "Session 25"; two other readings that were
tried and not kept are in its "Session 27"; the examples, measured on the same items, in its "Session 30").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from shelfwise.core.answers.phrases import is_clause
from shelfwise.core.models.backend import BackendError, CancelCheck, Likelihoods

PROMPT = "{sentence}\nQuestion: {question}\nAnswer:"
# worked examples before the prompt, in its layout (the team's own sentences): a short phrase copied from the sentence
EXAMPLES = (
    ("The museum opened in 1902 in a building designed by the architect Maria Holt.", "Who designed the museum's "
     "building?", "Maria Holt"),
    ("Applications for a permit must be sent to the regional licensing office before the end of March.",
     "Where must permit applications be sent?", "the regional licensing office"),
    ("Several kinds of wading birds live in the delta, of which the grey heron is the most common.",
     "Which bird is the most common in the delta?", "the grey heron"),
)
FEW_SHOT = "".join(PROMPT.format(sentence=s, question=q) + f" {a}\n\n" for s, q, a in EXAMPLES)


class ReadsContinuations(Protocol):
    def continuations(self, context: str, options: Sequence[str], *,
                      cancel: CancelCheck | None = None) -> Likelihoods: ...


class ReadWeights(Protocol):
    """What a reading weighs (``core/answers/short.py``'s ``SpanWeights``): per unit of the summed and per-token
    log-probability, and for a phrase that is a clause (``phrases.is_clause``: the reading favours those)."""

    @property
    def model_mean(self) -> float: ...
    @property
    def model_sum(self) -> float: ...
    @property
    def model_clause(self) -> float: ...


def phrase_likelihoods(model: ReadsContinuations, sentence: str, question: str, phrases: Sequence[str],
                       cancel: CancelCheck | None = None, prefix: str = "") -> list[tuple[float, float]] | None:
    """(summed, per-token) log-probability of each of ``phrases`` as the answer to ``question`` after
    ``sentence`` (after ``prefix``, worked examples in the same layout, when given); None where the model cannot
    read it."""
    if not phrases:
        return []
    prompt = prefix + PROMPT.format(sentence=" ".join(sentence.split()), question=" ".join(question.split()))
    try:
        got = model.continuations(prompt, [" " + " ".join(p.split()) for p in phrases], cancel=cancel)
    except BackendError:
        return None
    return list(zip(got.total, got.mean, strict=True))


def read_phrases(model: ReadsContinuations | None, sentence: str, question: str, phrases: Sequence[str],
                 weights: ReadWeights) -> list[tuple[tuple[float, float] | None, float]]:
    """For each of ``phrases`` (of one sentence): the model's (summed, per-token) reading of it as the answer, or
    None, and what the reading adds to its score (0 where the model does not read)."""
    read = (phrase_likelihoods(model, sentence, question, phrases, prefix=FEW_SHOT)
            if model is not None and phrases else None)
    if not read:
        return [(None, 0.0)] * len(phrases)
    return [(lp, weights.model_sum * lp[0] + weights.model_mean * lp[1] + weights.model_clause * is_clause(p))
            for p, lp in zip(phrases, read, strict=True)]
