"""Whether a table's computed value is put on an answer (:func:`with_table_value`), one rule for a question's walk
(:mod:`shelfwise.core.answers.ask`) and for each of several questions asked at once or an adaptive run's
sub-questions (:mod:`shelfwise.core.answers.adaptive`)."""

from __future__ import annotations

from shelfwise.core.answers.short import value_fits
from shelfwise.core.answers.tables import SURE, attach, names_a_row
from shelfwise.core.answers.types import Answer, ShortAnswer
from shelfwise.core.models.backend import BackendError, Embedder
from shelfwise.core.navigation.walk import LibraryWalk


def encoder_or_none(library: LibraryWalk) -> Embedder | None:
    """The walk's encoder, or None when it cannot be loaded (a table question is then matched by words only)."""
    try:
        return library.embedder
    except (BackendError, OSError):  # an encoder that cannot be loaded: no encoder (the walk says why)
        return None


def with_table_value(library: LibraryWalk, question: str, answer: Answer, short: ShortAnswer | None) -> None:
    """Put ``short`` (a table's value) on ``answer`` where it is shown: a value of the kind asked for ("Office
    canteen" is not one for "by how much ...?", nor "Monday" for "how many offices ...?"), or a row's name for
    "which stadium has the highest capacity"; where the walk found nothing, only a value matched by the question's
    own words (whole column names and cells), which then answers it; a looser one is not shown."""
    if short is not None and (answer.found or short.score >= SURE) and (
            value_fits(question, short.text) or names_a_row(question, short)):
        attach(answer, short, library.store)
