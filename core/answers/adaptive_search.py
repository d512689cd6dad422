"""Calibrating adaptive retrieval on labelled questions: DeepRAG's best-first binary tree search.

For each labelled question (``--qa FILE``: JSON Lines, one object per line: ``"question"``, ``"answer"`` (a string
or a list of accepted strings), optional ``"collection"``):

1. the question is decomposed as at inference time (``core/answers/adaptive.py``), at most ``max_sub`` sub-questions;
2. a binary tree: every sub-question branches into *answer from the model* (the closed-book answer) and *retrieve,
   then answer* (walk the tree, answer from the passages). Nodes are expanded best-first with priority = number of
   retrievals so far (ties: the deeper node first), so the first complete trajectory whose final answer matches
   the gold is the cheapest correct one. A match is SQuAD normalisation (lower case, no punctuation, no articles)
   then equality or the gold contained in the answer. The search stops after ``max_expansions`` expansions;
3. every step of a found trajectory is a labelled decision: its P(retrieve) and whether it retrieved. The
   threshold that best separates them (most agreement; ties: the value of the best interval nearest the current
   default 0.5, or that interval's midpoint) is stored as ``adaptive_threshold:<model id>``.

The trajectories found are exported for fine-tuning by ``training/adaptive_export.py`` (research, not the
product).
"""

from __future__ import annotations

import heapq
import itertools
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from shelfwise.core.answers.adaptive import MAX_SUB, Runner, decompose, get_threshold, model_id, set_threshold
from shelfwise.core.answers.matching import answer_matches
from shelfwise.core.answers.types import Step
from shelfwise.core.navigation.walk import LibraryWalk

MAX_EXPANSIONS = 16
CHOICES = ("model", "documents")  # cheaper first

StepFn = Callable[[int, str, list[Step]], Step]
FinalFn = Callable[[list[Step]], str]


@dataclass
class QAItem:
    question: str
    answers: list[str]
    collection: str | None = None


def load_qa(path: Path) -> list[QAItem]:
    """Read a ``--qa`` file (see the module doc). Raises ValueError naming the line of a malformed entry."""
    items = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            answer = obj["answer"]
            answers = [answer] if isinstance(answer, str) else [str(a) for a in answer]
            items.append(QAItem(str(obj["question"]), answers, obj.get("collection")))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{n}: expected {{\"question\": ..., \"answer\": ...}}: {exc}") from exc
    return items


# --------------------------------------------------------------------------- the search (pure)
@dataclass
class Explored:
    choices: tuple[str, ...]
    answer: str
    correct: bool


@dataclass
class TreeResult:
    trajectory: list[Step] | None  # the cheapest correct trajectory, or None
    choices: tuple[str, ...]
    final_answer: str
    expansions: int
    explored: list[Explored]  # complete trajectories judged, in the order they were reached
    children: dict[tuple[str, ...], Step] = field(default_factory=dict)  # every step computed, by its choices

    @property
    def retrievals(self) -> int:
        return sum(c == "documents" for c in self.choices)


def best_first_search(
    n_steps: int, step_fn: StepFn, final_fn: FinalFn, is_correct: Callable[[str], bool], *,
    max_expansions: int = MAX_EXPANSIONS,
) -> TreeResult:
    """Best-first search over the binary tree of choices for ``n_steps`` sub-questions.

    ``step_fn(i, choice, steps_so_far)`` computes step ``i`` with ``choice`` ("model" | "documents");
    ``final_fn(steps)`` the final answer of a complete trajectory. Priority = retrievals so far (then depth), so
    complete trajectories are judged in order of their number of retrievals and the first correct one is returned.
    """
    counter = itertools.count()
    heap: list[tuple[int, int, int, tuple[str, ...], list[Step]]] = [(0, 0, next(counter), (), [])]
    explored: list[Explored] = []
    children: dict[tuple[str, ...], Step] = {}
    expansions = 0
    while heap:
        retrievals, _, _, choices, steps = heapq.heappop(heap)
        if len(choices) == n_steps:
            answer = final_fn(steps)
            ok = bool(is_correct(answer))
            explored.append(Explored(choices, answer, ok))
            if ok:
                return TreeResult(steps, choices, answer, expansions, explored, children)
            continue
        if expansions >= max_expansions:
            break
        expansions += 1
        i = len(choices)
        for choice in CHOICES:
            step = step_fn(i, choice, steps)
            key = (*choices, choice)
            children[key] = step
            heapq.heappush(heap, (retrievals + (choice == "documents"), -(i + 1), next(counter), key, [*steps, step]))
    return TreeResult(None, (), "", expansions, explored, children)


# --------------------------------------------------------------------------- threshold
def fit_threshold(pairs: Iterable[tuple[float, bool]], prior: float = 0.5) -> tuple[float, float] | None:
    """The threshold ``t`` (retrieve iff p >= t) with the most agreement with the labelled decisions
    ``(p_retrieve, retrieved)``; returns (t, agreement) or None without pairs.

    Agreement is constant between consecutive distinct p values; among the best intervals the one nearest
    ``prior`` is taken, and ``prior`` itself when inside it, else that interval's midpoint (never a sample)."""
    data = sorted((float(p), bool(r)) for p, r in pairs)
    if not data:
        return None
    values = sorted({p for p, _ in data})
    bounds = [-float("inf"), *values, float("inf")]  # interval j = (bounds[j], bounds[j+1]]
    best: list[tuple[float, float]] = []
    best_agree = -1
    for lo, hi in itertools.pairwise(bounds):
        # any t in (lo, hi] retrieves exactly the p >= hi
        agree = sum((p >= hi) == r for p, r in data)
        if agree > best_agree:
            best_agree, best = agree, [(lo, hi)]
        elif agree == best_agree:
            best.append((lo, hi))

    def pick(lo: float, hi: float) -> float:
        if lo < prior <= hi:
            return prior
        lo_f = max(lo, 0.0) if lo != -float("inf") else min(0.0, hi)
        hi_f = min(hi, 1.0) if hi != float("inf") else max(1.0, lo) + 1e-6
        return (lo_f + hi_f) / 2

    t = min((pick(lo, hi) for lo, hi in best), key=lambda x: abs(x - prior))
    return t, best_agree / len(data)


# --------------------------------------------------------------------------- the command's engine
@dataclass
class QuestionOutcome:
    item: QAItem
    subquestions: list[str]
    tree: TreeResult
    seconds: float

    @property
    def solved(self) -> bool:
        return self.tree.trajectory is not None


@dataclass
class CalibrationReport:
    model: str
    questions: int
    solved: int
    mean_retrievals: float  # over solved questions
    pairs: int
    threshold: float | None  # fitted (None: nothing solved)
    agreement: float | None
    previous_threshold: float
    saved: bool
    seconds: float
    outcomes: list[QuestionOutcome] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        d = {k: v for k, v in self.__dict__.items() if k != "outcomes"}
        d["per_question"] = [{
            "question": o.item.question, "solved": o.solved, "subquestions": o.subquestions,
            "choices": list(o.tree.choices), "final_answer": o.tree.final_answer, "expansions": o.tree.expansions,
            "explored": len(o.tree.explored), "seconds": round(o.seconds, 2),
        } for o in self.outcomes]
        return d


def search_question(library: LibraryWalk, item: QAItem, *, collection: str | None = None, max_sub: int = MAX_SUB,
                    max_expansions: int = MAX_EXPANSIONS) -> QuestionOutcome:
    """Decompose one labelled question and find its cheapest correct trajectory with the real models."""
    t0 = time.perf_counter()
    runner = Runner(library, collection=item.collection or collection)
    subs = decompose(runner.backend, item.question, max_sub=max_sub, cost=runner.cost)
    finals: dict[tuple[str, ...], str] = {}

    def step_fn(i: int, choice: str, prefix: list[Step]) -> Step:
        return runner.step(subs[i], choice)  # sub-answers do not depend on earlier steps: cached per branch

    def final_fn(steps: list[Step]) -> str:
        key = tuple(s.source for s in steps)
        if key not in finals:
            finals[key] = runner.final(item.question, steps).text
        return finals[key]

    tree = best_first_search(len(subs), step_fn, final_fn, lambda a: answer_matches(a, item.answers),
                             max_expansions=max_expansions)
    return QuestionOutcome(item, subs, tree, time.perf_counter() - t0)


def calibrate_adaptive(
    library: LibraryWalk, items: Sequence[QAItem], *, collection: str | None = None,
    max_sub: int = MAX_SUB, max_expansions: int = MAX_EXPANSIONS, save: bool = True,
    progress: Callable[[int, int, QuestionOutcome], None] | None = None,
) -> CalibrationReport:
    """Search every item, fit and (``save``) store the threshold (the report keeps every outcome's tree)."""
    t0 = time.perf_counter()
    backend = library.backend
    previous = get_threshold(library.store, backend)
    outcomes = []
    for n, item in enumerate(items, 1):
        outcome = search_question(library, item, collection=collection, max_sub=max_sub,
                                  max_expansions=max_expansions)
        outcomes.append(outcome)
        if progress is not None:
            progress(n, len(items), outcome)
    solved = [o for o in outcomes if o.solved]
    pairs = [(s.p_retrieve, s.source == "documents") for o in solved for s in o.tree.trajectory or []]
    fitted = fit_threshold(pairs, prior=previous)
    if fitted is not None:
        fitted = (round(fitted[0], 6), fitted[1])
    saved = bool(save and fitted is not None)
    if saved and fitted is not None:
        set_threshold(library.store, backend, fitted[0])
    mean_r = sum(o.tree.retrievals for o in solved) / len(solved) if solved else 0.0
    return CalibrationReport(
        model=model_id(backend), questions=len(items), solved=len(solved), mean_retrievals=round(mean_r, 3),
        pairs=len(pairs), threshold=None if fitted is None else fitted[0],
        agreement=None if fitted is None else round(fitted[1], 4), previous_threshold=previous, saved=saved,
        seconds=round(time.perf_counter() - t0, 2), outcomes=outcomes,
    )
