"""llama-cpp-python's low-level bindings, imported without its high-level layer.

Shelfwise calls llama.cpp only through the low-level API (``llama_cpp.llama_cpp``: models, contexts, batches). The
package's ``__init__`` also imports its high-level ``Llama`` class, which brings Jinja2 (chat templates), diskcache
and the rest of the high-level layer: about a third of the package's import time, paid by every process that loads
a model, ``shelfwise ask`` included (docs/scale.md, "Session 21: the process"). Importing this module installs
the package as ``from .llama_cpp import *`` alone would make it, plus llama-cpp-python's log module (so the log
callback is replaced in the same order as before: :func:`~shelfwise.core.models.llama.logs.route_llama_log`), and
leaves the high-level names to be imported on first use (the package's ``__getattr__``): ``llama_cpp.Llama`` still
works, and a process that imported the whole package first keeps it as it is.

Use ``from shelfwise.core.models.llama.bindings import llama_cpp`` where ``import llama_cpp`` was written. The
import bounds OpenMP's spinning first (:func:`~shelfwise.core.models.llama.openmp.tune_openmp`), so that a model
loaded before the front end's own call (the encoder loaded while ``shelfwise ask`` starts) waits the same way.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

from shelfwise.core.models.llama.openmp import tune_openmp


def _public(module: ModuleType) -> dict[str, object]:
    """What ``from module import *`` binds."""
    namespace = vars(module)
    names = namespace.get("__all__")
    if names is None:
        names = [n for n in namespace if not n.startswith("_")]
    return {n: namespace[n] for n in names}


def _install_low_level() -> None:
    """Put the package into ``sys.modules`` with the low-level names only (a no-op once it is imported)."""
    if "llama_cpp" in sys.modules:
        return
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or spec.loader is None:
        return  # not installed: the import below raises ImportError as it always did
    package = importlib.util.module_from_spec(spec)  # the package, its __init__ not run
    sys.modules["llama_cpp"] = package
    try:
        package.__dict__.update(_public(importlib.import_module("llama_cpp.llama_cpp")))
        importlib.import_module("llama_cpp._logger")  # installs its log callback, as the full import does
    except BaseException:
        del sys.modules["llama_cpp"]
        raise

    def high_level(name: str) -> object:
        """A high-level name (``Llama``, ``LlamaGrammar``...): import that layer now, as ``__init__`` would have."""
        if name.startswith("__"):
            raise AttributeError(name)
        package.__dict__.update(_public(importlib.import_module("llama_cpp.llama")))
        if name not in package.__dict__:
            raise AttributeError(f"module 'llama_cpp' has no attribute {name!r}")
        return package.__dict__[name]

    package.__getattr__ = high_level  # type: ignore[method-assign]


tune_openmp()  # libgomp reads its spin count when llama.cpp's library loads, which the import below does
_install_low_level()

import llama_cpp  # noqa: E402  (after the install: it finds the package installed above)

ALL_LAYERS = 999  # more than any model here has: llama.cpp offloads them all


def gpu_layers(requested: int) -> int:
    """Layers to offload: ``requested`` when set (>= 0), else (-1, the default) every layer when the installed
    llama.cpp build can offload to a GPU (CUDA, Vulkan, Metal) and none on a CPU build."""
    if requested >= 0:
        return requested
    return ALL_LAYERS if llama_cpp.llama_supports_gpu_offload() else 0


__all__ = ["ALL_LAYERS", "gpu_layers", "llama_cpp"]
