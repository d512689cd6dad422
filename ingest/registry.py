"""Choose a parser by extension, check the file first, and turn every failure into an :class:`IngestError`.

Each format module exposes ``parse(path: Path, limits: Limits) -> ParsedDocument``. They are imported lazily,
so a folder walk that only asks :func:`is_candidate` loads none of the heavy libraries.

    >>> from shelfwise.ingest.registry import parse
    >>> doc = parse(Path("handbook.docx"))            # doctest: +SKIP
    >>> doc.title, doc.count("section"), doc.count("passage")  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import logging
import stat
from collections.abc import Callable
from pathlib import Path

from shelfwise.ingest.model import (
    DEFAULT_LIMITS,
    CorruptFile,
    EmptyDocument,
    IngestError,
    Limits,
    ParsedDocument,
    ParsedNode,
    ReadFailed,
    TooLarge,
    UnsupportedFormat,
)
from shelfwise.ingest.normalize import normalize_document
from shelfwise.ingest.sniff import IMAGE_KINDS, KIND_NAMES, describe, mismatch, sniff

log = logging.getLogger(__name__)

# extension -> module in shelfwise.ingest (and the ParsedDocument.format it produces)
PARSERS: dict[str, str] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".md": "text",
    ".markdown": "text",
    ".txt": "text",
}
SUPPORTED_EXTENSIONS: frozenset[str] = frozenset(PARSERS)
LEGACY_EXTENSIONS: dict[str, str] = {".doc": ".docx", ".ppt": ".pptx", ".xls": ".xlsx"}
_LEGACY_NAMES = {".doc": "Word 97-2003", ".ppt": "PowerPoint 97-2003", ".xls": "Excel 97-2003"}


def is_candidate(path: Path) -> bool:
    """Should a folder walk consider this file? Supported or legacy extension; no hidden or Office lock
    files."""
    name = path.name
    if name.startswith((".", "~$")):
        return False
    ext = path.suffix.lower()
    return ext in SUPPORTED_EXTENSIONS or ext in LEGACY_EXTENSIONS


def _parser(ext: str) -> Callable[[Path, Limits], ParsedDocument]:
    module = importlib.import_module(f"shelfwise.ingest.{PARSERS[ext]}")
    return module.parse


def check_file(path: Path, limits: Limits) -> int:
    """Existence, readability, emptiness and size checks. Returns the size in bytes."""
    try:
        st = path.stat()
    except FileNotFoundError as exc:
        raise IngestError("file not found") from exc
    except OSError as exc:
        raise ReadFailed(f"cannot read file: {exc.strerror or exc}") from exc
    if path.is_dir():
        raise UnsupportedFormat("is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):  # a FIFO or a device would block or never end
        raise UnsupportedFormat("not a regular file (a pipe, device or socket): not read")
    if st.st_size == 0:
        raise EmptyDocument("empty file (0 bytes)")
    if st.st_size > limits.max_file_bytes:
        raise TooLarge(
            f"file is {st.st_size / 2**20:.0f} MB, over the {limits.max_file_bytes / 2**20:.0f} MB limit"
        )
    try:
        with path.open("rb") as f:
            f.read(1)
    except OSError as exc:
        raise ReadFailed(f"cannot read file: {exc.strerror or exc}") from exc
    return st.st_size


def _check_content(path: Path, ext: str) -> None:
    """Content that lies about its extension (Office containers are checked in detail by their parsers)."""
    kind = sniff(path)
    if kind in IMAGE_KINDS and PARSERS[ext] in ("pdf", "text"):
        raise UnsupportedFormat(
            f"content does not match extension: file named {ext} is {KIND_NAMES[kind]}, not "
            f"{'a PDF' if ext == '.pdf' else 'text'}; images are not supported (rename it to .{kind})"
        )
    if ext == ".pdf" and kind in ("zip", "ole2"):
        raise mismatch(ext, describe(path))
    if PARSERS[ext] == "text" and kind in ("pdf", "zip", "ole2"):
        raise mismatch(ext, describe(path))
    if PARSERS[ext] == "text" and kind == "binary":
        raise UnsupportedFormat(f"file named {ext} contains binary data, not text")


def parse(path: Path, limits: Limits = DEFAULT_LIMITS) -> ParsedDocument:
    """Parse one file into a :class:`ParsedDocument`, or raise an :class:`IngestError` with a human
    message."""
    path = Path(path)
    ext = path.suffix.lower()
    if ext in LEGACY_EXTENSIONS:
        raise UnsupportedFormat(
            f"unsupported format: legacy {ext} ({_LEGACY_NAMES[ext]}); save as {LEGACY_EXTENSIONS[ext]}"
        )
    if ext not in SUPPORTED_EXTENSIONS:
        raise UnsupportedFormat(f"unsupported format: {ext or 'no extension'}")
    check_file(path, limits)
    _check_content(path, ext)
    try:
        doc = _parser(ext)(path, limits)
    except IngestError:
        raise
    except MemoryError as exc:
        raise TooLarge("not enough memory to parse this file") from exc
    except RecursionError as exc:
        raise CorruptFile("corrupt file: structure nested too deeply") from exc
    except OSError as exc:  # the file could not be read now (an I/O error, a file removed meanwhile)
        raise ReadFailed(f"cannot read file: {exc.strerror or exc}") from exc
    except Exception as exc:
        log.debug("parser failed on %s", path, exc_info=True)
        raise CorruptFile(f"corrupt or unreadable file: {exc.__class__.__name__}: {_short(exc)}") from exc
    if not any(n.kind == "passage" and n.text.strip() for n in doc.nodes()):
        raise EmptyDocument("no text found")
    normalize_document(doc)
    cap_passages(doc, limits.max_passages)
    return doc


def cap_passages(doc: ParsedDocument, max_passages: int) -> None:
    """Keep the first ``max_passages`` passages in reading order (sections left empty are dropped), with a
    warning that says how many there were."""
    total = doc.count("passage")
    if total <= max_passages:
        return
    left = max_passages

    def prune(nodes: list[ParsedNode]) -> list[ParsedNode]:
        nonlocal left
        kept: list[ParsedNode] = []
        for node in nodes:
            if left <= 0:
                break
            if node.kind == "passage":
                kept.append(node)
                left -= 1
            else:
                node.children = prune(node.children)
                if node.children:
                    kept.append(node)
        return kept

    doc.children = prune(doc.children)
    doc.warnings.append(
        f"only the first {max_passages:,} of {total:,} passages were kept (limit per document)"
    )


def _short(exc: Exception, limit: int = 200) -> str:
    msg = " ".join(str(exc).split())
    return msg if len(msg) <= limit else msg[:limit] + "…"
