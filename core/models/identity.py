"""One rule for a model's identity, however the model is reached: ``gguf:`` and 16 hex digits of a hash of the
GGUF file's content (:func:`model_identity`).

Calibration and the adaptive threshold (the answer model), a library's vectors (the sentence encoder) and judge
scores are stored under it, so what was made with a file in this process is found when a server serves the same
file, and the reverse; a copy of the file under another name or in another tool's folder (LM Studio, Ollama,
GPT4All) is the same model, and another file is another model.

A server's model (:func:`served_identity`) is named by what it reports: ``packaging/server.sh`` declares the
identity as the model's alias (``--alias gguf:HEX``); else the file it says it serves (llama-server's ``/props``
``model_path``, llama-cpp-python's ``/v1/models`` id), when that file is on this machine; else the name it serves
under, when that is a model found on this machine (``core/models/found.py``: ``smollm2:135m`` in Ollama, an LM
Studio ``publisher/model/file.gguf``); else None (the caller gives the server its own id, which no file's identity
equals, so nothing made with another model is ever used for it: ``FILE@server:PARAMS:BYTES`` for an encoder, the
name it serves under for an answer model, ``rerank@URL`` for a rerank server that lists no model).

Before this rule, the sentence encoders and the judges were named ``FILE:SHA16`` (the file's name and 16 hex digits
of its whole sha256, :func:`file_sha_id`), and ``server.sh`` declared that as a served encoder's alias: a library's
vectors stored so are renamed when the same file is next used with it (``core/indexing/encoder.py``,
``adopt_identity``), and a server that still declares such an alias is named by it (what its vectors were stored
under). :func:`local_copy` finds this machine's file for an id of either form.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

PREFIX = "gguf:"
IDENTITY = re.compile(r"^gguf:[0-9a-f]{16}$")
#: The encoders' identity before this rule (and what server.sh declared as an alias then): ``FILE:SHA16``.
FILE_SHA_ID = re.compile(r"^(?P<file>[^:/\\]+\.gguf):(?P<sha>[0-9a-f]{16})$")

IDENTITY_HEAD = 4 << 20  # the header (metadata, tokenizer, tensor table) and the first weights
IDENTITY_SAMPLES = 32  # chunks of the weights read at even steps through the rest of the file
IDENTITY_CHUNK = 64 << 10


def model_identity(path: Path) -> str:
    """The identity of the model in the file at ``path``: sha256 over the file's size, its first 4 MiB (every GGUF
    metadata key a converter writes first: name, architecture, tokenizer; then the tensor table) and 32 chunks of
    64 KiB at even steps through the rest (weights: another fine-tune or quantization of the same model differs
    there), plus the last 64 KiB. About 6 MiB read whatever the size; the file's name and place do not count, so a
    copy is the same model and a changed file is another one."""
    size = path.stat().st_size
    h = hashlib.sha256(size.to_bytes(8, "little"))
    with path.open("rb") as fh:
        h.update(fh.read(IDENTITY_HEAD))
        rest = size - IDENTITY_HEAD
        if rest > 0:
            step = max(IDENTITY_CHUNK, rest // IDENTITY_SAMPLES)
            for offset in range(IDENTITY_HEAD, size, step):
                fh.seek(offset)
                h.update(fh.read(IDENTITY_CHUNK))
            fh.seek(max(IDENTITY_HEAD, size - IDENTITY_CHUNK))
            h.update(fh.read(IDENTITY_CHUNK))  # the last weights
    return f"{PREFIX}{h.hexdigest()[:16]}"


def is_identity(text: str) -> bool:
    """Whether ``text`` is an identity of this rule (``gguf:`` and 16 hex digits)."""
    return bool(IDENTITY.match(text))


def file_sha_id(path: Path) -> str:
    """The name encoders had before this rule: ``FILE:SHA16`` (the file's name, 16 hex digits of its sha256; the
    whole file is read). Read only to find what a library stored before the rule."""
    from shelfwise.core.models.gguf_meta import sha256_of

    return f"{path.name}:{sha256_of(path)[:16]}"


def _local_file(reported: str) -> Path | None:
    if not reported or reported.startswith(("http://", "https://")):
        return None
    try:
        path = Path(reported)
        return path if path.suffix.lower() == ".gguf" and path.is_file() else None
    except (OSError, ValueError):  # a name that is no path on this system
        return None


def _found_file(name: str) -> Path | None:
    """The file of the one model found on this machine under ``name`` (an Ollama tag, an LM Studio path, its
    reference), if there is exactly one."""
    from shelfwise.core.models.found import find_models

    key = name.strip().lower()
    if not key or len(key) > 512:
        return None
    models = find_models()
    hits = [m for m in models if m.ref.lower() == key] or [m for m in models if m.name.lower() == key]
    return hits[0].path if len(hits) == 1 else None


def served_identity(alias: str, path: str = "") -> str | None:
    """The identity of the model a server serves under ``alias`` (its ``--alias`` or the model name it lists)
    from ``path`` (the file it reports; empty when it reports none): see the module doc. None when it cannot be
    told (the server is elsewhere and declares no identity)."""
    if is_identity(alias):
        return alias
    for reported in (path, alias):
        local = _local_file(reported)
        if local is not None:
            return model_identity(local)
    if FILE_SHA_ID.match(alias):  # declared by server.sh for the encoders (see the module doc): stored so
        return alias
    found = _found_file(alias)
    return model_identity(found) if found is not None else None


def local_copy(model_id: str, candidates: list[Path]) -> Path | None:
    """The first of ``candidates`` (files on this machine) that holds the model ``model_id`` names, by this rule or
    by the ``FILE:SHA16`` name of before it; None when none does."""
    legacy = FILE_SHA_ID.match(model_id)
    if not legacy and not is_identity(model_id):
        return None  # a server's own name: nothing here is known to be the same
    for path in candidates:
        try:
            if not path.is_file():
                continue
            if legacy:
                if path.name == legacy.group("file") and file_sha_id(path) == model_id:
                    return path
            elif model_identity(path) == model_id:
                return path
        except OSError:
            continue
    return None
