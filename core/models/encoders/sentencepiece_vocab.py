"""A SentencePiece vocabulary (``tokenizer.model``) read without the sentencepiece package, in llama.cpp's form.

``tokenizer.model`` is a protobuf ``ModelProto`` whose field 1 repeats ``SentencePiece {1: piece (string),
2: score (float), 3: type (enum, NORMAL by default)}``; the type values (NORMAL 1, UNKNOWN 2, CONTROL 3,
USER_DEFINED 4, UNUSED 5, BYTE 6) are the ones GGUF's ``tokenizer.ggml.token_type`` uses. :func:`llama_vocab` then
applies the Hugging Face overrides the way llama.cpp's ``convert_hf_to_gguf.py`` does for SentencePiece models
(``_create_vocab_sentencepiece``): ids past ``vocab_size`` are dropped, ``added_tokens.json`` entries become
USER_DEFINED, ``tokenizer_config.json``'s ``added_tokens_decoder`` entries become CONTROL when special (or when they
look special) and USER_DEFINED otherwise, with score -1000.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


class VocabError(ValueError):
    """The tokenizer file is not a SentencePiece model this reader understands."""


@dataclass
class Vocab:
    tokens: list[str]
    scores: list[float]
    types: list[int]

    def __len__(self) -> int:
        return len(self.tokens)


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if i >= len(buf):
            raise VocabError("truncated varint")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def _fields(buf: bytes) -> list[tuple[int, int, object]]:
    """``(field number, wire type, value)`` of one protobuf message: ints for varints, bytes for the rest."""
    out: list[tuple[int, int, object]] = []
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wire = key >> 3, key & 7
        value: object
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 1:
            value, i = buf[i : i + 8], i + 8
        elif wire == 2:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise VocabError("truncated field")
            value, i = buf[i : i + n], i + n
        elif wire == 5:
            value, i = buf[i : i + 4], i + 4
        else:
            raise VocabError(f"unsupported protobuf wire type {wire}")
        out.append((num, wire, value))
    return out


def read_sentencepiece(path: Path) -> Vocab:
    """Every piece of a SentencePiece ``ModelProto`` with its score and type, in id order."""
    data = path.read_bytes()
    vocab = Vocab([], [], [])
    for num, wire, value in _fields(data):
        if num != 1 or wire != 2:
            continue
        assert isinstance(value, bytes)
        piece, score, kind = "", 0.0, NORMAL
        for n, w, v in _fields(value):
            if n == 1 and w == 2:
                assert isinstance(v, bytes)
                piece = v.decode("utf-8")
            elif n == 2 and w == 5:
                assert isinstance(v, bytes)
                score = struct.unpack("<f", v)[0]
            elif n == 3 and w == 0:
                assert isinstance(v, int)
                kind = v
        vocab.tokens.append(piece)
        vocab.scores.append(score)
        vocab.types.append(kind)
    if not vocab.tokens:
        raise VocabError(f"{path}: no pieces (not a SentencePiece model)")
    return vocab


def _looks_special(token: str) -> bool:
    return (
        token in ("<pad>", "<mask>", "<2mass>", "[@BOS@]")
        or (token.startswith("<|") and token.endswith("|>"))
        or (token.startswith("<\uff5c") and token.endswith("\uff5c>"))
        or (token.startswith("<unused") and token.endswith(">"))
    )


def llama_vocab(model_dir: Path, vocab_size: int) -> Vocab:
    """The vocabulary as llama.cpp's converter writes it for a SentencePiece model in ``model_dir``."""
    sp = read_sentencepiece(model_dir / "tokenizer.model")
    out = Vocab([f"[PAD{i}]" for i in range(vocab_size)], [-10000.0] * vocab_size, [UNUSED] * vocab_size)
    for i in range(min(len(sp), vocab_size)):
        out.tokens[i], out.scores[i], out.types[i] = sp.tokens[i], sp.scores[i], sp.types[i]
    added = model_dir / "added_tokens.json"
    if added.is_file():
        for key, tid in json.loads(added.read_text(encoding="utf-8")).items():
            if int(tid) < vocab_size:
                out.tokens[tid], out.scores[tid], out.types[tid] = key, -1000.0, USER_DEFINED
    config = model_dir / "tokenizer_config.json"
    if config.is_file():
        decoder = json.loads(config.read_text(encoding="utf-8")).get("added_tokens_decoder", {})
        for key, data in decoder.items():
            tid = int(key)
            if tid >= vocab_size:
                continue
            token: str = data["content"]
            if data.get("special") or _looks_special(token):
                out.types[tid] = CONTROL
            else:
                token = token.replace("\u2581", " ")
                out.types[tid] = USER_DEFINED
            out.scores[tid] = -1000.0
            out.tokens[tid] = token
    return out


__all__ = ["BYTE", "CONTROL", "NORMAL", "UNKNOWN", "UNUSED", "USER_DEFINED", "Vocab", "VocabError", "llama_vocab",
           "read_sentencepiece"]
