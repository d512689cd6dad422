"""A bounded LRU cache of saved KV states (bytes), keyed by a digest of the tokens they encode. Pure Python."""

from __future__ import annotations

import hashlib
from array import array
from collections import OrderedDict
from collections.abc import Sequence


def tokens_key(*parts: Sequence[int]) -> bytes:
    """A digest of one or more token lists (their boundaries included), used as a cache key."""
    h = hashlib.blake2b(digest_size=20)
    for part in parts:
        h.update(len(part).to_bytes(4, "little"))
        h.update(array("i", part).tobytes())
    return h.digest()


class StateCache:
    """Least-recently-used map ``key -> (n_tokens, state bytes)`` holding at most ``max_bytes`` of states.

    A state larger than the whole budget is not stored. ``max_bytes = 0`` disables the cache.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max(0, int(max_bytes))
        self._items: OrderedDict[bytes, tuple[int, bytes]] = OrderedDict()
        self.bytes = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: bytes) -> bool:
        return key in self._items

    def get(self, key: bytes) -> tuple[int, bytes] | None:
        item = self._items.get(key)
        if item is None:
            self.misses += 1
            return None
        self._items.move_to_end(key)
        self.hits += 1
        return item

    def put(self, key: bytes, n_tokens: int, data: bytes) -> bool:
        """Store (or refresh) a state; evicts the least recently used ones to stay within the budget."""
        size = len(data)
        if size > self.max_bytes:
            return False
        old = self._items.pop(key, None)
        if old is not None:
            self.bytes -= len(old[1])
        while self._items and self.bytes + size > self.max_bytes:
            _, (_, evicted) = self._items.popitem(last=False)
            self.bytes -= len(evicted)
        self._items[key] = (n_tokens, data)
        self.bytes += size
        return True

    def clear(self) -> None:
        self._items.clear()
        self.bytes = 0
