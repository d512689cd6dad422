"""Look at a file's bytes before a parser does: its real kind, legacy/encrypted OLE2 containers, zip bombs.

A file can lie about its extension (a legacy ``.doc`` renamed ``.docx``, a PDF named ``.xlsx``, an encrypted
Office file, which is an OLE2 container rather than a zip). These checks turn such files into clear
:class:`IngestError` messages instead of a library's stack trace.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

from shelfwise.ingest.encoding import nul_separated, utf16_without_bom
from shelfwise.ingest.model import CorruptFile, Limits, PasswordProtected, TooLarge, UnsupportedFormat

OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06", b"PK\x07\x08")
IMAGE_MAGICS = (  # (kind, magic at offset 0); WebP is checked apart (RIFF....WEBP)
    ("png", b"\x89PNG\r\n\x1a\n"),
    ("jpeg", b"\xff\xd8\xff"),
    ("gif", b"GIF87a"),
    ("gif", b"GIF89a"),
    ("tiff", b"II*\x00"),
    ("tiff", b"MM\x00*"),
    ("bmp", b"BM"),
)

# What each OOXML extension must contain, and how to name the kinds.
OOXML_MAIN_PART = {"docx": "word/document.xml", "pptx": "ppt/presentation.xml", "xlsx": "xl/workbook.xml"}
KIND_NAMES = {
    "pdf": "a PDF document",
    "docx": "a Word document (.docx)",
    "pptx": "a PowerPoint deck (.pptx)",
    "xlsx": "an Excel workbook (.xlsx)",
    "zip": "a zip archive that is not an Office Open XML document",
    "doc": "a legacy Word 97-2003 document (.doc)",
    "ppt": "a legacy PowerPoint 97-2003 deck (.ppt)",
    "xls": "a legacy Excel 97-2003 workbook (.xls)",
    "encrypted": "a password-protected Office file",
    "ole2": "an OLE2 compound file (legacy Office or similar)",
    "text": "plain text",
    "png": "a PNG image",
    "jpeg": "a JPEG image",
    "gif": "a GIF image",
    "tiff": "a TIFF image",
    "bmp": "a BMP image",
    "webp": "a WebP image",
    "binary": "binary data",
}
_OLE2_STREAMS = (  # directory entry names, UTF-16LE, as stored in the compound file
    ("encrypted", "EncryptionInfo"),
    ("doc", "WordDocument"),
    ("ppt", "PowerPoint Document"),
    ("xls", "Workbook"),
    ("xls", "Book"),
)
_SCAN_BYTES = 8 * 1024 * 1024


def head_bytes(path: Path, n: int = 8192) -> bytes:
    with path.open("rb") as f:
        return f.read(n)


def ole2_kind(path: Path) -> str:
    """``encrypted``, ``doc``, ``ppt``, ``xls`` or ``ole2`` for an OLE2 compound file (by its stream
    names)."""
    with path.open("rb") as f:
        data = f.read(_SCAN_BYTES)
    for kind, name in _OLE2_STREAMS:
        if name.encode("utf-16-le") in data:
            return kind
    return "ole2"


def ooxml_kind(names: set[str]) -> str:
    for kind, part in OOXML_MAIN_PART.items():
        if part in names:
            return kind
    # Some producers use other main-part names; the content types tell.
    return "zip"


IMAGE_KINDS = frozenset({"png", "jpeg", "gif", "tiff", "bmp", "webp"})


def sniff(path: Path) -> str:
    """The kind of content from the first bytes: ``pdf``, ``zip``, ``ole2``, an image kind (``png``, ``jpeg``,
    ``gif``, ``tiff``, ``bmp``, ``webp``), ``text`` or ``binary`` (NUL bytes that are not UTF-16 text)."""
    head = head_bytes(path)
    if head.startswith(ZIP_MAGICS):
        return "zip"
    if head.startswith(OLE2_MAGIC):
        return "ole2"
    if b"%PDF-" in head[:1024]:
        return "pdf"
    for kind, magic in IMAGE_MAGICS:
        if head.startswith(magic) and (kind != "bmp" or len(head) >= 26):
            return kind
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return "webp"
    if (b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")) and utf16_without_bom(head) is None
            and not nul_separated(head)):
        return "binary"
    return "text"


def describe(path: Path) -> str:
    """A precise kind name for messages (resolves zips and OLE2 containers)."""
    kind = sniff(path)
    if kind == "ole2":
        return ole2_kind(path)
    if kind == "zip":
        try:
            with zipfile.ZipFile(path) as zf:
                return ooxml_kind(set(zf.namelist()))
        except (zipfile.BadZipFile, OSError, ValueError):
            return "zip"
    return kind


def mismatch(ext: str, actual: str) -> UnsupportedFormat:
    what = KIND_NAMES.get(actual, actual)
    hint = {"doc": "; save it as .docx", "ppt": "; save it as .pptx", "xls": "; save it as .xlsx"}.get(
        actual, ""
    )
    if actual in ("pdf", "docx", "pptx", "xlsx") and not hint:
        hint = f"; rename it to .{actual}"
    return UnsupportedFormat(f"content does not match extension: file named {ext} is {what}{hint}")


def check_office(path: Path, expected: str, limits: Limits) -> None:
    """Checks an OOXML file (``expected`` is ``docx``/``pptx``/``xlsx``) before a library opens it.

    Raises PasswordProtected for an encrypted package, UnsupportedFormat for a legacy or mislabelled file,
    CorruptFile for a broken zip, TooLarge for a zip bomb."""
    ext = path.suffix.lower()
    kind = sniff(path)
    if kind == "ole2":
        ole = ole2_kind(path)
        if ole == "encrypted":
            raise PasswordProtected("password-protected")
        raise mismatch(ext, ole)
    if kind == "pdf":
        raise mismatch(ext, "pdf")
    if kind != "zip":
        raise CorruptFile("corrupt or truncated file: not an Office Open XML (zip) file")
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except zipfile.BadZipFile as exc:
        raise CorruptFile(f"corrupt or truncated file: {_zip_reason(exc)}") from exc
    except (OSError, ValueError) as exc:
        raise CorruptFile(f"corrupt or truncated file: {exc}") from exc
    check_zip_bomb(infos, limits)
    check_zip_members(path, limits)
    names = {i.filename for i in infos}
    actual = ooxml_kind(names)
    if actual != expected:
        if "[Content_Types].xml" not in names:
            raise UnsupportedFormat(
                f"content does not match extension: file named {ext} is {KIND_NAMES['zip']}"
            )
        raise mismatch(ext, actual)


SPLIT = "split the document into smaller files to have it read"


def check_zip_bomb(infos: list[zipfile.ZipInfo], limits: Limits) -> None:
    """Judge the sizes the zip declares (cheap; :func:`check_zip_members` then checks what members really hold).
    Only a member that expands far more than XML does is called a zip bomb; a large package of ordinary XML
    (about 30x) is too large to read, and said so."""
    for info in infos:
        # Small XML parts legitimately compress very well; only judge members that expand to something
        # sizeable.
        if info.file_size > 2**20 and info.file_size > limits.max_zip_ratio * max(1, info.compress_size):
            raise TooLarge(
                f"member {info.filename} expands {info.file_size / max(1, info.compress_size):.0f}x "
                f"(limit {limits.max_zip_ratio:.0f}x); it looks like a zip bomb"
            )
    total = sum(i.file_size for i in infos)
    if total > limits.max_zip_uncompressed_bytes:
        raise TooLarge(
            f"the file unpacks to {total / 2**20:.0f} MB, more than Shelfwise reads from one file "
            f"({limits.max_zip_uncompressed_bytes / 2**20:.0f} MB); {SPLIT}"
        )
    for info in infos:
        if info.file_size > limits.max_zip_member_bytes:
            raise TooLarge(
                f"its part {info.filename} unpacks to {info.file_size / 2**20:.0f} MB, more than Shelfwise reads "
                f"from one part ({limits.max_zip_member_bytes / 2**20:.0f} MB per member); {SPLIT}"
            )


STREAM_CHUNK = 1 << 20


def check_zip_members(path: Path, limits: Limits) -> None:
    """Unpack every member through a counting reader, chunk by chunk (memory stays at one chunk), and stop at
    the first member that holds more than it declares, more than ``max_zip_member_bytes``, or expands more than
    ``max_zip_ratio``, or when the package passes ``max_zip_uncompressed_bytes``. The libraries that read the
    package afterwards unpack members whole, trusting the declared sizes; after this check those are true."""
    total = 0
    try:
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                cap = min(info.file_size, limits.max_zip_member_bytes)
                ratio_cap = limits.max_zip_ratio * max(1, info.compress_size)
                got = 0
                with zf.open(info) as member:
                    while chunk := member.read(STREAM_CHUNK):
                        got += len(chunk)
                        total += len(chunk)
                        if got > cap:
                            if got > info.file_size:
                                raise TooLarge(
                                    f"member {info.filename} holds more than the {info.file_size:,} bytes it "
                                    f"declares; the file is damaged or a zip bomb"
                                )
                            raise TooLarge(
                                f"its part {info.filename} unpacks to more than {cap / 2**20:.0f} MB (limit per "
                                f"member); {SPLIT}"
                            )
                        if got > 2**20 and got > ratio_cap:
                            raise TooLarge(
                                f"member {info.filename} expands more than {limits.max_zip_ratio:.0f}x; it looks "
                                f"like a zip bomb"
                            )
                        if total > limits.max_zip_uncompressed_bytes:
                            raise TooLarge(
                                f"the file unpacks to more than {limits.max_zip_uncompressed_bytes / 2**20:.0f} MB, "
                                f"more than Shelfwise reads from one file; {SPLIT}"
                            )
    except zipfile.BadZipFile as exc:
        raise CorruptFile(f"corrupt or truncated file: {_zip_reason(exc)}") from exc
    except (OSError, EOFError, ValueError, NotImplementedError, RuntimeError) as exc:
        raise CorruptFile(f"corrupt or unreadable file: {exc.__class__.__name__}: {exc}") from exc
    except zlib.error as exc:
        raise CorruptFile(f"corrupt file: a member cannot be unpacked ({exc})") from exc


def _zip_reason(exc: Exception) -> str:
    msg = str(exc)
    if "central directory" in msg.lower() or "not a zip" in msg.lower():
        return "the zip archive has no central directory (incomplete download or copy?)"
    return msg or exc.__class__.__name__
