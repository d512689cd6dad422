"""Each document's languages, detected when a collection is indexed: by script where the script says it (kana:
Japanese, hangul: Korean, Han alone: Chinese), else by a small language identifier that ships its model inside its
package (``langid``: 97 languages, no network). ``shelfwise status`` shows them; the walk leans on a document's words
(BM25) where the library's encoder does not read its language (``core/navigation/navigator.py``).

A document is read from up to :data:`SAMPLE` of its passages spread through it, :data:`CHARS` characters of each;
a language is listed when it holds at least :data:`SHARE` of the letters read, main language first.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Protocol

from shelfwise.core.languages import lazy
from shelfwise.core.store.db import Store
from shelfwise.core.store.snapshot import bump_tree_version

log = logging.getLogger(__name__)

SAMPLE = 12
CHARS = 600
SHARE = 0.25
MIN_LETTERS = 20  # a shorter text (a table cell, a number) says nothing about its language

class _Classifier(Protocol):
    """langid's ``LanguageIdentifier`` (langid is untyped): ``classify(text)`` -> (language, score)."""

    def classify(self, text: str) -> tuple[str, float]: ...


_KANA = lazy("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HANGUL = lazy("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_HAN = lazy("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_identifier: list[_Classifier] = []
_lock = threading.Lock()


def _identify(text: str) -> str:
    """langid's best language for ``text`` (its model is unpacked once per process, about a second)."""
    with _lock:
        if not _identifier:
            try:
                from langid.langid import LanguageIdentifier, model
            except ImportError as exc:  # pragma: no cover - a dependency of the package
                raise RuntimeError("language detection needs the langid package: run bash packaging/setup.sh") \
                    from exc
            _identifier.append(LanguageIdentifier.from_modelstring(model, norm_probs=False))
        return str(_identifier[0].classify(text)[0])


def text_language(text: str) -> tuple[str, int] | None:
    """The language of one text and how many letters it has; None when it has too few letters to tell."""
    letters = sum(ch.isalpha() for ch in text)
    if letters < MIN_LETTERS:
        return None
    kana, hangul, han = len(_KANA.findall(text)), len(_HANGUL.findall(text)), len(_HAN.findall(text))
    if hangul > letters * 0.3:
        return "ko", letters
    if kana > letters * 0.1:
        return "ja", letters
    if han > letters * 0.3:
        return "zh", letters
    return _identify(text), letters


def detect_languages(texts: Sequence[str]) -> list[str]:
    """The languages holding at least :data:`SHARE` of the letters of ``texts``, main first ([] when none can be
    told)."""
    weight: Counter[str] = Counter()
    for text in texts:
        found = text_language(text[:CHARS])
        if found is not None:
            weight[found[0]] += found[1]
    total = sum(weight.values())
    return [lang for lang, n in weight.most_common() if n >= SHARE * total] if total else []


def detect_document_languages(store: Store, collection_id: int,
                              progress: Callable[[int, int], None] | None = None) -> int:
    """Detect the languages of every document of the collection that has none recorded; returns how many."""
    if store.read_only:
        return 0
    todo = store.documents_without_languages(collection_id)
    found: list[tuple[int, list[str]]] = []
    for i, doc_id in enumerate(todo):
        passages = [p.text for p in store.passages(document_id=doc_id)]
        step = max(1, len(passages) // SAMPLE)
        found.append((doc_id, detect_languages(passages[::step][:SAMPLE])))
        if progress is not None:
            progress(i + 1, len(todo))
    if found:
        store.set_document_languages(found)
        bump_tree_version(store, collection_id)  # the walk's snapshot reads them
        log.debug("languages of %d documents detected", len(found))
    return len(found)


__all__ = ["detect_document_languages", "detect_languages", "text_language"]
