"""Patterns compiled on first use (``core/languages.py``, :func:`lazy`; docs/scale.md, "Session 23"): a lazy pattern
is the pattern ``re.compile`` makes, compiled only when a method is first called; every answer of the sample's
questions is the same as with every such pattern compiled at import (the way before), on the real sample library
(real SQLite, the real MiniLM encoder it is built with), and a question leaves the patterns it does not reach
uncompiled."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import Any

import pytest

from shelfwise.core.languages import LazyPattern, lazy
from shelfwise.core.settings import Settings
from shelfwise.core.shelf import Shelf
from tests.test_warm_question import _summaries, assert_same_answers

TEXT = "On 3 May 2024, 12 of 40 staff took 2.5 days; ON 4 may: 7. Ask HR (hr@example.com) or Anna-Lena."
CASES = [(r"\b(\d+(?:\.\d+)?)\s+(days?|of)\b", 0), (r"\b(?P<month>may)\b", re.I), (r"[a-z]+@[a-z.]+", 0),
         (r"\s*[;,.]\s*", 0), (r"(?<=\d) (?=\d)", 0), (r"^on\b", re.I)]


def _spans(found: Any) -> Any:
    """A match, or the matches of an iterator, as plain values (None stays None)."""
    if found is None:
        return None
    return [(m.span(), m.groups(), m.groupdict()) for m in ([found] if isinstance(found, re.Match) else found)]


CALLS: list[Callable[[Any], Any]] = [
    lambda p: _spans(p.search(TEXT)), lambda p: _spans(p.search(TEXT, 10, 70)), lambda p: _spans(p.match(TEXT)),
    lambda p: _spans(p.match(TEXT, 3, 40)), lambda p: _spans(p.fullmatch(TEXT)),
    lambda p: _spans(p.fullmatch(TEXT, 0, 2)), lambda p: _spans(p.finditer(TEXT)),
    lambda p: _spans(p.finditer(TEXT, 5, 60)), lambda p: p.findall(TEXT), lambda p: p.findall(TEXT, 4, 50),
    lambda p: p.sub("_", TEXT), lambda p: p.sub(lambda m: f"<{m.group(0)}>", TEXT, 2), lambda p: p.subn("#", TEXT),
    lambda p: p.subn("#", TEXT, 1), lambda p: p.split(TEXT), lambda p: p.split(TEXT, 1),
]


@pytest.mark.parametrize(("pattern", "flags"), CASES)
def test_a_lazy_pattern_is_the_compiled_one(pattern: str, flags: int) -> None:
    compiled = re.compile(pattern, flags)
    for call in CALLS:
        lazy_one = lazy(pattern, flags)
        assert lazy_one.pattern == pattern and "compiled" not in vars(lazy_one)  # readable without compiling
        assert call(lazy_one) == call(compiled)  # the first call, through the class's method...
        assert vars(lazy_one)["search"] == lazy_one.compiled.search
        assert call(lazy_one) == call(compiled)  # ...and a later one, the compiled pattern's own


def _lazy_patterns() -> dict[int, LazyPattern]:
    """Every lazy pattern a Shelfwise module holds, by id (one pattern may be imported into several modules)."""
    return {id(v): v for mod in list(sys.modules.values()) if mod.__name__.startswith("shelfwise.")
            for v in list(vars(mod).values()) if isinstance(v, LazyPattern)}


def _replace(monkeypatch: pytest.MonkeyPatch, make: Callable[[LazyPattern], object]) -> dict[int, object]:
    """Every module's binding of each lazy pattern replaced by ``make(pattern)`` (the same object everywhere)."""
    made = {i: make(p) for i, p in _lazy_patterns().items()}
    for mod in list(sys.modules.values()):
        if mod.__name__.startswith("shelfwise."):
            for name, v in list(vars(mod).items()):
                if isinstance(v, LazyPattern):
                    monkeypatch.setattr(mod, name, made[id(v)])
    return made


@pytest.fixture(scope="module")
def sample(sample_copy: Callable[[str], Any]) -> Any:
    return sample_copy("lazy-patterns")


def test_sample_answers_are_those_of_patterns_compiled_at_import(sample: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    settings = Settings(db_path=sample.db, use_calibration=False, answer_generate=False)
    with Shelf(settings) as shelf:
        shelf.before_question("default")
        assert len(_lazy_patterns()) >= 60  # the answer modules are loaded: their lazy patterns are there
        # the way before: every pattern compiled when its module was imported
        _replace(monkeypatch, lambda p: re.compile(p.pattern, p._flags))
        before = _summaries(shelf)
        monkeypatch.undo()
        # lazy, none compiled yet
        fresh = _replace(monkeypatch, lambda p: LazyPattern(p.pattern, p._flags))
        after = _summaries(shelf)
    assert_same_answers(before, after)
    compiled = [p for p in fresh.values() if isinstance(p, LazyPattern) and "compiled" in vars(p)]
    assert compiled and len(compiled) < len(fresh)  # the questions reached some patterns and left others
    # a follow-up's cues (core/conversation/cues.py) are for a conversation's next question: none compiled
    from shelfwise.core.conversation import cues

    assert isinstance(cues.CONTINUE, LazyPattern) and "compiled" not in vars(cues.CONTINUE)
