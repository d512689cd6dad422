"""The relevance judge on llama.cpp's ``llama-server --reranking`` (``POST /v1/rerank``), reading what the in-process
judge reads.

The server frames a pair as ``[CLS] query [SEP] text [SEP]`` as the in-process judge does
(``core/models/encoders/pair_frame.py``), but it does not clip: the judge was trained on pairs of at most
``pair_tokens`` tokens with the query cut to ``query_tokens`` (its last ones where ``query_tail``), and a longer
pair scores differently. So the client tokenizes query and texts with the server's ``/tokenize``, clips them as
:func:`~shelfwise.core.models.encoders.pair_frame.pair_tokens` does, and sends a clipped part as the server's own
``/detokenize`` of the kept ids (a WordPiece text detokenized and tokenized again gives the same ids). The caps come
from the judge GGUF's ``shelfwise.judge.*`` keys, read from this machine's copy of the same file (the judge ships
with Shelfwise); a judge this machine has no copy of is read with the defaults.

Identity: the in-process judge's ``model_id`` for the same file (``core/models/identity.py``: the alias
``packaging/server.sh`` declares, else the file the server reports when it is on this machine), else the server's
own id. When the server cannot be reached, the in-process judge on the same file
stands in (logged once; :attr:`ServerJudge.ran` says which ran); without one, the error says what to do.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from shelfwise.core.models.backend import BackendError, RelevanceJudge
from shelfwise.core.models.encoders.pair_frame import PAIR_TOKENS, QUERY_TOKENS, PairFrame
from shelfwise.core.models.remote.client import ServerClient, ServerUnavailable
from shelfwise.core.models.remote.embedder import START_HINT, server_model
from shelfwise.core.models.remote.fallback import as_sentence

log = logging.getLogger(__name__)


def judge_caps(path: Path) -> tuple[int, int, bool, bool]:
    """``(query_tokens, pair_tokens, query_tail, whole_query)`` from a judge GGUF's ``shelfwise.judge.*`` keys (the
    defaults where a key is missing), read without loading the model."""
    import gguf

    fields = gguf.GGUFReader(str(path)).fields

    def value(key: str, default: object) -> object:
        field = fields.get(f"shelfwise.judge.{key}")
        return field.contents() if field is not None else default

    return (int(str(value("query_tokens", QUERY_TOKENS))), int(str(value("pair_tokens", PAIR_TOKENS))),
            bool(value("query_tail", False)), bool(value("whole_query", False)))


def local_judge_file(model_id: str) -> Path | None:
    """This machine's copy of the judge ``model_id`` names: the judge shipped with Shelfwise or a file in the
    models folder with that identity (:func:`~shelfwise.core.models.identity.local_copy`); None without one."""
    from shelfwise.core.models.encoders.cross_encoder import bundled_judge_path
    from shelfwise.core.models.identity import local_copy
    from shelfwise.core.paths import models_dir

    folder = models_dir()
    candidates = sorted(folder.glob("*.gguf")) if folder.is_dir() else []
    try:
        candidates.insert(0, bundled_judge_path())
    except BackendError:
        pass
    return local_copy(model_id, candidates)


class ServerJudge:
    """A :class:`~shelfwise.core.models.backend.RelevanceJudge` on a rerank server (see the module doc)."""

    def __init__(self, url: str, *, timeout: float = 60.0, retries: int = 2, concurrency: int = 4,
                 n_threads: int | None = None) -> None:
        self.pool = ServerClient(url, timeout=timeout, retries=retries, connections=concurrency, backoff=0.5,
                                 role="judge server", start_hint=START_HINT)
        self.url = self.pool.url
        self._workers = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="remote-judge")
        self._n_threads = n_threads
        self._lock = threading.Lock()
        self._local: RelevanceJudge | None = None
        self.ran = f"on the judge server at {self.url}"
        try:
            try:
                props = self.pool.request("GET", "/props", retries=0)
            except ServerUnavailable:
                raise
            except BackendError:
                props = {}
            self.server = server_model(self.pool.request("GET", "/v1/models"), props)
        except BaseException:
            self.close()
            raise
        self._model_id = self.server.model_id
        self.file = local_judge_file(self._model_id)
        q_cap, pair_cap, tail, whole = judge_caps(self.file) if self.file is not None else \
            (QUERY_TOKENS, PAIR_TOKENS, False, True)  # a model of its own: asked what the user typed
        self.frame = PairFrame(cls=0, sep=0, query_tokens=q_cap, pair_tokens=pair_cap, query_tail=tail)
        self._whole_query = whole

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def whole_query(self) -> bool:
        return self._whole_query

    # -- clipping ---------------------------------------------------------------------------------------------------
    def _tokens(self, text: str, cap: int) -> list[int]:
        data = self.pool.request("POST", "/tokenize", {"content": text[: cap * 8], "add_special": False,
                                                        "parse_special": False})
        toks = data.get("tokens")
        if not isinstance(toks, list):
            raise BackendError(f"the judge server at {self.url} answered /tokenize without token ids")
        return [int(t) for t in toks]

    def _text(self, ids: list[int]) -> str:
        data = self.pool.request("POST", "/detokenize", {"tokens": ids})
        return str(data.get("content", ""))

    def clipped(self, query: str, texts: Sequence[str]) -> tuple[str, list[str]]:
        """The query and texts as the judge reads them: each cut as ``pair_tokens`` cuts its ids (a part that
        fits is sent as it is)."""
        f = self.frame
        q = self._tokens(query, f.query_tokens)
        if len(q) > f.query_tokens:
            q = q[-f.query_tokens:] if f.query_tail else q[: f.query_tokens]
            query = self._text(q)
        room = f.pair_tokens - len(q) - 3

        def cut(text: str) -> str:
            ids = self._tokens(text, f.pair_tokens)
            return self._text(ids[:room]) if len(ids) > room else text

        return query, list(self._workers.map(cut, texts))

    # -- scoring ----------------------------------------------------------------------------------------------------
    def _score_remote(self, query: str, texts: Sequence[str]) -> np.ndarray:
        query, docs = self.clipped(query, texts)
        data = self.pool.request("POST", "/v1/rerank", {"query": query, "documents": docs, "top_n": len(docs)})
        results = data.get("results")
        if not isinstance(results, list):
            raise BackendError(f"the judge server at {self.url} answered without 'results' (start it with "
                               "--reranking)")
        out = np.full(len(texts), np.nan, np.float32)
        for r in results:
            if isinstance(r, dict):
                i = int(r.get("index", -1))
                if 0 <= i < len(texts):
                    out[i] = float(r.get("relevance_score", np.nan))
        if np.isnan(out).any():
            raise BackendError(f"the judge server at {self.url} scored {int((~np.isnan(out)).sum())} of "
                               f"{len(texts)} texts")
        return out

    def _fallback(self, why: ServerUnavailable) -> RelevanceJudge:
        with self._lock:
            if self._local is None:
                if self.file is None:
                    raise BackendError(f"{as_sentence(why)} No copy of its judge ({self._model_id}) is on this "
                                       "machine to stand in: start the server, or set the judge to 'bundled' or "
                                       "off.") from why
                from shelfwise.core.models.encoders.cross_encoder import Judge

                log.warning("%s Judging in this process with the same weights (%s) from now on.",
                            as_sentence(why), self._model_id)
                self._local = Judge(self.file, n_threads=self._n_threads)
                self.ran = f"in process: the judge server at {self.url} did not answer"
            return self._local

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Raw relevance logits (higher = more relevant), float32, in input order."""
        if isinstance(texts, str):
            raise TypeError("score() takes a sequence of texts")
        if not texts:
            return np.zeros(0, np.float32)
        if self._local is None:
            try:
                return self._score_remote(query, texts)
            except ServerUnavailable as exc:
                return self._fallback(exc).score(query, texts)
        return self._local.score(query, texts)

    def probabilities(self, query: str, texts: Sequence[str]) -> np.ndarray:
        x = self.score(query, texts)
        return (1.0 / (1.0 + np.exp(-np.clip(x, -30, 30)))).astype(np.float32)

    def close(self) -> None:
        self._workers.shutdown(wait=False, cancel_futures=True)
        self.pool.close()
        if self._local is not None:
            self._local.close()
            self._local = None


__all__ = ["ServerJudge", "judge_caps", "local_judge_file"]
