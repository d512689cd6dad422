"""The decision model's combiner: evidence features -> one calibrated P(relevant) per candidate, per level kind.

A small logistic model per level kind (cluster, document, section, passage). Before a collection is calibrated the
prior weights below are used (they favour the embedder, the strongest single evidence on ConditionalQA's tune half,
and add lexical evidence; docs/eval/attempts.md); ``core/navigation/calibrate.py`` fits the weights on probe
queries made from the user's own documents and stores them per collection and model set.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from shelfwise.core.navigation.features import FEATURES

LEVEL_KINDS = ("cluster", "document", "section", "passage")

_PRIOR: dict[str, float] = {
    "z_cos_max": 1.2, "z_cos_top3": 0.6, "z_cos_desc": 0.3, "z_lex_max": 0.4, "rank_cos": 1.0, "rank_lex": 0.3,
    "parent": 0.3, "z_lm": 0.3, "z_cos_q_max": 0.6, "z_judge": 1.0,
}
# ``z_judge`` (the relevance judge's logit, z-scored among the candidates it read) is 0 while no judge is switched
# on (Settings.judge), so it changes nothing then; its weight is set from the ConditionalQA tune half
# (docs/eval/attempts.md).
# Passages are the last level, where candidates from different branches and the hybrid pool meet: their cosine and
# BM25 are z-scored against the whole collection (not the pool), plus the best neighbour in the same section (a
# list item is read with its lead-in). Re-derived across collections (issue 23 item 5): leave-one-collection-out
# over the ConditionalQA tune half and four traindata collections (benchmarks/research/combiner_loco.py), choosing the
# weights with the best WORST held-out change; every fitted departure cost on some held-out collection, so these
# weights stay (docs/eval/combiner.md has the figures and the runner-up by the mean rule).
_PRIOR_BY_KIND: dict[str, dict[str, float]] = {
    "passage": {"g_cos_max": 1.0, "g_lex_max": 0.25, "g_cos_nb": 0.2, "z_lm": 0.3, "z_judge": 1.0},
}


@dataclass
class LevelModel:
    weights: np.ndarray
    bias: float = -1.0
    fitted: bool = False
    n_train: int = 0
    scale: float = 1.0  # Platt scale fitted on the prior's score (1 for the prior itself)

    def ranking_score(self, x: np.ndarray) -> np.ndarray:
        """The prior-scale score, without calibration's scale and offset: what a child level reads as its
        ``parent`` evidence, so calibrating one level cannot change how much its children trust it."""
        return ((self.logits(x) - self.bias) / (self.scale or 1.0)).astype(np.float32)

    def logits(self, x: np.ndarray) -> np.ndarray:
        if len(x) == 0:
            return np.zeros(0, np.float32)
        return (x @ self.weights + self.bias).astype(np.float32)

    def proba(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-np.clip(self.logits(x), -30, 30)))


def prior_weights(kind: str) -> dict[str, float]:
    return _PRIOR_BY_KIND.get(kind, _PRIOR)


def prior_model(kind: str = "section") -> LevelModel:
    w = np.zeros(len(FEATURES), np.float32)
    for name, val in prior_weights(kind).items():
        w[FEATURES.index(name)] = val
    return LevelModel(weights=w, bias=-1.5)


@dataclass
class DecisionModel:
    levels: dict[str, LevelModel] = field(default_factory=lambda: {k: prior_model(k) for k in LEVEL_KINDS})
    key: str = "prior"  # collection + model set it was fitted for
    lm_levels: tuple[str, ...] = ()  # level kinds where the generative model's readout earns its cost
    keep: dict[str, int] = field(default_factory=dict)  # calibrated per-level budgets
    first_keep_ratio: float | None = None
    report: dict = field(default_factory=dict)

    def model(self, kind: str) -> LevelModel:
        return self.levels.get(kind) or self.levels["passage"]

    def ranking_note(self) -> str:
        """One line for the trace: per level, whether the ranking is the prior's or was refitted on probes."""
        levels = self.report.get("levels") or {}
        if not levels:
            return "prior weights (collection not calibrated)"
        return "ranking: " + ", ".join(f"{kind} {info.get('ranking', 'prior')}" for kind, info in levels.items())

    def to_json(self) -> str:
        return json.dumps({
            "key": self.key, "prior": prior_fingerprint(), "lm_levels": list(self.lm_levels), "keep": self.keep,
            "first_keep_ratio": self.first_keep_ratio, "report": self.report, "features": list(FEATURES),
            "levels": {k: {"weights": m.weights.tolist(), "bias": m.bias, "fitted": m.fitted, "n_train": m.n_train,
                                "scale": m.scale}
                       for k, m in self.levels.items()},
        })

    @classmethod
    def from_json(cls, text: str) -> DecisionModel:
        d = json.loads(text)
        if list(d.get("features", [])) != list(FEATURES) or d.get("prior") != prior_fingerprint():
            return cls()  # features or prior weights changed since calibration: the prior until recalibrated
        levels = {k: LevelModel(np.asarray(v["weights"], np.float32), float(v["bias"]), bool(v["fitted"]),
                                int(v.get("n_train", 0)), float(v.get("scale", 1.0))) for k, v in d["levels"].items()}
        for k in LEVEL_KINDS:
            levels.setdefault(k, prior_model(k))
        return cls(levels=levels, key=d.get("key", ""), lm_levels=tuple(d.get("lm_levels", ())),
                   keep={k: int(v) for k, v in d.get("keep", {}).items()},
                   first_keep_ratio=d.get("first_keep_ratio"), report=d.get("report", {}))


def prior_fingerprint() -> str:
    """Identifies the prior weights a calibration scaled; a stored calibration of other weights is stale."""
    return ";".join(f"{kind}:" + ",".join(f"{k}={v}" for k, v in sorted(prior_weights(kind).items()))
                    for kind in LEVEL_KINDS)


def meta_key(collection_id: int, model_set: str) -> str:
    return f"decision:{collection_id}:{model_set}"
