"""Generators of hostile input and damaged libraries, shared by ``tests/reliability`` and
``benchmarks/product/reliability.py``. Every generator writes into a folder it is given and returns the path(s)."""

from __future__ import annotations

import io
import os
import random
import shutil
import sqlite3
import struct
import zipfile
from collections.abc import Iterator
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/corpus")
SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "sample"

_DOCX_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
)
_DOCX_TAIL = b"</w:body></w:document>"
_PARA = b"<w:p><w:r><w:t>The quick brown fox jumps over the lazy dog near the river bank.</w:t></w:r></w:p>"


def _docx_parts(base: Path | None = None) -> dict[str, bytes]:
    """The parts of a small real .docx (the corpus's worldview-essay-guide.docx), to rebuild around a payload."""
    src = base or (CORPUS / "worldview-essay-guide.docx")
    with zipfile.ZipFile(src) as zf:
        return {i.filename: zf.read(i) for i in zf.infolist()}


_WORDS = ("policy travel meal claim leave approve manager budget report office staff holiday expense receipt "
          "contract supplier invoice payment schedule review training safety access network backup").split()


def expanding_docx(path: Path, xml_bytes: int, ratio: float = 120.0, seed: int = 5) -> Path:
    """A valid .docx whose ``word/document.xml`` unpacks to about ``xml_bytes`` at about ``ratio`` times its
    compressed size: paragraphs of random words (~3x) padded with spaces (~1000x) in the proportion that gives the
    ratio. Written streaming, so a 900 MB part costs no memory here."""
    rng = random.Random(seed)
    parts = _docx_parts()
    text_share = max(0.0, min(1.0, (1 / ratio - 1 / 1000) / (1 / 3.2 - 1 / 1000)))
    pool = []
    for _ in range(512):
        words = " ".join(rng.choice(_WORDS) for _ in range(300))
        pool.append(b"<w:p><w:r><w:t>" + words.encode() + b"</w:t></w:r></w:p>")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in parts.items():
            if name != "word/document.xml":
                zf.writestr(name, data)
        with zf.open("word/document.xml", "w", force_zip64=True) as out:
            out.write(_DOCX_HEAD)
            written = len(_DOCX_HEAD)
            while written < xml_bytes:
                para = rng.choice(pool)
                pad = b" " * int(len(para) * (1 - text_share) / max(text_share, 1e-6))
                block = para + pad
                out.write(block)
                written += len(block)
            out.write(_DOCX_TAIL)
    return path


def lying_docx(path: Path, real_bytes: int, declared: int = 1000) -> Path:
    """A .docx whose ``word/document.xml`` declares ``declared`` bytes (local header and central directory) but
    unpacks to ``real_bytes``."""
    expanding_docx(path, real_bytes)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as zf:
        info = zf.getinfo("word/document.xml")
    # zip64 extra fields carry the sizes when force_zip64 is used: rewrite them too
    off = info.header_offset
    struct.pack_into("<I", data, off + 22, declared)
    name_len, extra_len = struct.unpack_from("<HH", data, off + 26)
    extra = off + 30 + name_len
    _patch_zip64(data, extra, extra_len, declared, local=True)
    cd = data.find(b"PK\x01\x02")
    while cd != -1:
        n_len, e_len = struct.unpack_from("<HH", data, cd + 28)
        name = bytes(data[cd + 46: cd + 46 + n_len])
        if name == b"word/document.xml":
            if struct.unpack_from("<I", data, cd + 24)[0] != 0xFFFFFFFF:
                struct.pack_into("<I", data, cd + 24, declared)
            _patch_zip64(data, cd + 46 + n_len, e_len, declared, local=False,
                         has_usize=struct.unpack_from("<I", data, cd + 24)[0] == 0xFFFFFFFF)
            break
        cd = data.find(b"PK\x01\x02", cd + 46)
    path.write_bytes(bytes(data))
    return path


def _patch_zip64(data: bytearray, start: int, length: int, declared: int, *, local: bool,
                 has_usize: bool = True) -> None:
    pos = start
    while pos + 4 <= start + length:
        tag, size = struct.unpack_from("<HH", data, pos)
        if tag == 0x0001 and has_usize:
            struct.pack_into("<Q", data, pos + 4, declared)  # the first zip64 field is the unpacked size
        pos += 4 + size


def utf16_no_bom(path: Path, big_endian: bool = False) -> Path:
    text = "Travel policy\n\nMeals are reimbursed up to 40 euros a day on business trips.\n" * 20
    path.write_bytes(text.encode("utf-16-be" if big_endian else "utf-16-le"))
    return path


def utf16_cjk_no_bom(path: Path, big_endian: bool = False) -> Path:
    """Japanese and Chinese text in UTF-16 without a byte-order mark: almost no NUL bytes to recognise it by."""
    text = ("出張旅費規程\n\n出張中の食事代は一日四十ユーロまで精算できます。領収書を添付してください。\n"
            "差旅费报销：每日餐费上限为四十欧元，须附发票。\n") * 30
    path.write_bytes(text.encode("utf-16-be" if big_endian else "utf-16-le"))
    return path


def random_text_bytes(path: Path, n: int = 64 * 1024, seed: int = 7) -> Path:
    """Random bytes with no NUL (so no sniffing by NUL can call it binary)."""
    rng = random.Random(seed)
    path.write_bytes(bytes(rng.randrange(1, 256) for _ in range(n)))
    return path


PNG_1PX = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)


def png_named_pdf(path: Path) -> Path:
    path.write_bytes(PNG_1PX)
    return path


def one_line_text(path: Path, n_bytes: int) -> Path:
    """A text file of ``n_bytes`` with no line break (words only)."""
    words = b"alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu "
    with path.open("wb") as f:
        left = n_bytes
        while left > 0:
            piece = words[: min(len(words), left)] if left < len(words) else words * min(left // len(words), 4096)
            f.write(piece)
            left -= len(piece)
    return path


def non_utf8_name(folder: Path) -> Path:
    """A text file whose name is not valid UTF-8 (Latin-1 ``café``); returns the path (surrogate-escaped str)."""
    raw = os.fsencode(folder) + b"/caf\xe9 notes.txt"
    with open(raw, "wb") as f:
        f.write(b"Notes from the cafe\n\nThe espresso machine is cleaned every Friday afternoon.\n")
    return Path(os.fsdecode(raw))


def long_question(n_chars: int = 100_000) -> str:
    base = "How many days of annual leave do I get and who approves travel requests for meals? "
    return (base * (n_chars // len(base) + 1))[:n_chars]


def damage_table(db: Path, table: str = "nodes", seed: int = 3) -> int:
    """Overwrite the root page of ``table``'s b-tree with random bytes: every read of that table then fails, so
    the damage is found the same way every time (random pages may be free ones, or ones a command never reads).
    Returns the page number. The library must be closed (no ``-wal`` holding newer copies of the page)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()
    assert not Path(str(db) + "-wal").exists() or Path(str(db) + "-wal").stat().st_size == 0, "checkpoint first"
    rng = random.Random(seed)
    with db.open("r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(bytes(rng.randrange(256) for _ in range(page_size)))
    return int(root)


# --------------------------------------------------------------------------- fuzzing
FUZZ_FORMATS = (".pdf", ".docx", ".pptx", ".xlsx", ".txt")


def fuzz_seeds() -> dict[str, list[Path]]:
    """Real files per format to mutate: the corpus's, plus the sample's text files."""
    out: dict[str, list[Path]] = {ext: [] for ext in FUZZ_FORMATS}
    for p in sorted(CORPUS.iterdir()):
        ext = p.suffix.lower()
        if ext in out and p.stat().st_size < 2_500_000 and not p.name.startswith(("corrupt", "encrypted",
                                                                                   "truncated")):
            out[ext].append(p)
    for p in sorted(SAMPLE.glob("*")) if SAMPLE.is_dir() else []:
        if p.suffix.lower() in (".txt", ".md"):
            out[".txt"].append(p)
    if not out[".txt"]:
        out[".txt"].append(CORPUS / "SOURCE.md")
    return out


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One of: flip bytes, overwrite a run, truncate, duplicate a slice, zero a block, insert junk."""
    b = bytearray(data)
    how = rng.randrange(6)
    n = len(b)
    if n == 0:
        return bytes(rng.randrange(256) for _ in range(64))
    if how == 0:
        for _ in range(rng.randint(1, 64)):
            b[rng.randrange(n)] = rng.randrange(256)
    elif how == 1:
        start = rng.randrange(n)
        length = min(n - start, rng.randint(16, 4096))
        b[start:start + length] = bytes(rng.randrange(256) for _ in range(length))
    elif how == 2:
        b = b[: rng.randint(1, n)]
    elif how == 3:
        start = rng.randrange(n)
        piece = b[start: start + rng.randint(1, 65536)]
        at = rng.randrange(n)
        b[at:at] = piece
    elif how == 4:
        start = rng.randrange(n)
        b[start: start + rng.randint(512, 65536)] = b"\x00" * len(b[start: start + 65536][:65536])
    else:
        at = rng.randrange(n)
        b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 2048)))
    return bytes(b)


# A PDF seed is cut to its first pages before it is mutated: a whole corpus PDF (272 pages) costs 5-10 s to parse
# on the shared machine, the first pages keep its structure (xref, fonts, outline, content streams) at a fraction
# of that. Figures: docs/reliability.md.
FUZZ_PDF_PAGES = 4


def seed_bytes(src: Path, pdf_pages: int | None = FUZZ_PDF_PAGES) -> bytes:
    """The bytes a fuzzed file is mutated from: the file itself, a PDF cut to its first ``pdf_pages`` pages."""
    data = src.read_bytes()
    if pdf_pages is None or src.suffix.lower() != ".pdf":
        return data
    import pymupdf

    try:
        with pymupdf.open(stream=data, filetype="pdf") as doc:
            if doc.page_count <= pdf_pages:
                return data
            doc.select(list(range(pdf_pages)))
            return bytes(doc.tobytes(garbage=3, deflate=True))
    except Exception:  # a seed pymupdf cannot cut is mutated whole
        return data


def fuzzed_files(folder: Path, count: int, seed: int = 1,
                 pdf_pages: int | None = FUZZ_PDF_PAGES) -> Iterator[Path]:
    """``count`` mutated copies of the seeds, spread evenly over the five formats (PDF seeds cut to their first
    ``pdf_pages`` pages; None: whole)."""
    rng = random.Random(seed)
    seeds = fuzz_seeds()
    cache: dict[Path, bytes] = {}
    for i in range(count):
        ext = FUZZ_FORMATS[i % len(FUZZ_FORMATS)]
        src = rng.choice(seeds[ext])
        if src not in cache:
            cache[src] = seed_bytes(src, pdf_pages)
        out = folder / f"fuzz-{i:04d}-{src.stem[:20]}{ext}"
        out.write_bytes(mutate(cache[src], rng))
        yield out


def copy_corpus_subset(folder: Path, names: list[str]) -> list[Path]:
    out = []
    for n in names:
        dst = folder / n
        shutil.copy2(CORPUS / n, dst)
        out.append(dst)
    return out
