"""Pure helpers for streaming generation: UTF-8 pieces to text with stop strings, the one loop every backend's
``generate`` runs (:func:`guarded_stream`), the repeat penalty, and temperature sampling."""

from __future__ import annotations

import codecs
import time
from collections.abc import Callable, Generator, Iterable, Sequence

import numpy as np

from shelfwise.core.models.backend import Cost, Generation


class StreamText:
    """Turns token byte pieces into safe-to-show text.

    Multi-byte UTF-8 characters split across tokens are held until complete. Text that might be the start of a
    stop string is held back until it is known not to be one; when a stop string appears, the text before it is
    released and ``stopped`` becomes True (the stop string itself is never shown).
    """

    def __init__(self, stop: Sequence[str] = ()) -> None:
        self.stop = [s for s in stop if s]
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._text = ""  # all decoded text (cut at the stop string once found)
        self._emitted = 0
        self.stopped = False

    @property
    def text(self) -> str:
        return self._text

    def _holdback(self) -> int:
        """Length of the longest tail of the text that is a proper prefix of a stop string."""
        best = 0
        for s in self.stop:
            for k in range(min(len(s) - 1, len(self._text)), best, -1):
                if self._text.endswith(s[:k]):
                    best = k
                    break
        return best

    def feed(self, piece: bytes) -> str:
        """Add one token's bytes; returns the text that may be shown now (possibly empty)."""
        if self.stopped:
            return ""
        self._text += self._decoder.decode(piece)
        if self.stop:
            longest = max(len(s) for s in self.stop)
            search_from = max(0, self._emitted - longest)
            hits = [i for i in (self._text.find(s, search_from) for s in self.stop) if i >= 0]
            if hits:
                self._text = self._text[: min(hits)]
                self.stopped = True
                return self._release(len(self._text))
        return self._release(len(self._text) - self._holdback())

    def finish(self) -> str:
        """Flush what is left (an incomplete UTF-8 tail becomes U+FFFD; a held-back partial stop is shown)."""
        if not self.stopped:
            self._text += self._decoder.decode(b"", final=True)
        return self._release(len(self._text))

    def _release(self, end: int) -> str:
        if end <= self._emitted:
            return ""
        out = self._text[self._emitted : end]
        self._emitted = end
        return out


def sample_token(logits: np.ndarray, temperature: float, rng: np.random.Generator) -> int:
    """Sample from softmax(logits / temperature)."""
    z = logits.astype(np.float64) / max(temperature, 1e-6)
    z -= z.max()
    p = np.exp(z)
    p /= p.sum()
    return int(rng.choice(len(p), p=p))


def penalise_repeats(logits: np.ndarray, tokens: Iterable[int], penalty: float) -> np.ndarray:
    """llama.cpp's repeat penalty: each of ``tokens``' logits divided by ``penalty`` when positive, multiplied by
    it when negative (so it always becomes less likely). Returns a new array."""
    out = logits.copy()
    ids = np.fromiter(set(tokens), dtype=np.int64)
    if ids.size:
        vals = out[ids]
        out[ids] = np.where(vals > 0, vals / penalty, vals * penalty)
    return out


def guarded_stream(source: Generator[bytes, None, str], stop: Sequence[str], cancel: Callable[[], bool] | None,
                   cost: Cost, t0: float) -> Generator[str, None, Generation]:
    """The loop every backend's ``generate`` shares: pull byte pieces from ``source`` (the backend's own tokens,
    events or words; its return value says why it ended: ``"eos"`` or ``"length"``), check ``cancel`` before each
    one (``"cancelled"``), yield the text that may be shown (:class:`StreamText`, held back at a possible stop
    string), end at a stop string (``"stop"``, not included), flush the tail, and return the
    :class:`Generation` with ``cost.seconds`` set from ``t0``. ``source`` is closed when the loop ends early (a
    remote stream's connection with it, so the server stops too). The repeat penalty is the backend's (it acts on
    logits, or is sent to the server); the guard on repeated n-grams acts on the text, above the backends
    (:func:`shelfwise.core.answers.answer.stream`)."""
    stream = StreamText(stop)
    stopped_by = "length"
    try:
        while True:
            if cancel is not None and cancel():
                stopped_by = "cancelled"
                break
            try:
                piece = next(source)
            except StopIteration as end:
                stopped_by = end.value or "length"
                break
            out = stream.feed(piece)
            if out:
                yield out
            if stream.stopped:
                stopped_by = "stop"
                break
    finally:
        source.close()
    tail = stream.finish()
    if tail:
        yield tail
    cost.seconds = time.perf_counter() - t0
    return Generation(stream.text, cost, stopped_by)
