"""How the store keeps a vector: int8 with one float32 scale per vector (a quarter of float32's bytes, plus 4).

A vector ``v`` is kept as ``q = round(v / s)`` with ``s = max|v| / 127``, so ``v ~ q * s``: a blob of ``dim`` signed
bytes followed by ``s`` as 4 little-endian bytes. A cosine with a float32 query ``x`` is ``(q . x) * s``. What it
costs in retrieval quality, measured before it was chosen (navigation Hit@1 at every level on XQuAD and
ConditionalQA, float32 against int8): docs/scale.md, "Vectors". A blob of ``4 * dim`` bytes is a float32 vector as
libraries kept them before migration 0011 (``core/store/migrations.py``); :func:`decode` reads both.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

LEVELS = 127.0


def quantize(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``mat`` (n, dim) as int8 (n, dim) and their float32 scales (n,)."""
    m = np.asarray(mat, dtype=np.float32)
    m = m.reshape(-1, m.shape[-1]) if m.ndim != 2 else m
    peak = np.abs(m).max(axis=1) if m.shape[1] else np.zeros(len(m), np.float32)
    scale = np.where(peak > 0, peak / LEVELS, 1.0).astype(np.float32)
    q = np.clip(np.rint(m / scale[:, None]), -LEVELS, LEVELS).astype(np.int8)
    return q, scale


def dequantize(q: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The float32 vectors int8 rows and their scales stand for."""
    return (q.astype(np.float32) * scale[:, None]).astype(np.float32)


def blob(vec: np.ndarray) -> bytes:
    """One vector as the store keeps it (``dim + 4`` bytes)."""
    q, scale = quantize(np.asarray(vec, dtype=np.float32).reshape(1, -1))
    return q.tobytes() + scale.astype("<f4").tobytes()


def decode(blobs: Sequence[bytes], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Blobs of one dimension (int8 with scale, or float32 from before migration 0011) as int8 rows (n, dim) and
    scales (n,)."""
    if not blobs:
        return np.zeros((0, dim), np.int8), np.zeros(0, np.float32)
    if all(len(b) == dim + 4 for b in blobs):
        raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), dim + 4)
        q = raw[:, :dim].view(np.int8).copy()
        scale = raw[:, dim:].copy().view("<f4").reshape(-1).astype(np.float32)
        return q, scale
    q = np.zeros((len(blobs), dim), np.int8)
    scale = np.ones(len(blobs), np.float32)
    for i, b in enumerate(blobs):
        if len(b) == dim + 4:
            q[i] = np.frombuffer(b[:dim], np.int8)
            scale[i] = np.frombuffer(b[dim:], "<f4")[0]
        else:
            q[i:i + 1], scale[i:i + 1] = quantize(np.frombuffer(b, np.float32).reshape(1, dim))
    return q, scale


def decode_float(blobs: Sequence[bytes], dim: int) -> np.ndarray:
    """The blobs as float32 vectors (n, dim)."""
    q, scale = decode(blobs, dim)
    return dequantize(q, scale)


def scores(q: np.ndarray, scale: np.ndarray, x: np.ndarray, block: int = 16384) -> np.ndarray:
    """``dequantize(q, scale) @ x`` for a query (dim,) or several (dim, k), a block of rows at a time so no float32
    copy of the whole matrix is ever made."""
    x = np.asarray(x, dtype=np.float32)
    out = np.empty((len(q), *x.shape[1:]), np.float32)
    for start in range(0, len(q), block):
        part = q[start:start + block].astype(np.float32) @ x
        s = scale[start:start + block]
        out[start:start + block] = part * (s if x.ndim == 1 else s[:, None])
    return out
