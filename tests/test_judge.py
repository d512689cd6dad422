"""The relevance judge: pair framing (pure), the converter's cross-encoder head mapping, and the shipped GGUF on
llama.cpp against the PyTorch model it was exported from.

Where the ``train`` extra (PyTorch + transformers) is installed and the training output folder is given in
``SHELFWISE_JUDGE_HF`` (the ``hf/`` folder written by ``training/train_judge.py``), the GGUF is compared with the
PyTorch model live; everywhere else (CI has no torch) with the PyTorch scores the training command saved beside
the model (``resources/models/shelfwise-judge-*.reference.json``: 50 pairs and their torch logits).
"""

from __future__ import annotations

import numpy as np
import pytest

from shelfwise.core.models.embed_convert import gguf_tensor_name
from shelfwise.core.models.judge import PairFrame, pair_tokens, sigmoid

TOLERANCE = 0.05


# -- pure ---------------------------------------------------------------------------------------------------------
def test_pair_tokens_frames_and_clips() -> None:
    f = PairFrame(cls=101, sep=102, query_tokens=4, pair_tokens=12)
    assert pair_tokens([1, 2], [7, 8, 9], f) == [101, 1, 2, 102, 7, 8, 9, 102]
    # query clipped to 4, text to 12 - 4 - 3 = 5
    toks = pair_tokens(list(range(1, 10)), list(range(20, 40)), f)
    assert toks == [101, 1, 2, 3, 4, 102, 20, 21, 22, 23, 24, 102]
    assert len(toks) == f.pair_tokens
    with pytest.raises(ValueError):
        PairFrame(cls=101, sep=102, query_tokens=8, pair_tokens=10)
    assert pair_tokens([], [], f) == [101, 102, 102]


def test_sigmoid_is_a_probability() -> None:
    p = sigmoid(np.array([-50.0, 0.0, 50.0]))
    assert p[0] < 1e-6 and p[1] == pytest.approx(0.5) and p[2] > 1 - 1e-6


def test_cross_encoder_head_maps_to_llama_cpp_cls() -> None:
    assert gguf_tensor_name("bert.pooler.dense.weight", rank=True) == "cls.weight"
    assert gguf_tensor_name("bert.pooler.dense.bias", rank=True) == "cls.bias"
    assert gguf_tensor_name("classifier.weight", rank=True) == "cls.output.weight"
    assert gguf_tensor_name("classifier.bias", rank=True) == "cls.output.bias"
    assert gguf_tensor_name("bert.encoder.layer.2.attention.self.key.weight", rank=True) == "blk.2.attn_k.weight"
    # an embedder keeps dropping the pooler
    assert gguf_tensor_name("pooler.dense.weight") is None
