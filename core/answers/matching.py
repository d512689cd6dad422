"""SQuAD-style answer matching: the v1.1 normalisation, exact match, token F1, and the looser "gold answer contained
as whole words" test the adaptive tree search uses to tell a correct trajectory. Shared by the search
(:mod:`shelfwise.core.answers.adaptive_search`) and the answer-quality evaluation (:mod:`shelfwise.evaluation`).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

from shelfwise.core.answers.answer import strip_citations

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalisation (after removing ``[n]`` citations): lower case, drop punctuation and articles,
    collapse whitespace."""
    text = strip_citations(text).lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, golds: Sequence[str]) -> float:
    p = normalize_answer(prediction)
    return float(any(p == normalize_answer(g) for g in golds))


def _f1(prediction: str, gold: str) -> float:
    p, g = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not p or not g:
        return float(p == g)
    common = Counter(p) & Counter(g)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def f1_score(prediction: str, golds: Sequence[str]) -> float:
    return max((_f1(prediction, g) for g in golds), default=0.0)


def answer_matches(prediction: str, golds: str | Sequence[str]) -> bool:
    """Exact match after normalisation, or a gold answer contained in the prediction as whole words."""
    golds = [golds] if isinstance(golds, str) else list(golds)
    p = f" {normalize_answer(prediction)} "
    for g in golds:
        n = normalize_answer(g)
        if n and (p.strip() == n or f" {n} " in p):
            return True
    return False
