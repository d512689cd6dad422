"""Test doubles for logic tests only (never used by the app, benchmarks, or tests that claim model behaviour)."""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

from shelfwise.core.models.encoders.embedder import SymmetricEncoder

_WORD = re.compile(r"\w+")


@contextlib.contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """An HTTP server answering with ``handler`` on a free loopback port, in a thread; its base URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


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
