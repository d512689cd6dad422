"""Which sentence encoder a library is built with, and what switching it would cost.

A new library gets :data:`~shelfwise.core.settings.DEFAULT_EMBEDDER` (EmbeddingGemma-300M). An existing library
keeps the encoder it was built with until its owner switches (``--embedder NAME`` on a command that indexes, or the
window's switch): the name is kept in the library's meta table under :data:`META_KEY`. A library made before the
key existed is read from its vectors (the model that made most of them). Rankings never mix two encoders' vectors,
so a switch re-embeds the library; until then it is searched by its words and the new vectors made so far.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, replace
from pathlib import Path

from shelfwise.core.models.backend import Embedder
from shelfwise.core.models.encoders.preload import FILES, META_KEY
from shelfwise.core.paths import models_dir
from shelfwise.core.settings import DEFAULT_EMBEDDER, EMBEDDER_NAMES
from shelfwise.core.store.db import Store

LABELS = {"minilm": "all-MiniLM-L6-v2", "embeddinggemma": "EmbeddingGemma-300M"}
NOTES = {"minilm": "faster, English only", "embeddinggemma": "multilingual, 100+ languages"}


def canonical(spec: str | Path | None) -> str:
    """``minilm``, ``embeddinggemma`` or a GGUF path as given; None is the default for new libraries."""
    if spec is None:
        return DEFAULT_EMBEDDER
    text = str(spec)
    if text.lower() in EMBEDDER_NAMES:
        return text.lower()
    for name, file in FILES.items():
        if Path(text).name == file:
            return name
    return text


def label(spec: str | Path | None) -> str:
    """A name for people: ``EmbeddingGemma-300M``, ``all-MiniLM-L6-v2``, or the GGUF's file name."""
    name = canonical(spec)
    return LABELS.get(name, Path(name).name)


def describe(spec: str | Path | None) -> str:
    """``EmbeddingGemma-300M (multilingual (100+ languages))``-style: the label with what it is good at."""
    name = canonical(spec)
    return f"{label(name)} ({NOTES[name]})" if name in NOTES else label(name)


def name_of_model_id(model_id: str) -> str | None:
    """The encoder name behind a stored vector's model id: the identity of a named encoder's file installed here
    (``core/models/identity.py``), or a name of before that rule (``file name:sha prefix``); None for another
    GGUF."""
    from shelfwise.core.models.identity import is_identity

    if is_identity(model_id):
        for name, file in FILES.items():
            if _installed_identity(models_dir() / file) == model_id:
                return name
        return None
    file = model_id.split(":", 1)[0]
    for name, known in FILES.items():
        if file == known:
            return name
    return None


def _installed_identity(path: Path) -> str | None:
    """The identity of the file at ``path`` (None when there is none), read once per size and change time."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return _identity_of(path, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _identity_of(path: Path, size: int, mtime_ns: int) -> str:
    from shelfwise.core.models.identity import model_identity

    return model_identity(path)


def library_encoder(store: Store) -> str | None:
    """The encoder the library is built with: the one recorded, else the one that made most of its node vectors
    (a library from before the record), else None (a library with no vectors yet gets the default)."""
    recorded = store.get_meta(META_KEY)
    if recorded:
        return str(recorded)
    by_model = store.stats().embeddings_by_model
    for model_id, _ in sorted(by_model.items(), key=lambda kv: -kv[1]):
        name = name_of_model_id(model_id)
        if name is not None:
            return name
    return None


def encoder_for(store: Store | None, requested: str | None) -> str:
    """What a command on ``store`` embeds with: the encoder asked for (a switch), else the library's own, else the
    default for new libraries."""
    if requested is not None:
        return canonical(requested)
    own = library_encoder(store) if store is not None else None
    return own or DEFAULT_EMBEDDER


def record_encoder(store: Store, spec: str) -> None:
    """Record ``spec`` as the library's encoder (a no-op when it already is, or the library is read-only)."""
    name = canonical(spec)
    if store.read_only or store.get_meta(META_KEY) == name:
        return
    store.set_meta(META_KEY, name)


def adopted_key(model_id: str) -> str:
    return f"identity_adopted:{model_id}"


def adopt_identity(store: Store, embedder: Embedder) -> int:
    """Rename what the library stored under the encoder's name of before the identity rule (its ``legacy_ids``,
    ``FILE:SHA16``) to its identity (``core/models/identity.py``), so vectors, calibrations and index states made
    before it serve on; returns the vectors renamed. Looked at once per library and encoder (a meta flag); the
    encoder's old name (a hash of the whole file) is computed only when the library holds a name of that form. A
    read-only library is left as it is (its old vectors are then not used)."""
    from shelfwise.core.models.identity import FILE_SHA_ID, is_identity
    from shelfwise.core.store.model_ids import rename_model, stored_models

    new = embedder.model_id
    if store.read_only or not is_identity(new) or store.get_meta(adopted_key(new)):
        return 0
    stored = stored_models(store)
    moved = 0
    if any(FILE_SHA_ID.match(name) for name in stored):
        for old in embedder.legacy_ids:
            if old in stored:
                if store.get_meta(META_KEY) is None and embedder.path is not None:
                    record_encoder(store, str(embedder.path))  # its name was read from the old ids' file names
                moved += rename_model(store, old, new)
    store.set_meta(adopted_key(new), True)
    return moved


@dataclass(frozen=True)
class SwitchEstimate:
    """What re-embedding a library with another encoder would take, measured on this machine now."""

    encoder: str
    texts: int  # node texts and answer sentences the encoder has no vector for
    tokens: int  # their tokens as that encoder reads them (prompt included)
    tokens_per_second: float  # measured on a sample of them
    seconds: float  # tokens / rate (calibration and topics add a little)


def switch_estimate(store: Store, embedder: Embedder, sample: int = 8) -> SwitchEstimate:
    """Count what ``embedder`` would have to embed in ``store`` (every collection) and time it on ``sample`` of
    those texts. ``embedder`` is the target encoder, loaded (the caller owns and closes it)."""
    from shelfwise.core.answers.sentence_vectors import sentence_model
    from shelfwise.core.indexing.sentences import passage_contexts
    from shelfwise.core.models.backend import text_sha

    texts: list[str] = []
    model_id = embedder.model_id
    for coll in store.collections():
        texts += [n.text for n in store.nodes_missing_embedding(model_id, coll.id, kinds=["document", "section",
                                                                                           "passage"])]
        contexts = list(dict.fromkeys(c for p in store.iter_nodes(("passage",), coll.id)
                                      for c in passage_contexts(p.text, p.heading_path)))
        have = store.cached_vectors(sentence_model(embedder), [text_sha(embedder, c) for c in contexts])
        texts += [c for c in contexts if text_sha(embedder, c) not in have]
    tokens = _tokens(embedder, texts)
    if not texts:
        return SwitchEstimate(canonical(embedder.path), 0, 0, 0.0, 0.0)
    step = max(1, len(texts) // sample)
    probe = texts[::step][:sample]
    t0 = time.perf_counter()
    embedder.embed(probe)
    spent = max(time.perf_counter() - t0, 1e-6)
    rate = _tokens(embedder, probe) / spent
    return SwitchEstimate(canonical(embedder.path), len(texts), tokens, rate, tokens / rate)


def measure_switch(store: Store, spec: str, n_threads: int | None = None) -> SwitchEstimate:
    """:func:`switch_estimate` with the encoder ``spec`` loaded for it (and closed after)."""
    from shelfwise.core.models.factory import make_embedder

    embedder = make_embedder(spec, n_threads=n_threads)  # an http:// URL: the encoder server's rate
    try:
        return replace(switch_estimate(store, embedder), encoder=canonical(spec))
    finally:
        embedder.close()


def _tokens(embedder: Embedder, texts: list[str]) -> int:
    return embedder.document_tokens(texts)


__all__ = ["META_KEY", "SwitchEstimate", "adopt_identity", "canonical", "describe", "encoder_for", "label",
           "library_encoder", "measure_switch", "name_of_model_id", "record_encoder", "switch_estimate"]
