"""User-facing settings shared by the CLI and the GUI (the GUI persists them with QSettings)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

Readout = Literal["fused", "likelihood", "binary", "embedding"]
READOUTS: tuple[Readout, ...] = get_args(Readout)
#: Sentence encoders Shelfwise installs itself (``Settings.embedder_path`` may also be an embedding GGUF's path).
EMBEDDER_NAMES = ("minilm", "embeddinggemma")
#: The encoder every new library gets (an existing library keeps its own: ``shelfwise.core.indexing.encoder``).
DEFAULT_EMBEDDER = "embeddinggemma"


def as_readout(value: str) -> Readout:
    """``value`` as a :data:`Readout`; ValueError naming the choices when it is none of them."""
    for readout in READOUTS:
        if readout == value:
            return readout
    raise ValueError(f"unknown readout {value!r}; choose one of {', '.join(READOUTS)}")


@dataclass(frozen=True)
class Budgets:
    """Per-level budgets of the walk (DecisionRAG Algorithm 1).

    ``first_keep_ratio`` is the share of first-level candidates kept (leans to recall), ``keep`` the number kept at
    every later level, ``passages`` (``r``) how many passages the last level returns, ``request_size`` the most
    candidates one request compares, ``hybrid`` how many dense and lexical candidates are added to the last level
    (0 = off).
    """

    first_keep_ratio: float = 0.3
    keep: int = 4
    passages: int = 10
    request_size: int = 48
    hybrid: int = 20
    branching: int = 24  # most children a node may have before it is grouped (topic clusters)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Budgets:
        data = data or {}
        return cls(**{k: type(getattr(cls(), k))(v) for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Settings:
    db_path: Path | None = None  # None = the user data dir's library.db
    model_path: str | None = None  # None = the bundled Gemma 3 270M
    # The sentence encoder: None = the library's own (DEFAULT_EMBEDDER for a new library); "minilm",
    # "embeddinggemma" or a GGUF path switches the library to it (re-embedded by its next index run).
    embedder_path: str | None = None
    backend_url: str | None = None  # an OpenAI-compatible server instead of the in-process model
    n_gpu_layers: int = -1  # -1: every layer on the GPU when this llama.cpp build can offload, else the CPU
    n_threads: int | None = None
    readout: Readout = "fused"
    budgets: Budgets = field(default_factory=Budgets)
    adaptive: bool = False
    answer_passages: int = 5
    answer_generate: bool = True  # after the extracted sentence, let the model write an answer (shown if grounded)
    use_calibration: bool = True
    # Calibration may refit the ranking on probes (else it fits only the prior's scale and the budgets). Off: refitted
    # rankings lost to the prior on ConditionalQA's tune half (docs/benchmarks.md, "Ranking refit on probes").
    rank_fit: bool = False
    # The relevance judge (core/models/encoders/judges.py): None/"off", "bundled", a GGUF path or a rerank server
    # URL. Off by default: read beside the shipped encoder, the judge that ships costs passage Hit@1 on ConditionalQA's
    # tune half under every rule tried (docs/eval/judge.md).
    judge: str | None = None
    judge_levels: tuple[str, ...] = ("section", "passage")
    judge_top: int = 24  # candidates per level the judge reads (the best by the other evidence)
