"""``shelfwise ask`` hands the facade the question as typed once (``Shelf.ask_typed``, ``Shelf.search_typed``): read
at the door, the index made ready, then walked and answered. What the door refuses (a collection with no documents,
only filters, a malformed filter) is refused before any indexing, through the CLI as through the facade; on the
session's sample library with the real models."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from shelfwise.app.cli.main import main
from shelfwise.core.api.asking import EmptyCollection, OnlyFilters, ScopeError
from shelfwise.core.api.indexing import BeforeQuestion, QuestionEvents
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from tests.cli_sample import TRACEBACK, SampleLibrary

pytestmark = pytest.mark.model

QUESTION = "How many days of annual leave do employees get?"


def test_asking_in_a_collection_without_documents_says_so(sample_library: SampleLibrary) -> None:
    r = CliRunner().invoke(main, ["--db", str(sample_library.db), "ask", QUESTION, "--collection", "nope"])
    assert r.exit_code == 2, r.output
    assert "Collection 'nope' has no documents. Add some first" in r.output and "Path:" not in r.output, r.output
    assert TRACEBACK not in r.output


@pytest.mark.parametrize(("question", "collection", "refused"), [
    (QUESTION, "nope", EmptyCollection),
    ("in:handbook.pdf type:pdf", "default", OnlyFilters),
    (f"since:someday {QUESTION}", "default", ScopeError),
])
def test_the_door_refuses_before_the_index_or_the_walk(sample_library: SampleLibrary, question: str,
                                                      collection: str, refused: type[Exception]) -> None:
    heard: list[str] = []
    events = QuestionEvents(on_before=lambda b: heard.append(b.kind), on_search=lambda r: heard.append("walk"))
    with Shelf(Settings(db_path=sample_library.db)) as shelf:
        with pytest.raises(refused):
            shelf.ask_typed(question, collection, events=events)
        with pytest.raises(refused):
            shelf.search_typed(question, collection, events=events)
    assert heard == []


def test_the_walk_alone_is_reported_and_returned(sample_library: SampleLibrary) -> None:
    heard: list[object] = []
    before: list[BeforeQuestion] = []
    with Shelf(Settings(db_path=sample_library.db)) as shelf:
        result = shelf.search_typed(f"in:handbook.pdf {QUESTION}", events=QuestionEvents(
            on_search=heard.append, on_before=before.append))
    assert heard == [result] and before == []  # the sample's index is current: nothing to say first
    assert result.hits and all(h.path.endswith("handbook.pdf") for h in result.hits)
    assert "27 days" in " ".join(h.text for h in result.hits[:3])
