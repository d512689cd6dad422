"""Convert EmbeddingGemma (a sentence-transformers folder: Gemma 3 encoder + two Dense projections) to a GGUF that
llama.cpp runs as architecture ``gemma-embedding``, with numpy and the ``gguf`` package only (no PyTorch).

What is written follows llama.cpp's own ``convert_hf_to_gguf.py`` (class ``EmbeddingGemma``, with
``--sentence-transformers-dense-modules``), checked tensor by tensor and key by key against its output (see
docs/eval/embeddinggemma.md):

- tensors: ``embed_tokens`` -> ``token_embd``, per layer ``input_layernorm`` -> ``attn_norm``,
  ``self_attn.{q,k,v,o}_proj`` -> ``attn_{q,k,v,output}``, ``self_attn.{q,k}_norm`` -> ``attn_{q,k}_norm``,
  ``post_attention_layernorm`` -> ``post_attention_norm``, ``pre_feedforward_layernorm`` -> ``ffn_norm``,
  ``post_feedforward_layernorm`` -> ``post_ffw_norm``, ``mlp.{gate,up,down}_proj`` -> ``ffn_{gate,up,down}``, the
  final ``norm`` -> ``output_norm``; ``2_Dense``/``3_Dense`` ``linear.weight`` -> ``dense_2``/``dense_3``. Gemma's
  RMSNorm multiplies by ``1 + weight``, so every norm weight is written with 1 added. Norms stay float32, every
  matrix becomes q8_0 (or f16 / f32).
- settings: 24 blocks, the window, heads, rope bases (global and sliding), the sliding window from ``config.json``,
  the Dense sizes, mean pooling; the SentencePiece vocabulary from ``tokenizer.model`` (see
  :mod:`.sentencepiece_vocab`), ``<bos>`` added before and ``<eos>`` after each text.

Command line::

    python -m shelfwise.core.models.encoders.gemma_convert --src model_download --out embeddinggemma-q8_0.gguf
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from shelfwise.core.models.encoders.gguf_file import write_gguf
from shelfwise.core.models.encoders.safetensors import SafetensorsError, read_safetensors
from shelfwise.core.models.encoders.sentencepiece_vocab import Vocab, VocabError, llama_vocab

if TYPE_CHECKING:
    from gguf import GGMLQuantizationType, GGUFWriter

FType = Literal["f32", "f16", "q8_0"]
FTYPES: tuple[FType, ...] = ("f32", "f16", "q8_0")
ARCH = "gemma-embedding"
#: Bumped whenever the written file would change for the same input (the supply re-converts on a mismatch).
CONVERTER_VERSION = 1
SOURCE_FILES = ("model.safetensors", "config.json", "tokenizer.model", "tokenizer_config.json", "modules.json",
                "2_Dense/model.safetensors", "2_Dense/config.json", "3_Dense/model.safetensors", "3_Dense/config.json")

_LAYER = {
    "input_layernorm": "attn_norm",
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "self_attn.q_norm": "attn_q_norm",
    "self_attn.k_norm": "attn_k_norm",
    "post_attention_layernorm": "post_attention_norm",
    "pre_feedforward_layernorm": "ffn_norm",
    "post_feedforward_layernorm": "post_ffw_norm",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}
_DENSE = {"2_Dense": "dense_2", "3_Dense": "dense_3"}
_ROWS_PER_STEP = 8192  # q8_0 rows are independent: quantizing in slices bounds the temporary memory


class ConversionError(RuntimeError):
    """The source folder is not an EmbeddingGemma model this converter understands."""


def gguf_tensor_name(hf_name: str) -> str:
    """llama.cpp's name for a tensor of the Gemma 3 text model (ConversionError for anything unexpected)."""
    if hf_name == "embed_tokens.weight":
        return "token_embd.weight"
    if hf_name == "norm.weight":
        return "output_norm.weight"
    if hf_name.startswith("layers."):
        bid, _, rest = hf_name[len("layers.") :].partition(".")
        stem, _, suffix = rest.rpartition(".")
        if bid.isdigit() and stem in _LAYER and suffix == "weight":
            return f"blk.{int(bid)}.{_LAYER[stem]}.weight"
    raise ConversionError(f"unexpected tensor {hf_name!r}: not a Gemma 3 text encoder")


def _quantize(arr: np.ndarray, ftype: FType) -> tuple[np.ndarray, GGMLQuantizationType | None]:
    """The array to write and its raw GGML type (None: the writer infers f32/f16 from the dtype)."""
    import gguf

    if ftype == "f32" or arr.ndim <= 1:
        return np.ascontiguousarray(arr, dtype=np.float32), None
    if ftype == "f16":
        return np.ascontiguousarray(arr, dtype=np.float16), None
    qtype = gguf.GGMLQuantizationType.Q8_0
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    if arr.shape[-1] % block:
        raise ConversionError(f"a row of {arr.shape[-1]} values does not split into q8_0 blocks of {block}")
    rows = arr.reshape(-1, arr.shape[-1])
    out = np.empty((rows.shape[0], rows.shape[1] // block * size), dtype=np.uint8)
    for i in range(0, rows.shape[0], _ROWS_PER_STEP):
        part = np.ascontiguousarray(rows[i : i + _ROWS_PER_STEP], dtype=np.float32)
        out[i : i + _ROWS_PER_STEP] = gguf.quants.quantize(part, qtype)
    return out.reshape(*arr.shape[:-1], out.shape[-1]), qtype


def _add(w: GGUFWriter, name: str, arr: np.ndarray, ftype: FType) -> None:
    data, qtype = _quantize(arr, ftype)
    if qtype is None:
        w.add_tensor(name, data)
    else:
        w.add_tensor(name, data, raw_dtype=qtype)


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ConversionError(f"cannot read {path}: {e}") from e


@dataclass
class _Source:
    """What the folder holds besides the weights, checked: the model's config, its vocabulary, the tokenizer's
    config, and the ids of its special tokens."""

    cfg: dict
    vocab: Vocab
    tok_cfg: dict
    special_ids: dict[str, int]  # bos, eos, unk, pad


def _read_source(src_dir: Path) -> _Source:
    """The folder's configs and vocabulary; ConversionError when it is not an EmbeddingGemma sentence-transformers
    folder (files missing, another architecture, other Dense modules, special tokens outside the vocabulary)."""
    missing = [f for f in SOURCE_FILES if not (src_dir / f).is_file()]
    if missing:
        raise ConversionError(f"{src_dir}: missing {', '.join(missing)}")
    cfg = _read_json(src_dir / "config.json")
    if cfg.get("model_type") != "gemma3_text" or not cfg.get("use_bidirectional_attention"):
        raise ConversionError(f"{src_dir}: not a bidirectional Gemma 3 text encoder ({cfg.get('model_type')!r})")
    modules = [m.get("path") for m in _read_json(src_dir / "modules.json") if str(m.get("type", "")).endswith("Dense")]
    if modules != ["2_Dense", "3_Dense"]:
        raise ConversionError(f"{src_dir}: expected the Dense modules 2_Dense and 3_Dense, found {modules}")
    try:
        vocab = llama_vocab(src_dir, int(cfg["vocab_size"]))
    except VocabError as e:
        raise ConversionError(str(e)) from e
    tok_cfg = _read_json(src_dir / "tokenizer_config.json")
    ids = {t: i for i, t in enumerate(vocab.tokens) if vocab.types[i] == 3}
    specials = {k: str(tok_cfg.get(f"{k}_token")) for k in ("bos", "eos", "unk", "pad")}
    if any(v not in ids for v in specials.values()):
        raise ConversionError(f"{src_dir}: special tokens {specials} not all in the vocabulary")
    return _Source(cfg, vocab, tok_cfg, {k: ids[v] for k, v in specials.items()})


def _write_header(w: GGUFWriter, src_dir: Path, cfg: dict, ftype: FType) -> None:
    """The architecture's hyperparameters, the Dense projections' sizes, pooling and the converter's version."""
    import gguf

    file_type = {"f32": gguf.LlamaFileType.ALL_F32, "f16": gguf.LlamaFileType.MOSTLY_F16,
                 "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0}[ftype]
    head_dim = int(cfg.get("head_dim", 256))
    w.add_type("model")
    w.add_name("EmbeddingGemma-300M")
    w.add_string("general.license", "gemma")
    w.add_block_count(int(cfg["num_hidden_layers"]))
    w.add_context_length(int(cfg["max_position_embeddings"]))
    w.add_embedding_length(int(cfg["hidden_size"]))
    w.add_feed_forward_length(int(cfg["intermediate_size"]))
    w.add_head_count(int(cfg["num_attention_heads"]))
    w.add_head_count_kv(int(cfg["num_key_value_heads"]))
    w.add_rope_freq_base(float(cfg.get("rope_theta", 1_000_000.0)))
    w.add_float32(f"{ARCH}.rope.freq_base_swa", float(cfg.get("rope_local_base_freq", 10_000.0)))
    w.add_layer_norm_rms_eps(float(cfg.get("rms_norm_eps", 1e-6)))
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_file_type(file_type)
    w.add_uint32(f"{ARCH}.attention.sliding_window", int(cfg["sliding_window"]))
    for folder, prefix in _DENSE.items():
        dense = _read_json(src_dir / folder / "config.json")
        w.add_uint32(f"{ARCH}.{prefix}_feat_in", int(dense["in_features"]))
        w.add_uint32(f"{ARCH}.{prefix}_feat_out", int(dense["out_features"]))
    w.add_pooling_type(gguf.PoolingType.MEAN)
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    w.add_uint32("shelfwise.converter_version", CONVERTER_VERSION)


def _write_tokenizer(w: GGUFWriter, source: _Source) -> None:
    """The SentencePiece vocabulary as llama.cpp's "llama" tokenizer, with the special tokens and the BOS/EOS
    flags of the tokenizer's config."""
    vocab, ids = source.vocab, source.special_ids
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(vocab.tokens)
    w.add_token_scores(vocab.scores)
    w.add_token_types(vocab.types)
    w.add_bos_token_id(ids["bos"])
    w.add_eos_token_id(ids["eos"])
    w.add_unk_token_id(ids["unk"])
    w.add_pad_token_id(ids["pad"])
    w.add_add_bos_token(bool(source.tok_cfg.get("add_bos_token", True)))
    w.add_add_eos_token(bool(source.tok_cfg.get("add_eos_token", True)))
    w.add_add_sep_token(False)
    w.add_add_space_prefix(False)


def _write_tensors(w: GGUFWriter, src_dir: Path, source: _Source, ftype: FType) -> None:
    """The two Dense projections and the transformer's tensors under llama.cpp's names (the embedding cut to the
    vocabulary, RMSNorm weights as 1 + weight); ConversionError when a layer's tensor is missing."""
    for folder, prefix in _DENSE.items():
        tensors = dict(read_safetensors(src_dir / folder / "model.safetensors"))
        if set(tensors) != {"linear.weight"}:
            raise ConversionError(f"{folder}: expected one bias-free linear.weight, found {sorted(tensors)}")
        _add(w, f"{prefix}.weight", tensors["linear.weight"], ftype)
    seen: set[str] = set()
    for hf_name, arr in read_safetensors(src_dir / "model.safetensors"):
        name = gguf_tensor_name(hf_name)
        if name == "token_embd.weight":
            arr = arr[: len(source.vocab)]
        if name.endswith("norm.weight"):
            arr = arr.astype(np.float32) + 1.0  # Gemma's RMSNorm scales by (1 + weight)
        _add(w, name, arr, ftype)
        seen.add(name)
    n_layers = int(source.cfg["num_hidden_layers"])
    want = {"token_embd.weight", "output_norm.weight"} | {
        f"blk.{b}.{part}.weight" for b in range(n_layers) for part in _LAYER.values()}
    if want - seen:
        raise ConversionError(f"{src_dir}: model.safetensors lacks {sorted(want - seen)[:3]}...")


def convert(src_dir: Path, out_path: Path, ftype: FType = "q8_0") -> Path:
    """Write ``out_path`` (a GGUF of the EmbeddingGemma folder ``src_dir``) atomically and return it."""
    if ftype not in FTYPES:
        raise ValueError(f"ftype must be one of {FTYPES}, not {ftype!r}")
    src_dir, out_path = Path(src_dir), Path(out_path)
    source = _read_source(src_dir)

    def fill(w: GGUFWriter) -> None:
        _write_header(w, src_dir, source.cfg, ftype)
        _write_tokenizer(w, source)
        _write_tensors(w, src_dir, source, ftype)

    try:
        return write_gguf(out_path, ARCH, fill)
    except SafetensorsError as e:
        raise ConversionError(str(e)) from e


def main(argv: list[str] | None = None) -> int:
    import argparse  # the command line only

    p = argparse.ArgumentParser(
        prog="python -m shelfwise.core.models.encoders.gemma_convert",
        description="Convert an EmbeddingGemma sentence-transformers folder to GGUF, without PyTorch.",
        epilog="example: python -m shelfwise.core.models.encoders.gemma_convert --src model_download "
               "--out embeddinggemma-q8_0.gguf",
    )
    p.add_argument("--src", type=Path, required=True, help="the sentence-transformers folder")
    p.add_argument("--out", type=Path, required=True, help="GGUF file to write")
    p.add_argument("--type", dest="ftype", choices=FTYPES, default="q8_0")
    args = p.parse_args(argv)
    out = convert(args.src, args.out, args.ftype)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, {args.ftype})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
