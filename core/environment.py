"""Every environment variable Shelfwise reads, read here and nowhere else (``tests/test_architecture.py`` finds any
other ``os.environ`` read in core/ or app/). The command line's own (``SHELFWISE_DB``, ``SHELFWISE_EMBEDDER``) are
click options' ``envvar``s named from this table. A leaf module open to all of the core and to the front ends.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: name -> what it sets (the one list of them; docs/development.md and README.md name the ones users set)
VARIABLES: dict[str, str] = {
    "SHELFWISE_HOME": "the data folder: libraries, models, settings, logs (default: the platform's user data dir)",
    "SHELFWISE_SETTINGS": "the settings file (default: settings.json in the data folder)",
    "SHELFWISE_DB": "the library file the commands open (the --db option)",
    "SHELFWISE_EMBEDDER": "the sentence encoder a command runs with (the --embedder option)",
    "SHELFWISE_JUDGE": "the relevance judge when the settings name none",
    "SHELFWISE_THREADS": "llama.cpp's threads when the settings name none (the test suite runs with 1)",
}
DB = "SHELFWISE_DB"
EMBEDDER = "SHELFWISE_EMBEDDER"


def variable(name: str) -> str | None:
    """The value of Shelfwise's variable ``name`` (one of :data:`VARIABLES`; KeyError for another), None when unset
    or empty."""
    if name not in VARIABLES:
        raise KeyError(name)
    return os.environ.get(name) or None


def system() -> Mapping[str, str]:
    """The whole environment, for what other programs define (LM Studio's, Ollama's, GPT4All's model folders)."""
    return os.environ


def set_default(name: str, value: str) -> None:
    """Set ``name`` for this process and the libraries it loads unless the user set it (llama.cpp's OpenMP)."""
    os.environ.setdefault(name, value)
