"""Turn what the GPU trainer brought back into a judge GGUF, through Shelfwise's own torch-free converter.

    .venv/bin/python -m training.judge_unpack --pack .gpu/pack --run DIR --tag shippable \\
        --out resources/models/shelfwise-judge-NAME-q8_0.gguf

``DIR`` holds ``results.json`` and the ``judge-<tag>.part*.safetensors`` chunks (float16; the word embeddings are
the pack's, frozen in training). Writes, beside ``--out``: the Hugging Face-layout folder the converter reads (in
``DIR/hf-<tag>``), the GGUF (q8_0 by default) with the recipe's pair caps in its metadata, and
``<name>.reference.json``: the 50 pairs with the PyTorch logits computed on the GPU machine from the same float16
weights (``tests/test_judge.py`` checks the GGUF against them).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import numpy as np

from training.judge_gpu import dequantize, write_safetensors


def assemble(pack: Path, run: Path, results: dict, tag: str) -> Path:
    """``run/hf-<tag>``: model.safetensors (float32, HF BERT names), config.json and the tokenizer files."""
    from shelfwise.core.models.encoders.safetensors import read_safetensors
    from training.train_judge import bundled_src

    info = results["exported"][tag]
    recipe = results["recipes"][info["recipe"]]
    with np.load(pack / "base.npz") as z:
        base = dequantize({k: z[k] for k in z.files})
    words = base["embeddings.word_embeddings.weight"]
    tensors: dict[str, np.ndarray] = {"bert.embeddings.word_embeddings.weight": words}
    for f in info["files"]:
        for name, arr in read_safetensors(run / f):
            tensors[name] = np.asarray(arr, dtype=np.float32)
    hf = run / f"hf-{tag}"
    hf.mkdir(parents=True, exist_ok=True)
    write_safetensors(hf / "model.safetensors", tensors)
    cfg = json.loads((pack / "config.json").read_text(encoding="utf-8"))
    cfg.update(architectures=["BertForSequenceClassification"], num_labels=1,
               shelfwise_judge={"query_tokens": recipe["query_tokens"], "pair_tokens": recipe["pair_tokens"],
                                "query_tail": recipe["query_tail"], "whole_query": True})
    (hf / "config.json").write_text(json.dumps(cfg, indent=1), encoding="utf-8")
    src = bundled_src()
    for f in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (src / f).is_file():
            shutil.copy(src / f, hf / f)
    return hf


def unpack(pack: Path, run: Path, tag: str, out: Path, ftype: str = "q8_0") -> Path:
    from shelfwise.core.models.encoders.convert import convert

    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    gguf = convert(assemble(pack, run, results, tag), out, ftype)  # type: ignore[arg-type]
    info = results["exported"][tag]
    ref = {"model": gguf.name, "recipe": info["recipe"], "tune": info["best"],
           "pairs": [{"query": p["query"], "text": p["text"], "torch_logit": p["torch_logit"]}
                     for p in info["reference"]]}
    out.with_suffix(".reference.json").write_text(json.dumps(ref, indent=1, ensure_ascii=False), encoding="utf-8")
    return gguf


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.judge_unpack", description=__doc__.split("\n\n")[0])
    p.add_argument("--pack", type=Path, required=True)
    p.add_argument("--run", type=Path, required=True, help="the folder the GPU run's files came back to")
    p.add_argument("--tag", default="shippable", choices=("shippable", "research"))
    p.add_argument("--out", type=Path, required=True, help="the GGUF to write")
    p.add_argument("--ftype", default="q8_0", choices=("q8_0", "f16", "f32"))
    a = p.parse_args(argv)
    gguf = unpack(a.pack, a.run, a.tag, a.out, a.ftype)
    print(f"wrote {gguf} ({gguf.stat().st_size / 1e6:.1f} MB) and {a.out.with_suffix('.reference.json').name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
