"""Read a safetensors file with numpy alone, memory-mapped: an 8-byte little-endian header length, a JSON header,
then the raw little-endian tensors. Nothing is copied until a caller converts an array, so a 1.2 GB checkpoint
costs page cache, not resident memory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ST_DTYPES: dict[str, np.dtype] = {
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "F64": np.dtype("<f8"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
}


class SafetensorsError(ValueError):
    """Not a safetensors file this reader understands (too short, a bad header, an unknown dtype)."""


def read_safetensors(path: Path) -> Iterator[tuple[str, np.ndarray]]:
    """Yield ``(name, array)`` for every tensor in file order (read-only views over a memory map)."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise SafetensorsError(f"{path}: too short for a safetensors file")
        n = int.from_bytes(head, "little")
        if n <= 0 or 8 + n > size:
            raise SafetensorsError(f"{path}: bad safetensors header length {n}")
        try:
            header = json.loads(f.read(n))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise SafetensorsError(f"{path}: bad safetensors header ({e})") from e
    base = 8 + n
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    entries = sorted(((k, v) for k, v in header.items() if k != "__metadata__"),
                     key=lambda kv: kv[1]["data_offsets"][0])
    for name, info in entries:
        dtype = ST_DTYPES.get(info["dtype"])
        if dtype is None:
            raise SafetensorsError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        begin, end = (int(x) for x in info["data_offsets"])
        shape = tuple(int(s) for s in info["shape"])
        if base + end > size or (end - begin) != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
            raise SafetensorsError(f"{path}: tensor {name} lies outside the file or has the wrong size (truncated?)")
        yield name, raw[base + begin : base + end].view(dtype).reshape(shape)


__all__ = ["ST_DTYPES", "SafetensorsError", "read_safetensors"]
