"""Relevance judges the walk can consult: the shipped cross-encoder on llama.cpp, a remote rerank server, or the
deterministic fake for logic tests. All answer ``score(query, texts) -> logits`` (higher = more relevant) and
``probabilities(query, texts)``; ``model_id`` names the model for traces and caches.

``make_judge(spec)`` turns the user's setting into one:
- ``None`` / ``""`` / ``"off"``: no judge (the decision model uses the embedder and BM25 only);
- ``"bundled"``: the judge GGUF shipped in ``resources/models`` (``core/models/encoders/cross_encoder.py``);
- a path to a ``.gguf``: any BERT-style cross-encoder GGUF with a rank head (e.g. a converted bge-reranker);
- an ``http(s)://`` URL: a server with a rerank endpoint (llama.cpp's ``llama-server --reranking`` serves
  ``POST /v1/rerank`` with ``{"query", "documents"}`` and answers ``{"results": [{"index", "relevance_score"}]}``):
  ``core/models/remote/judge.py`` for llama-server (clipped as in process, its model's identity, the same judge in
  process as the fallback), :class:`RemoteJudge` for another rerank server.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from shelfwise.core.models.backend import BackendError, RelevanceJudge
from shelfwise.core.models.fake import words


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-np.clip(x, -30, 30)))).astype(np.float32)


class FakeJudge:
    """Word overlap as a logit: ``8 * |words(text) & words(query)| / |words(query)| - 4``. Logic tests only."""

    model_id = "fake-judge"
    whole_query = False

    def __init__(self) -> None:
        self.calls = 0
        self.pairs = 0

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("score() takes a sequence of texts")
        self.calls += 1
        self.pairs += len(texts)
        q = words(query)
        if not q:
            return np.full(len(texts), -4.0, np.float32)
        return np.array([8.0 * len(words(t) & q) / len(q) - 4.0 for t in texts], np.float32)

    def probabilities(self, query: str, texts: Sequence[str]) -> np.ndarray:
        return _sigmoid(self.score(query, texts))

    def close(self) -> None:
        pass


class RemoteJudge:
    """A rerank server (``POST /v1/rerank``). Its ``relevance_score`` is read as a logit when it is outside [0, 1]
    (llama.cpp returns the raw rank-head output) and as a probability otherwise."""

    def __init__(self, url: str, *, timeout: float = 60.0, retries: int = 1) -> None:
        from shelfwise.core.models.remote.client import ServerClient

        self.pool = ServerClient(url, timeout=timeout, retries=retries, connections=2, backoff=0.5)
        self.model_id = f"rerank@{self.pool.url}"  # it names no model: its own id (core/models/identity.py)
        self.whole_query = True  # a rerank server's model is asked what the user typed

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0, np.float32)
        data = self.pool.request("POST", "/v1/rerank", {"query": query, "documents": list(texts),
                                                        "top_n": len(texts)})
        results = data.get("results")
        if not isinstance(results, list):
            raise BackendError(f"the rerank server at {self.pool.url} answered without 'results'")
        out = np.full(len(texts), np.nan, np.float32)
        for r in results:
            i = int(r.get("index", -1))
            if 0 <= i < len(texts):
                out[i] = float(r.get("relevance_score", r.get("score", np.nan)))
        if np.isnan(out).any():
            raise BackendError(f"the rerank server at {self.pool.url} scored {int((~np.isnan(out)).sum())} of "
                               f"{len(texts)} texts")
        if out.min() >= 0.0 and out.max() <= 1.0:  # probabilities: back to logits so z-scores behave
            p = np.clip(out, 1e-6, 1 - 1e-6)
            out = np.log(p) - np.log1p(-p)
        return out.astype(np.float32)

    def probabilities(self, query: str, texts: Sequence[str]) -> np.ndarray:
        return _sigmoid(self.score(query, texts))

    def close(self) -> None:
        self.pool.close()


def make_judge(spec: str | None, n_threads: int | None = None) -> RelevanceJudge | None:
    """The judge a setting names (see the module doc); BackendError with the reason when it cannot be loaded."""
    spec = (spec or "").strip()
    if spec.lower() in ("", "off", "none"):
        return None
    if spec.startswith(("http://", "https://")):
        from shelfwise.core.models.remote.client import ServerUnavailable
        from shelfwise.core.models.remote.judge import ServerJudge

        try:  # llama-server --reranking: the in-process judge's clipping, identity and fallback
            return ServerJudge(spec, n_threads=n_threads)
        except ServerUnavailable:
            raise
        except BackendError:  # another rerank server (no /v1/models): scores as it answers them
            return RemoteJudge(spec)
    if spec == "fake":
        return FakeJudge()
    from shelfwise.core.models.encoders.cross_encoder import Judge, bundled_judge_path

    path = bundled_judge_path() if spec == "bundled" else Path(spec).expanduser()
    if not path.is_file():
        raise BackendError(f"no judge model at {path}")
    try:
        return Judge(path, n_threads=n_threads)
    except Exception as exc:  # a GGUF without a rank head, or not a GGUF at all
        raise BackendError(f"cannot load the judge {path.name}: {exc}") from exc
