"""The answer model's reading of which phrase of a sentence answers a question asking for a thing (issue 48): the
log-probability of " <phrase>" after "<sentence>\\nQuestion: <question>\\nAnswer:", per token, read by the bundled
base model (Gemma 3 270M) through the backend's ``continuations`` (every phrase of a sentence in one batch, the
prompt evaluated once). ``core/answers/short.py`` adds it, weighted, to the phrase ranker's score
where a model is given; a backend that cannot read it (a server, the test double) leaves the ranker alone.
``benchmarks/research/span_choice.py`` measured the prompt and chose the weight on the training data
(docs/eval/answers.md, "Session 25").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from shelfwise.core.models.backend import BackendError, CancelCheck, Likelihoods

PROMPT = "{sentence}\nQuestion: {question}\nAnswer:"


class ReadsContinuations(Protocol):
    def continuations(self, context: str, options: Sequence[str], *,
                      cancel: CancelCheck | None = None) -> Likelihoods: ...


def phrase_likelihoods(model: ReadsContinuations, sentence: str, question: str, phrases: Sequence[str],
                       cancel: CancelCheck | None = None) -> list[tuple[float, float]] | None:
    """(summed, per-token) log-probability of each of ``phrases`` as the answer to ``question`` after
    ``sentence``; None where the model cannot read it."""
    if not phrases:
        return []
    prompt = PROMPT.format(sentence=" ".join(sentence.split()), question=" ".join(question.split()))
    try:
        got = model.continuations(prompt, [" " + " ".join(p.split()) for p in phrases], cancel=cancel)
    except BackendError:
        return None
    return list(zip(got.total, got.mean, strict=True))
