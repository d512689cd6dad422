"""Write a GGUF the way both converters do: under a temporary name beside the target, then header, settings and
tensors, then one atomic rename (a failure leaves no partial file)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gguf import GGUFWriter


def publish(w: GGUFWriter, tmp: Path, out_path: Path) -> None:
    """Write everything ``w`` holds into ``tmp`` and rename it to ``out_path`` (readable by the user's other tools)."""
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.chmod(tmp, 0o644)  # mkstemp creates 0600; the model is ordinary user data
    os.replace(tmp, out_path)


def write_gguf(out_path: Path, arch: str, fill: Callable[[GGUFWriter], None]) -> Path:
    """``out_path`` written atomically: a writer for ``arch`` on a temporary file beside it, filled by ``fill``
    (metadata and tensors), then :func:`publish`; the temporary file is removed whatever happens."""
    import gguf

    out_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=out_path.name + ".", suffix=".part", dir=out_path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        w = gguf.GGUFWriter(tmp, arch)
        fill(w)
        publish(w, tmp, out_path)
    finally:
        tmp.unlink(missing_ok=True)
    return out_path


__all__ = ["publish", "write_gguf"]
