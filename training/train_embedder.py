"""Fine-tune the bundled sentence embedder (all-MiniLM-L6-v2) contrastively on ../shared/traindata only; export GGUF.

    .venv/bin/pip install -e '.[train]'                 # CPU PyTorch + transformers (development only)
    .venv/bin/python -m training.train_embedder --recipe be-permissive --out DIR \\
        --threads 1 --max-minutes 75
    .venv/bin/python -m training.eval_tune --embedder DIR/shelfwise-embedder-be-permissive-q8_0.gguf

The issue's recipe 1 for the judge: a bi-encoder fine-tuned from the bundled embedder, so that dense retrieval and
every level of the walk read the new vectors (a fine-tuned embedder replaces the bundled one's weights; baselines
use it too). Writes into ``--out``: ``hf/`` (``model.safetensors``, ``config.json``, the tokenizer files: the
bundled package's layout), ``train.log`` (JSON lines) and ``shelfwise-embedder-<recipe>-q8_0.gguf`` (Shelfwise's own
torch-free converter, the same one that converts the bundled model).

Loss per step: each question against every text of the batch (its positive, its same-document hard negatives, and
the other questions' texts: in-batch negatives), InfoNCE with scale 20 as in sentence-transformers'
MultipleNegativesRankingLoss; texts shaped like the walk's passages (``"Title > Heading: text"``, training/data.py);
mean pooling + L2 normalisation, as the bundled model and llama.cpp's embedding graph do.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from training.data import PERMISSIVE, GroupSampler, load_records
from training.train_judge import TRAINDATA, PairEncoder, bundled_src, mean_embed, save_hf


@dataclass(frozen=True)
class Recipe:
    sets: tuple[str, ...]
    weights: dict[str, float] = field(default_factory=dict)
    steps: int = 2000
    batch: int = 16  # questions per step
    hard: int = 3  # same-document negatives per question (the rest of the batch are in-batch negatives)
    lr: float = 2e-5
    warmup: float = 0.05
    scale: float = 20.0
    query_tokens: int = 96
    text_tokens: int = 128
    freeze_embeddings: bool = True
    seed: int = 13


_W = {"medquad": 0.3, "covidqa": 0.15, "covid_faq": 0.1, "pubmedqa_l": 0.1, "or_sharc": 0.35}
RECIPES: dict[str, Recipe] = {
    "be-smoke": Recipe(sets=PERMISSIVE, weights=_W, steps=20, batch=4),
    "be-permissive": Recipe(sets=PERMISSIVE, weights=_W),
}


def export(out: Path, recipe_name: str, model) -> Path:  # type: ignore[no-untyped-def]
    """``out/hf`` in the bundled package's layout, then ``out/shelfwise-embedder-<recipe>-q8_0.gguf``."""
    from shelfwise.core.models.encoders.convert import convert

    return convert(save_hf(out, model), out / f"shelfwise-embedder-{recipe_name}-q8_0.gguf", "q8_0")


def train(recipe_name: str, recipe: Recipe, out: Path, threads: int, max_minutes: float | None) -> Path:
    import torch
    from transformers import BertModel

    torch.manual_seed(recipe.seed)
    torch.set_num_threads(threads)
    out.mkdir(parents=True, exist_ok=True)
    (out / "recipe.json").write_text(json.dumps({"name": recipe_name, **asdict(recipe)}, indent=1), encoding="utf-8")
    enc = PairEncoder(bundled_src())
    model = BertModel.from_pretrained(bundled_src(), add_pooling_layer=False)
    if recipe.freeze_embeddings:
        for p in model.embeddings.parameters():
            p.requires_grad = False
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=recipe.lr, weight_decay=0.01)
    records = load_records(TRAINDATA, recipe.sets)
    sampler = GroupSampler(records, recipe.weights, 1 + recipe.hard, recipe.seed)
    budget = max_minutes * 60 if max_minutes else None
    t0 = time.monotonic()
    log = (out / "train.log").open("a", encoding="utf-8")
    model.train()
    step = 0
    for step in range(1, recipe.steps + 1):
        elapsed = time.monotonic() - t0
        if budget is not None and elapsed > budget:
            break
        # warm-up, then linear decay over the step count or the time budget, whichever ends first
        progress = max(step / recipe.steps, elapsed / budget if budget else 0.0)
        warm = min(1.0, progress / recipe.warmup) if recipe.warmup else 1.0
        for g in opt.param_groups:
            g["lr"] = recipe.lr * warm * max(0.0, 1.0 - progress) if progress > recipe.warmup else recipe.lr * warm
        groups = [next(sampler) for _ in range(recipe.batch)]
        texts = [t for g in groups for t in g.texts]
        q = mean_embed(model, [enc.single(g.query, recipe.query_tokens) for g in groups])
        t = mean_embed(model, [enc.single(x, recipe.text_tokens) for x in texts])
        logits = recipe.scale * q @ t.T
        per = 1 + recipe.hard
        target = torch.arange(len(groups)) * per
        # a text equal to a question's own positive elsewhere in the batch is not a negative for it
        for i, g in enumerate(groups):
            for j, x in enumerate(texts):
                if x == g.texts[0] and j != i * per:
                    logits[i, j] = -1e4
        loss = torch.nn.functional.cross_entropy(logits, target)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        acc = float((logits.argmax(1) == target).float().mean())
        log.write(json.dumps({"step": step, "loss": round(float(loss), 4), "acc": round(acc, 3),
                              "lr": opt.param_groups[0]["lr"], "s": round(time.monotonic() - t0, 1)}) + "\n")
        log.flush()
        if step % 200 == 0:
            export(out, recipe_name, model)  # a checkpoint a session's end cannot take away
    path = export(out, recipe_name, model)
    log.write(json.dumps({"done": step, "minutes": round((time.monotonic() - t0) / 60, 1), "gguf": str(path)}) + "\n")
    log.close()
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.train_embedder", description=__doc__.split("\n\n")[0])
    p.add_argument("--recipe", choices=sorted(RECIPES), required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=None, help="override the recipe's step count")
    p.add_argument("--max-minutes", type=float, default=None, help="stop (and export) after this many minutes")
    a = p.parse_args(argv)
    recipe = RECIPES[a.recipe]
    if a.steps:
        recipe = replace(recipe, steps=a.steps)
    print(train(a.recipe, recipe, a.out, a.threads, a.max_minutes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
