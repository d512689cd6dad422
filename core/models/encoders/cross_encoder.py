"""Shelfwise's relevance judge: a small BERT cross-encoder (GGUF, pooling type RANK) scored on llama.cpp.

The judge reads ``[CLS] query [SEP] text [SEP]`` and returns one raw logit per pair (``sigmoid`` turns it into a
probability before calibration). It is trained by ``training/train_judge.py`` (development only, PyTorch) and
shipped as ``resources/models/shelfwise-judge-*.gguf``; at run time only llama.cpp is used, nothing downloads.

Pairs are built by hand (:func:`pair_tokens`, pure, the same function the trainer uses): llama.cpp's tokenizer
cannot frame a pair, and llama.cpp hard-codes token type 0, so the judge was trained with zero token types. Many
pairs go into one ``llama_encode`` (one sequence each, ``n_seq_max`` >= 32); llama.cpp's BERT rank graph then
leaves one float per sequence, read with ``llama_get_embeddings_seq``.

    >>> judge = Judge()
    >>> judge.score("How do I claim travel expenses?", ["Expenses > Travel: claim within 30 days", "Canteen hours"])
    array([ 3.1, -4.2], dtype=float32)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.encoders.llama_encoder import EncoderContext, LoadedEncoder, load_model
from shelfwise.core.models.encoders.llama_encoder import meta_str as _meta
from shelfwise.core.models.encoders.pair_frame import PAIR_TOKENS, QUERY_TOKENS, PairFrame, pair_tokens
from shelfwise.core.models.identity import model_identity
from shelfwise.core.models.llama.logs import LOGGER as LLAMA_LOGGER

JUDGE_GLOB = "shelfwise-judge-*.gguf"


def sigmoid(x: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))).astype(np.float32)


def bundled_judge_path() -> Path:
    """The judge GGUF shipped in ``shelfwise.resources/models`` (newest name if several), or a clear BackendError."""
    from importlib import resources

    folder = Path(str(resources.files("shelfwise.resources") / "models"))
    found = sorted(folder.glob(JUDGE_GLOB)) if folder.is_dir() else []
    if not found:
        raise BackendError(f"no relevance judge ({JUDGE_GLOB}) in {folder}: reinstall Shelfwise")
    return found[-1]


# ggml's levels in the llama.cpp that llama-cpp-python 0.3.x builds: NONE 0, DEBUG 1, INFO 2, WARN 3, ERROR 4, CONT 5
# (llama-cpp-python's own callback maps an older enum, so its "errors only" still prints warnings).
class Judge(LoadedEncoder):
    """Scores (query, text) pairs with a cross-encoder GGUF through llama.cpp's batch API.

    ``batch_tokens`` caps the tokens of one ``llama_encode`` and ``max_seqs`` the pairs in it. Calls are
    serialised by a lock. ``n_threads`` defaults to the cores (1-4).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        n_threads: int | None = None,
        batch_tokens: int = 1024,
        max_seqs: int = 32,
        verbose: bool = False,
    ) -> None:
        from shelfwise.core.models.llama.bindings import llama_cpp

        super().__init__("judge")
        path = Path(model_path) if model_path is not None else bundled_judge_path()
        if not path.is_file():
            raise BackendError(f"judge model not found: {path}")
        self.path = path
        self._model_id = model_identity(path)
        if verbose:
            logging.getLogger(LLAMA_LOGGER).setLevel(logging.DEBUG)
        self._model = load_model(path, "judge")
        try:
            self._vocab = llama_cpp.llama_model_get_vocab(self._model)
            n_train = int(llama_cpp.llama_model_n_ctx_train(self._model))
            # the caps the judge was trained with (GGUF keys shelfwise.judge.*; the first judge has none)
            query_cap = int(_meta(self._model, "shelfwise.judge.query_tokens") or QUERY_TOKENS)
            pair_cap = int(_meta(self._model, "shelfwise.judge.pair_tokens") or PAIR_TOKENS)
            self.frame = PairFrame(
                cls=int(llama_cpp.llama_vocab_bos(self._vocab)),
                sep=int(llama_cpp.llama_vocab_sep(self._vocab)),
                query_tokens=query_cap,
                pair_tokens=min(pair_cap, n_train),
                query_tail=_meta(self._model, "shelfwise.judge.query_tail") == "true",
            )
            #: the judge reads the whole query (a scenario and its question), not only the question sentence
            self.whole_query = _meta(self._model, "shelfwise.judge.whole_query") == "true"
            self.batch_tokens = max(batch_tokens, self.frame.pair_tokens)
            self._enc = EncoderContext(self._model, pooling=llama_cpp.LLAMA_POOLING_TYPE_RANK, width=1,
                                       batch_tokens=self.batch_tokens, max_seqs=max_seqs, n_threads=n_threads,
                                       what="judge")
            self.max_seqs = self._enc.max_seqs
            self.n_threads = self._enc.n_threads
        except BaseException:
            self.close()
            raise

    @property
    def model_id(self) -> str:
        """The file's identity (``core/models/identity.py``): changes whenever the model file changes."""
        return self._model_id

    # -- tokenization -------------------------------------------------------------------------------------------
    def _text_tokens(self, text: str, cap: int) -> list[int]:
        # Each token covers at least one character, and rarely more than ~8: clip long texts before tokenizing.
        return self._raw_tokens(text[: cap * 8].encode("utf-8", errors="replace"), False)

    def pairs(self, query: str, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of every ``(query, text)`` pair as the judge reads them."""
        q = self._text_tokens(query, self.frame.query_tokens)
        return [pair_tokens(q, self._text_tokens(t, self.frame.pair_tokens), self.frame) for t in texts]

    # -- scoring ------------------------------------------------------------------------------------------------
    def score_tokens(self, seqs: list[list[int]]) -> np.ndarray:
        """Raw logits for pre-built pair token sequences (see :meth:`pairs`)."""
        if not seqs:
            return np.zeros(0, dtype=np.float32)
        with self._lock:
            if self._enc is None:
                raise BackendError("judge is closed")
            return self._enc.encode_sequences(seqs)[:, 0].copy()

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Raw relevance logits of ``texts`` for ``query``, float32, in input order (higher = more relevant)."""
        if isinstance(texts, str):
            raise TypeError("score() takes a sequence of texts")
        if not texts:
            return np.zeros(0, dtype=np.float32)
        return self.score_tokens(self.pairs(query, texts))

    def probabilities(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """sigmoid of :meth:`score` (uncalibrated P(relevant))."""
        return sigmoid(self.score(query, texts))


__all__ = ["JUDGE_GLOB", "Judge", "PairFrame", "bundled_judge_path", "pair_tokens", "sigmoid"]
