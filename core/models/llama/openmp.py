"""How llama.cpp's OpenMP threads wait: set once where the app starts, before llama.cpp is first loaded.

llama.cpp's CPU backend (an OpenMP build) meets its threads at a barrier for every operation of the graph, and
libgomp spins there before it sleeps. Beside another busy process a spinning thread holds the core its partner
needs, so the spin count is bounded. The CLI (``app/cli/group.py``) and the window (``app/gui/main.py``) call
:func:`tune_openmp` first thing; libgomp reads the variable when llama.cpp is loaded. The value and the
measurements that chose it: docs/benchmarks.md, "OpenMP spin count".
"""

from __future__ import annotations

from shelfwise.core.environment import set_default

SPINCOUNT = "2000"  # chosen in docs/benchmarks.md ("OpenMP spin count")


def tune_openmp() -> None:
    """Bound libgomp's spinning (``GOMP_SPINCOUNT``) unless the user set it; call before llama.cpp is loaded."""
    set_default("GOMP_SPINCOUNT", SPINCOUNT)
