"""How the store keeps a vector: its direction as int8, one byte a dimension (a quarter of float32's bytes).

Every vector Shelfwise stores is a unit vector (the encoders' output is L2-normalised, section vectors are
normalised means) and is only ever read through cosines, so the store keeps its direction: ``q = round(127 v /
max|v|)``, ``dim`` signed bytes and nothing else; it is read back as ``q / |q|``, and a cosine with a float32 query
``x`` is ``(q . x) / |q|`` (:func:`scores`, with ``1 / |q|`` worked out once per vector: :func:`quantize`). What it
costs in retrieval quality, measured before it was chosen (navigation Hit@1 at every level on XQuAD and
ConditionalQA, float32 against int8): docs/scale.md, "Vectors". A blob of ``4 * dim`` bytes is a float32 vector as
libraries kept them before migration 0011 (``core/store/migrations.py``); :func:`decode` reads both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

LEVELS = 127.0


def quantize(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``mat`` (n, dim) as int8 rows (n, dim) and the factor that makes each a unit vector (n,): ``1 / |q|``
    (0 for a zero row)."""
    m = np.asarray(mat, dtype=np.float32)
    m = m.reshape(-1, m.shape[-1]) if m.ndim != 2 else m
    peak = np.abs(m).max(axis=1) if m.shape[1] else np.zeros(len(m), np.float32)
    q = np.clip(np.rint(m * (LEVELS / np.where(peak > 0, peak, 1.0))[:, None]), -LEVELS, LEVELS).astype(np.int8)
    return q, unit_scale(q)


def unit_scale(q: np.ndarray) -> np.ndarray:
    """``1 / |q|`` per int8 row (0 for a zero row)."""
    norm = np.sqrt(np.einsum("ij,ij->i", q.astype(np.float32), q.astype(np.float32)))
    return np.where(norm > 0, 1.0 / np.where(norm > 0, norm, 1.0), 0.0).astype(np.float32)


def dequantize(q: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The float32 unit vectors int8 rows and their factors stand for."""
    return (q.astype(np.float32) * scale[:, None]).astype(np.float32)


def blob(vec: np.ndarray) -> bytes:
    """One vector as the store keeps it (``dim`` bytes)."""
    return quantize(np.asarray(vec, dtype=np.float32).reshape(1, -1))[0].tobytes()


def decode(blobs: Sequence[bytes], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Blobs of one dimension (int8, or float32 from before migration 0011) as int8 rows (n, dim) and their
    factors (n,)."""
    if not blobs:
        return np.zeros((0, dim), np.int8), np.zeros(0, np.float32)
    if all(len(b) == dim for b in blobs):
        q = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), dim).copy()
        return q, unit_scale(q)
    q = np.zeros((len(blobs), dim), np.int8)
    for i, b in enumerate(blobs):
        if len(b) == dim:
            q[i] = np.frombuffer(b, np.int8)
        else:
            q[i:i + 1] = quantize(np.frombuffer(b, np.float32).reshape(1, dim))[0]
    return q, unit_scale(q)


def decode_float(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """The blobs as float32 unit vectors (n, dim)."""
    q, scale = decode(blobs, dim)
    return dequantize(q, scale)


BLOCK = 512  # rows converted and multiplied at a time (docs/scale.md, "The scan, a block at a time")


def scores(q: np.ndarray, scale: np.ndarray, x: np.ndarray, block: int = BLOCK,
           release: Callable[[int, int], None] | None = None) -> np.ndarray:
    """``dequantize(q, scale) @ x`` for a query (dim,) or several (dim, k), a block of rows at a time so no float32
    copy of the whole matrix is ever made; ``release(start, end)`` is called after each block's rows are read. A
    small block's float32 copy stays in the processor's cache between its conversion and its product, and is
    below the size at which the BLAS splits a product over threads."""
    x = np.asarray(x, dtype=np.float32)
    out = np.empty((len(q), *x.shape[1:]), np.float32)
    for start in range(0, len(q), block):
        part = q[start:start + block].astype(np.float32) @ x
        s = scale[start:start + block]
        out[start:start + block] = part * (s if x.ndim == 1 else s[:, None])
        if release is not None:
            release(start, min(len(q), start + block))
    return out
