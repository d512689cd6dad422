"""Running the requests of one navigation level concurrently (for backends that are servers).

A level larger than one request is split into chunks (``Budgets.request_size``); with an in-process backend
the chunks run one after another (the model is one context behind a lock), with a remote backend they can run
at the same time on one llama-server with parallel slots (``--parallel N``). :func:`score_requests` does either and
returns the results in input order, so running them concurrently gives exactly what the sequential loop gives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from shelfwise.core.models.backend import Cost, DecisionBackend, Likelihoods, Scores

T = TypeVar("T")
R = TypeVar("R")


def request_concurrency(backend: DecisionBackend) -> int:
    """How many requests of a level to run at once for ``backend``: its ``max_concurrency`` (more than 1 for
    remote backends)."""
    return max(1, backend.max_concurrency or 1)


def score_requests(fn: Callable[[T], R], chunks: Sequence[T], max_concurrency: int) -> list[R]:
    """``[fn(c) for c in chunks]``, with at most ``max_concurrency`` calls running at once (threads).

    Results are in input order whatever order the calls finish in. The first exception (in input order) is
    re-raised after the calls still queued are cancelled; calls already running finish first (a thread cannot
    be interrupted), so pass the same cancel check to ``fn`` to stop them between requests.
    """
    items = list(chunks)
    if max_concurrency <= 1 or len(items) <= 1:
        return [fn(c) for c in items]
    with ThreadPoolExecutor(
        max_workers=min(max_concurrency, len(items)), thread_name_prefix="shelfwise-level"
    ) as ex:
        futures = [ex.submit(fn, c) for c in items]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def pool_scores(results: Sequence[Scores]) -> Scores:
    """Concatenate per-request scores in order; costs add up (``seconds`` is the sum of the requests' seconds,
    not wall time)."""
    cost = Cost()
    values: list[float] = []
    for r in results:
        values.extend(r.values)
        cost.add(r.cost)
    return Scores(values, cost)


def pool_likelihoods(results: Sequence[Likelihoods]) -> Likelihoods:
    """Concatenate per-request likelihoods in order (``n_tokens`` from the first request)."""
    cost = Cost()
    total: list[float] = []
    mean: list[float] = []
    for r in results:
        total.extend(r.total)
        mean.extend(r.mean)
        cost.add(r.cost)
    return Likelihoods(total, mean, results[0].n_tokens if results else 0, cost)
