"""Whether the value found for a question is shown first: a confidence that it is right, from the ranker's own
features and the walk's evidence for its sentence, and a threshold under which no value is shown (the sentence is
shown first, as without a value). A yes or no read from the deciding sentence is gated the same way, by a model and
a threshold of its own; so is a phrase the answer model read (``core/answers/span_model.py``).

A wrong value shown large above the sentence is worse for a reader than none: they may take it and not read on; a
"No" over a sentence that says yes is worse still. So a value is shown only where the chance that it is right is
high enough for what a wrong one costs (``benchmarks/research/short_show.py`` chose the weights and the thresholds
on the training data only, counting a wrong value as costing twice what a right one gains and a wrong yes or no
three times; docs/eval/answers.md, "Session 23").

The features (:class:`ShowFeatures`) carry across languages (no word lists): of the value, the margin between the
best value and the best other value, whether the value is of the kind asked for (a number for "how many", a run
of capitals for "who") or a phrase the question's words leave over, how many of the question's words its sentence
holds, and whether the question names a number its sentence lacks; of the walk, whether the sentence is the one it
should be: the encoder's cosine of the question with the sentence and its lead over the other candidate sentences,
the cosine of the sentence's passage and its lead over the other passages shown (a question in another language
than the documents shares no word with them, but the encoder reads both). Pure functions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

MARGIN_CAP = 3.0  # a margin beyond this says no more (and a value with no rival counts as this)


@dataclass(frozen=True)
class ShowFeatures:
    """What is known of the best value found (``core/answers/short.py``'s ``show_features``): of the value and the
    ranker's candidates, and of the walk's evidence for its sentence (None: not known, as for sentences given
    without the walk; read as :data:`TYPICAL`)."""

    margin: float | None  # its score minus the best other value's (None: no other value)
    typed: bool  # a span of the kind asked for (a number, a date, a name for "who"), not a phrase
    ranked: bool  # ranked as a phrase or a name (the kinds name, place, list, thing), not a number or a date
    held: int  # the question's content words its sentence holds
    keys: int  # the question's content words
    close: float  # how near the question's words stand to it in its sentence (``short._closeness``)
    first: bool  # its sentence is the first shown (the one the walk trusts most)
    number_missing: bool  # the question names a number its sentence lacks
    candidates: int  # how many values were found
    held_lead: int  # its sentence's ``held`` minus the most another sentence with a value holds (0 when alone)
    after: bool  # a phrase right after one of the question's words ("consist of [circular RNAs]")
    before: bool  # a phrase right before one
    words: int  # its length in words
    yes_no: bool = False  # a yes or no read from the deciding sentence (the margin and kind features do not apply)
    says_no: bool = False  # ... and it is "No"
    cosine: float | None = None  # the encoder's cosine of the question with its sentence (``Extracted.cosine``)
    lead: float | None = None  # that minus the best other candidate sentence's (``Extracted.lead``)
    passage: float | None = None  # the walk's cosine of the question with its sentence's passage
    passage_lead: float | None = None  # that minus the best other passage's shown (None: one passage)
    # of a yes or no: the deciding sentence states a condition or leaves the question open ("if", "unless",
    # "whether", "wenn", "ob", "si"), so what it says holds only in some cases
    conditional: bool = False
    scenario: bool = False  # ... and the question sets a scene before it (the asker's case, which conditions decide)
    # the answer model's per-token log-probability of the value as the answer, where it read it (None: not read, the
    # feature then 0); weighed only by :data:`SHOW`'s model of the values the model read (``read_weights``; why, and
    # how it was chosen: docs/eval/answers.md, "Session 30 (lead)")
    read: float | None = None

    def vector(self) -> tuple[float, ...]:
        """The features in the order of :data:`NAMES`."""
        margin = MARGIN_CAP if self.margin is None else max(0.0, min(self.margin, MARGIN_CAP))
        value = not self.yes_no  # what describes the ranker's candidates: nothing for a yes or no

        def known(name: str, x: float | None, cap: float = 1.0) -> float:
            return TYPICAL[name] if x is None else max(-cap, min(x, cap))

        return (1.0, margin * self.ranked * value, margin * (not self.ranked) * value,
                float(self.margin is None and value), float(self.typed), float(self.ranked),
                self.held / max(self.keys, 1), float(self.number_missing), math.log1p(self.candidates) * value,
                max(-3, min(self.held_lead, 3)), float(self.yes_no), float(self.says_no),
                known("cosine", self.cosine), known("lead", self.lead, LEAD_CAP),
                known("passage", self.passage), known("passage_lead", self.passage_lead, LEAD_CAP),
                float(self.conditional and self.yes_no), float(self.scenario and self.yes_no),
                0.0 if self.read is None else max(-READ_CAP, min(self.read, 0.0)))


LEAD_CAP = 0.3  # a lead of the sentence or of its passage beyond this says no more
READ_CAP = 10.0  # a per-token log-probability below this says no more
# ``first`` (its sentence is the first shown) is read but not weighed: where the walk's evidence says how sure it was
# of the sentence (``cosine``, ``lead``, ``passage``, ``passage_lead``), its rank adds nothing measured
NAMES = ("bias", "margin_ranked", "margin_typed", "alone", "typed", "ranked", "held_share", "number_missing",
         "log_candidates", "held_lead", "yes_no", "says_no", "cosine", "lead", "passage", "passage_lead",
         "conditional", "scenario", "read")
# the walk's evidence where it is not known (sentences given without a walk): the medians of the training items
# (benchmarks/research/short_show.py), so such a sentence reads as a typical one
TYPICAL = {"cosine": 0.614, "lead": 0.053, "passage": 0.565, "passage_lead": 0.044}


@dataclass(frozen=True)
class ShowWeights:
    """A logistic model of P(the value is right) over :meth:`ShowFeatures.vector`, one weight per name of
    :data:`NAMES`; the ``threshold`` on it under which no value is shown, and ``yes_no_threshold`` under which no
    yes or no is (a "No" that reverses the sentence beneath it costs more than a wrong value). Chosen on the
    training data by ``benchmarks/research/short_show.py`` (docs/eval/answers.md, "Session 23")."""

    weights: tuple[float, ...]
    threshold: float
    yes_no_threshold: float = 0.0
    # a yes or no's own model (None: ``weights``, where an indicator gives it its own intercept)
    yes_no_weights: tuple[float, ...] | None = None
    # a phrase the answer model read (``ShowFeatures.read`` known): its own model and threshold, fitted on those
    # values alone (None: ``weights`` and ``threshold``)
    read_weights: tuple[float, ...] | None = None
    read_threshold: float = 0.0

    def reads(self, features: ShowFeatures) -> bool:
        """Whether ``features`` are of a value the answer model read and this gate has a model for those."""
        return self.read_weights is not None and features.read is not None and not features.yes_no

    def vector(self, yes_no: bool = False, read: bool = False) -> tuple[float, ...]:
        if read and self.read_weights is not None:
            return self.read_weights
        return self.yes_no_weights if yes_no and self.yes_no_weights is not None else self.weights

    def shows(self, features: ShowFeatures) -> tuple[bool, float]:
        """Whether the value is shown, and the confidence in it."""
        sure = confidence(features, self)
        limit = self.yes_no_threshold if features.yes_no else self.read_threshold if self.reads(features) \
            else self.threshold
        return sure >= limit, sure


def confidence(features: ShowFeatures, show: ShowWeights) -> float:
    """The chance, as the model reads it, that the value is right."""
    z = sum(w * x for w, x in zip(show.vector(features.yes_no, show.reads(features)), features.vector(), strict=True))
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


# chosen by benchmarks/research/short_show.py on COVID-QA, ConditionalQA TRAIN and PubMedQA through the stand-in walk
# of short_walk.py (docs/eval/short-show-s23.json); a yes or no's own model on the yes/no questions of ConditionalQA
# TRAIN, PubMedQA and COVID-QA's FAQ pages (``short_show.py --yes-no-apart``, docs/eval/short-show-s24.json); a phrase
# the answer model read, its own model on those values of the same walk read with the worked examples
# (``short_show.py --read``, docs/eval/short-show-s30.json)
SHOW = ShowWeights(weights=(-3.2197, 0.3356, 0.8263, 0.012, 0.7659, 0.6019, 0.9917, -1.3356, -0.015, -0.1123,
                            2.4879, -0.2888, 1.5401, 2.7491, -0.6749, -0.7922, 0.0, 0.0, 0.0),
                   threshold=0.55, yes_no_threshold=0.8,
                   yes_no_weights=(-0.834, 0.0, 0.0, 0.0, 0.0, 0.0, 0.4533, 0.0, 0.0, -0.0422, 0.0, 0.4453, 1.8343,
                                   1.4025, 0.583, -2.2424, -0.3383, -0.0829, 0.0),
                   read_weights=(-3.0115, 0.4084, 0.0, 0.5954, 0.888, 0.0, 1.554, -0.7668, -0.2135, 0.0915, 0.0, 0.0,
                                 4.311, 4.2795, -2.2356, 1.4859, 0.0, 0.0, 0.557),
                   read_threshold=0.65)
# every value shown (the behaviour before the model): for research scripts that grade the ranker alone
SHOW_ALL = ShowWeights(weights=(30.0,) + (0.0,) * (len(NAMES) - 1), threshold=0.0)
