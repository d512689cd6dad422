"""The in-process answer model loads on first use (``core/models/llama/on_demand.py``): a question that only searches
(``ask --no-generate``) never loads its weights, and what it needs of the model before that (identity, context,
token counts) is what the loaded model says. Real bundled model; the CLI on the sample library."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from shelfwise.app.cli.main import main
from shelfwise.core.models.backend import BackendError
from shelfwise.core.models.llama.on_demand import OnDemandLlama
from shelfwise.core.navigation.question import clip_question, question_budget
from tests.cli_sample import TRACEBACK, SampleLibrary

pytestmark = pytest.mark.model

QUESTION = "How many days of annual leave do employees get?"
TEXTS = ["How do I claim travel expenses?", "", "Überprüfung der Jahresabschlüsse (§ 316 HGB) <start_of_turn>",
         "Wie beantrage ich Reisekosten? 旅費の精算方法は？ " * 40]


def test_what_a_search_needs_is_the_loaded_models_without_loading_it(bundled_model: Path,
                                                                       llama_backend: Any) -> None:
    with OnDemandLlama(bundled_model) as model:
        assert model.model_id == llama_backend.model_id and model.legacy_ids == llama_backend.legacy_ids
        assert model.n_ctx == llama_backend.n_ctx and question_budget(model) == question_budget(llama_backend)
        assert [model.count_tokens(t) for t in TEXTS] == [llama_backend.count_tokens(t) for t in TEXTS]
        long_question = "Which rules apply to travel, meals and hotels abroad for the sales team? " * 120
        by_vocabulary = clip_question(long_question, model)
        assert by_vocabulary.clipped and by_vocabulary == clip_question(long_question, llama_backend)
        assert not model.is_loaded  # identity, context and the tokenizer: no weights yet
        scores = model.binary("Travel policy: meals are refunded up to 30 euros a day.", ["Is this about meals?"])
        assert model.is_loaded and len(scores.values) == 1
        assert model.count_tokens(TEXTS[3]) == llama_backend.count_tokens(TEXTS[3])
    with pytest.raises(BackendError, match="closed"):
        model.count_tokens("after close")


def _broken_copy(source: Path, target: Path) -> Path:
    """The first 20 MB of ``source``: its header and tokenizer are whole, its weights are cut (llama.cpp refuses
    to load it)."""
    with source.open("rb") as fh:
        target.write_bytes(fh.read(20_000_000))
    return target


def test_ask_no_generate_answers_without_loading_the_answer_model(sample_library: SampleLibrary,
                                                                   bundled_model: Path, tmp_path: Path) -> None:
    """With weights that cannot load, ``--no-generate`` still answers from the sources (before, it loaded them to
    clip the question and failed); a generated answer says the file cannot be loaded, after the sources' answer."""
    broken = _broken_copy(bundled_model, tmp_path / "cut.gguf")
    runner = CliRunner()
    r = runner.invoke(main, ["--db", str(sample_library.db), "ask", QUESTION, "--no-generate", "--model", str(broken)])
    assert r.exit_code == 0 and TRACEBACK not in r.output, r.output[-2000:]
    assert "27 days" in r.output and "could not load" not in r.output
    r = runner.invoke(main, ["--db", str(sample_library.db), "ask", QUESTION, "--model", str(broken)])
    assert r.exit_code == 1 and TRACEBACK not in r.output, r.output[-2000:]
    assert "27 days" in r.output and "llama.cpp could not load the model" in r.output
