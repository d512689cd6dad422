"""The GPU judge's pipeline on a tiny slice, on the CPU: pack (real traindata, the bundled MiniLM, ConditionalQA's
tune half), train (training/judge_gpu.py, the script the GPU machine runs), bring back, convert with Shelfwise's
own converter, and check the GGUF on llama.cpp against the PyTorch logits the trainer wrote.

Needs the ``train`` extra (CPU PyTorch, installed by packaging/test.sh) and ../shared/traindata + evaldata.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from shelfwise.core.models.encoders.pair_frame import PairFrame, pair_tokens

SHARED = Path(__file__).resolve().parents[2] / "shared"


def test_query_tail_keeps_the_question_at_the_end() -> None:
    f = PairFrame(cls=101, sep=102, query_tokens=3, pair_tokens=10, query_tail=True)
    assert pair_tokens([1, 2, 3, 4, 5], [7, 8, 9, 10, 11], f) == [101, 3, 4, 5, 102, 7, 8, 9, 10, 102]
    head = PairFrame(cls=101, sep=102, query_tokens=3, pair_tokens=10)
    assert pair_tokens([1, 2, 3, 4, 5], [7], head) == [101, 1, 2, 3, 102, 7, 102]
    assert pair_tokens([1, 2], [7], f) == [101, 1, 2, 102, 7, 102]  # a short query is not padded or cut


def test_pack_quantizes_like_q8_0() -> None:
    from training.judge_gpu import dequantize
    from training.judge_pack import quantize_q8

    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 64)).astype(np.float32)
    q, d = quantize_q8(a)
    back = dequantize({"w.q": q, "w.d": d, "w.shape": np.array(a.shape)})["w"]
    assert back.shape == a.shape
    # q8_0 keeps every value within half a step of its block's scale
    step = np.repeat(d.astype(np.float32), 32).reshape(a.shape)
    assert np.all(np.abs(back - a) <= step / 2 + 1e-6)
    assert np.abs(q).max() == 127


@pytest.mark.skipif(not (SHARED / "traindata").is_dir(), reason="../shared/traindata is not beside the checkout")
def test_tiny_slice_trains_converts_and_matches_torch(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="the train extra (packaging/test.sh installs it)")
    from shelfwise.core.models.encoders.cross_encoder import Judge, sigmoid
    from training import judge_gpu, judge_pack, judge_unpack

    pack, run = tmp_path / "pack", tmp_path / "run"
    assert judge_pack.main(["--out", str(pack), "--sets", "or_sharc", "--per-set", "12", "--tune", "2"]) == 0
    sent = sum(f.stat().st_size for f in pack.iterdir())
    assert sent < 26_000_000  # the base weights (q8 blocks, ~24 MB) dominate; the slice is small
    assert judge_gpu.main(["--pack", str(pack), "--out", str(run), "--recipes", "ps160", "--budget-s", "3",
                           "--batch-groups", "4", "--evals", "1", "--device", "cpu"]) == 0
    res = json.loads((run / "results.json").read_text(encoding="utf-8"))
    rec = res["recipes"]["ps160"]
    assert rec["steps"] >= 1 and 0.0 <= rec["best"]["a_hit1"] <= 1.0
    info = res["exported"]["shippable"]
    assert info["recipe"] == "ps160" and len(info["reference"]) == 50
    assert all((run / f).stat().st_size <= judge_gpu.CHUNK_BYTES for f in info["files"])

    # training moved the weights away from the base model's
    from shelfwise.core.models.encoders.safetensors import read_safetensors

    with np.load(pack / "base.npz") as z:
        base = judge_gpu.dequantize({k: z[k] for k in z.files})
    trained = {n: np.asarray(a, np.float32) for f in info["files"] for n, a in read_safetensors(run / f)}
    name = "bert.encoder.layer.5.output.dense.weight"
    assert np.abs(trained[name] - base[name.removeprefix("bert.")]).max() > 1e-5

    gguf = judge_unpack.unpack(pack, run, "shippable", tmp_path / "judge-tiny-q8_0.gguf")
    ref = json.loads(gguf.with_suffix(".reference.json").read_text(encoding="utf-8"))
    with Judge(gguf, n_threads=2) as judge:
        assert judge.whole_query and judge.frame.query_tail  # the caps the recipe trained with travel in the GGUF
        got = np.array([judge.score(p["query"], [p["text"]])[0] for p in ref["pairs"]])
    want = np.array([p["torch_logit"] for p in ref["pairs"]])
    assert np.abs(sigmoid(got) - sigmoid(want)).max() < 0.05
    assert np.abs(got - want).max() < 0.05 + 0.03 * (want.max() - want.min())
