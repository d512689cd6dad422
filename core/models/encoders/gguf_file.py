"""Finish a GGUF the converters wrote under a temporary name: header, settings, tensors, then one atomic rename."""

from __future__ import annotations

import os
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


__all__ = ["publish"]
