"""The answer path's thresholds and weights, per sentence encoder: they compare the encoder's cosines, whose scale
is the encoder's own (EmbeddingGemma's query-passage cosines sit higher and closer together than MiniLM's), so
each encoder family gets the values chosen with its own cosines on the ConditionalQA TUNE half and the sample's
questions (docs/eval/embeddinggemma.md, "Answer thresholds and weights per encoder"). An encoder of another family
(an embedding GGUF the user names) gets MiniLM's, the values the rest of the answer path was built with."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from shelfwise.core.models.backend import Embedder


@dataclass(frozen=True)
class Logistic:
    """A logistic model: ``weights`` over the features in the order its reader gives them, and its ``intercept``."""

    weights: tuple[float, ...]
    intercept: float

    def probability(self, x: Sequence[float]) -> float:
        z = self.intercept + sum(w * v for w, v in zip(self.weights, x, strict=True))
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))


@dataclass(frozen=True)
class AnswerTuning:
    """``found_min_cosine``: the best shown passage's query cosine under which an answer is "not found";
    ``covered_min`` / ``covered_max_cosine``: the key-term coverage rule (:mod:`~shelfwise.core.answers.coverage`);
    ``abstain_max_p``: the walk's P(relevant) of its top passage under which it is "not found" too (with cosine
    evidence); ``passage_weight``, ``cue_weight``, ``lexical_weight``: the extracted sentence's ranking
    (``core/answers/extractive.py``)."""

    found_min_cosine: float
    abstain_max_p: float
    passage_weight: float
    cue_weight: float
    lexical_weight: float
    # not found too when the top passages hold under ``covered_min`` of the question's key terms and the best
    # cosine is under ``covered_max_cosine`` (core/answers/coverage.py; 0.0: off, no point chosen: docs/eval/answers.md)
    covered_min: float = 0.0
    covered_max_cosine: float = 0.0
    # not found too when some key term of the question occurs nowhere in the library, the library holds at least
    # ``absent_min_present`` of the question's words, the question without those terms keeps an encoder cosine
    # under ``absent_max_keep`` with itself, and the best cosine is under ``absent_max_cosine``
    # (core/answers/coverage.py ``subject_absent``; absent_max_keep 0.0: off)
    absent_min_present: float = 0.0
    absent_max_keep: float = 0.0
    absent_max_cosine: float = 0.0
    # not found too when the fitted model over the top passages' evidence (core/answers/answerable.py's FEATURES)
    # gives P(not answered) of at least ``unanswered_min``; where it reads a question it takes the place of
    # ``abstain_max_p`` (None: off)
    unanswered: Logistic | None = None
    unanswered_min: float = 1.0


# chosen with all-MiniLM-L6-v2 (docs/benchmarks.md, "Answers" and "The extracted answer")
MINILM = AnswerTuning(found_min_cosine=0.26, abstain_max_p=0.021, passage_weight=0.2, cue_weight=0.2,
                      lexical_weight=0.4)
# chosen with EmbeddingGemma-300M: its cosines never fall under 0.3 on the tune half, so only P(relevant) abstains;
# the absent-subject rule's values chosen by benchmarks/research/not_found_tune.py on its tune sets
# (docs/eval/answers.md, "Not found")
# the fitted rule (core/answers/answerable.py) fitted and its threshold chosen by
# benchmarks/research/not_found_fit.py on the same tune sets (docs/eval/answers.md, "Session 27: not found"); where
# it reads (a question and its library given) it takes the place of abstain_max_p
EMBEDDINGGEMMA = AnswerTuning(found_min_cosine=0.0, abstain_max_p=0.0167, passage_weight=0.2, cue_weight=0.3,
                              lexical_weight=0.4, absent_min_present=0.6, absent_max_keep=0.82,
                              absent_max_cosine=0.5,
                              unanswered=Logistic((-9.204, -0.6838, 1.3623, -3.5799, 0.026, 3.0813), 2.6087),
                              unanswered_min=0.9)
BY_PROFILE = {"minilm": MINILM, "embeddinggemma": EMBEDDINGGEMMA}


def tuning_for(embedder: Embedder | None) -> AnswerTuning:
    """The values for ``embedder``'s family (its declared ``profile``); MiniLM's for an unknown one."""
    profile = embedder.profile if embedder is not None else None
    return BY_PROFILE.get(profile.name, MINILM) if profile is not None else MINILM
