"""What kind of model a GGUF file holds, read from its header before llama.cpp is given it.

llama.cpp trusts the file it is given: a generative model loaded as a sentence encoder crashed the process
(segmentation fault, no message), and an encoder loaded as the answer model answered "the model did not find an
answer". :func:`require_kind` reads ``general.architecture`` from the GGUF header (the first keys; the tokenizer's
large arrays after it are not read) and refuses a file of the wrong kind for its role with a message that says
which file to give instead. The format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
"""

from __future__ import annotations

import hashlib
import mmap
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from shelfwise.core.models.backend import BackendError

GGUF_MAGIC = b"GGUF"
# llama.cpp's encoder-only architectures (sentence encoders, cross-encoders): no text generation
ENCODER_ARCHITECTURES = frozenset({
    "bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3", "neo-bert", "modern-bert", "eurobert",
    "gemma-embedding", "t5encoder",
})
_SCALAR = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}  # GGUF value type -> bytes
_STRING, _ARRAY = 8, 9
_MAX_KEYS = 256  # general.architecture is among the first keys of every converter's output

Kind = Literal["encoder", "generator"]


class NotGguf(ValueError):
    """The file is not a GGUF model, or its header is damaged."""


def _u32(fh: BinaryIO) -> int:
    data = fh.read(4)
    if len(data) != 4:
        raise NotGguf("the header ends early")
    return int(struct.unpack("<I", data)[0])


def _u64(fh: BinaryIO) -> int:
    data = fh.read(8)
    if len(data) != 8:
        raise NotGguf("the header ends early")
    return int(struct.unpack("<Q", data)[0])


def _string(fh: BinaryIO, size: int) -> bytes:
    n = _u64(fh)
    if n > size:
        raise NotGguf("a string in the header is longer than the file")
    data = fh.read(n)
    if len(data) != n:
        raise NotGguf("the header ends early")
    return data


def _skip(fh: BinaryIO, vtype: int, size: int) -> None:
    if vtype in _SCALAR:
        fh.seek(_SCALAR[vtype], 1)
    elif vtype == _STRING:
        n = _u64(fh)
        if n > size:
            raise NotGguf("a string in the header is longer than the file")
        fh.seek(n, 1)
    elif vtype == _ARRAY:
        item, count = _u32(fh), _u64(fh)
        if item in _SCALAR:
            if count * _SCALAR[item] > size:
                raise NotGguf("an array in the header is longer than the file")
            fh.seek(count * _SCALAR[item], 1)
        else:
            if count > size:
                raise NotGguf("an array in the header is longer than the file")
            for _ in range(count):
                _skip(fh, item, size)
    else:
        raise NotGguf(f"unknown value type {vtype} in the header")


def gguf_architecture(path: Path) -> str:
    """``general.architecture`` of the GGUF at ``path`` (``gemma3``, ``bert``...); :class:`NotGguf` when the file
    is not one or its header is damaged."""
    size = path.stat().st_size
    with path.open("rb") as fh:
        if fh.read(4) != GGUF_MAGIC:
            raise NotGguf("it does not start with the GGUF magic")
        version = _u32(fh)
        if version < 2:
            raise NotGguf(f"GGUF version {version} is too old")
        _u64(fh)  # tensors
        n_kv = _u64(fh)
        for _ in range(min(n_kv, _MAX_KEYS)):
            key = _string(fh, size)
            vtype = _u32(fh)
            if key == b"general.architecture" and vtype == _STRING:
                return _string(fh, size).decode("utf-8", errors="replace")
            _skip(fh, vtype, size)
    raise NotGguf("its header names no architecture")


# llama.cpp's ``enum llama_ftype`` (``general.file_type``): how most of the weights are quantised
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S",
    12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS",
    20: "IQ2_XS", 21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
    28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE",
}
_HEADER_KEYS = frozenset({b"general.architecture", b"general.name", b"general.basename", b"general.finetune",
                          b"general.size_label", b"general.file_type", b"tokenizer.chat_template"})
_MAX_HEADER_KEYS = 4096  # a converter writes a few dozen; more is a damaged header


@dataclass(frozen=True)
class GgufHeader:
    """What a GGUF's metadata says about the model in it (read by :func:`read_header`)."""

    architecture: str
    name: str = ""  # general.name ("SmolLM2 135M Instruct"), else ""
    finetune: str = ""  # general.finetune ("Instruct"), else ""
    size_label: str = ""  # general.size_label ("135M"), else ""
    file_type: int | None = None  # general.file_type (llama.cpp's llama_ftype), else None
    chat_template: str = ""  # tokenizer.chat_template (a Jinja template), else ""

    @property
    def quantisation(self) -> str:
        """The quantisation the header names (``Q4_K_M``), or "" when it names none this version knows."""
        return FILE_TYPES.get(self.file_type, "") if self.file_type is not None else ""

    @property
    def kind(self) -> Kind:
        return model_kind(self.architecture)


_INTS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 10: "<Q", 11: "<q"}  # GGUF integer types
_U32, _U64 = struct.Struct("<I"), struct.Struct("<Q")


class _Cursor:
    """Reads a GGUF header from the file's bytes in memory (an mmap: only the pages read are loaded), so skipping a
    vocabulary costs one length read per token in memory rather than a read and a seek per token on the file."""

    def __init__(self, data: mmap.mmap | bytes) -> None:
        self.data = data
        self.size = len(data)
        self.off = 0

    def unpack(self, fmt: struct.Struct) -> int:
        if self.off + fmt.size > self.size:
            raise NotGguf("the header ends early")
        value = int(fmt.unpack_from(self.data, self.off)[0])
        self.off += fmt.size
        return value

    def string(self) -> bytes:
        n = self.unpack(_U64)
        if self.off + n > self.size:
            raise NotGguf("a string in the header is longer than the file")
        self.off += n
        return bytes(self.data[self.off - n:self.off])

    def integer(self, vtype: int) -> int:
        fmt = struct.Struct(_INTS[vtype])
        return self.unpack(fmt)

    def skip(self, vtype: int) -> None:
        if vtype in _SCALAR:
            self.off += _SCALAR[vtype]
        elif vtype == _STRING:
            n = self.unpack(_U64)  # read before adding: the read moves the offset
            self.off += n
        elif vtype == _ARRAY:
            item, count = self.unpack(_U32), self.unpack(_U64)
            if item in _SCALAR:
                self.off += count * _SCALAR[item]
            elif item == _STRING:
                if count > self.size // 8:
                    raise NotGguf("an array in the header is longer than the file")
                data, off, size, unpack = self.data, self.off, self.size, _U64.unpack_from
                for _ in range(count):
                    if off + 8 > size:
                        raise NotGguf("the header ends early")
                    off += 8 + unpack(data, off)[0]
                self.off = off
            else:
                if count > self.size:
                    raise NotGguf("an array in the header is longer than the file")
                for _ in range(count):
                    self.skip(item)
        else:
            raise NotGguf(f"unknown value type {vtype} in the header")
        if self.off > self.size:
            raise NotGguf("the header ends early")


def read_header(path: Path) -> GgufHeader:
    """The model's description from every metadata key of the GGUF at ``path`` (the tokenizer's arrays are skipped
    over, never decoded); :class:`NotGguf` when the file is not one or its header is damaged, OSError when it cannot
    be read."""
    found: dict[bytes, str | int] = {}
    with path.open("rb") as fh:
        if fh.read(4) != GGUF_MAGIC:
            raise NotGguf("it does not start with the GGUF magic")
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            cur = _Cursor(data)
            cur.off = 4
            version = cur.unpack(_U32)
            if version < 2:
                raise NotGguf(f"GGUF version {version} is too old")
            cur.unpack(_U64)  # tensors
            n_kv = cur.unpack(_U64)
            if n_kv > _MAX_HEADER_KEYS:
                raise NotGguf(f"the header claims {n_kv} keys")
            for _ in range(n_kv):
                key = cur.string()
                vtype = cur.unpack(_U32)
                if key in _HEADER_KEYS and vtype == _STRING:
                    found[key] = cur.string().decode("utf-8", errors="replace")
                elif key in _HEADER_KEYS and vtype in _INTS:
                    found[key] = cur.integer(vtype)
                else:
                    cur.skip(vtype)
    arch = found.get(b"general.architecture")
    if not isinstance(arch, str):
        raise NotGguf("its header names no architecture")

    def text(key: bytes) -> str:
        value = found.get(key)
        return value if isinstance(value, str) else ""

    ftype = found.get(b"general.file_type")
    return GgufHeader(arch, name=text(b"general.name") or text(b"general.basename"),
                      finetune=text(b"general.finetune"), size_label=text(b"general.size_label"),
                      file_type=ftype if isinstance(ftype, int) else None,
                      chat_template=text(b"tokenizer.chat_template"))


def model_kind(architecture: str) -> Kind:
    return "encoder" if architecture in ENCODER_ARCHITECTURES else "generator"


def require_kind(path: Path, kind: Kind, role: str) -> str:
    """The architecture of ``path`` when it is a GGUF of ``kind``; else a :class:`BackendError` naming the
    ``role`` (``"answer model"``, ``"embedder"``, ``"judge"``) and what to give instead."""
    try:
        arch = gguf_architecture(path)
    except OSError as exc:
        raise BackendError(f"cannot read the {role} {path}: {exc.strerror or exc}") from exc
    except NotGguf as exc:
        raise BackendError(f"the {role} {path} is not a usable GGUF model file: {exc}") from exc
    if model_kind(arch) == kind:
        return arch
    if kind == "encoder":
        raise BackendError(f"the {role} {path} is a generative model ({arch}), not a sentence encoder: give an "
                           "embedding GGUF (or minilm / embeddinggemma) as the embedder, and generative models with "
                           "--model")
    raise BackendError(f"the {role} {path} is a sentence encoder ({arch}), not a generative model: give a "
                       "generative GGUF with --model (encoders go with --embedder)")


def sha256_of(path: Path) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


