"""Test doubles for logic tests only (never used by the app, benchmarks, or tests that claim model behaviour)."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from shelfwise.core.models.encoders.embedder import SymmetricEncoder

_WORD = re.compile(r"\w+")


class HashEmbedder(SymmetricEncoder):
    """Bag-of-words hashed into 2048 dims, L2-normalised: texts sharing words get a high cosine."""

    model_id = "hash-embedder-test"
    dim = 2048

    def embed(self, texts):
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts")
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            for w in _WORD.findall(t.lower()):
                h = int(hashlib.md5(w.encode()).hexdigest()[:8], 16)
                out[i, h % self.dim] += 1.0
            n = np.linalg.norm(out[i])
            if n:
                out[i] /= n
        return out

    def close(self):
        pass
