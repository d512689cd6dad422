"""Settings: frozen (the UI thread and the workers can share one without a copy changing under them), readouts
checked by name, budgets read back from stored dicts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from shelfwise.core.settings import READOUTS, Budgets, Settings, as_readout


def test_settings_and_budgets_are_frozen() -> None:
    s = Settings(db_path=Path("lib.db"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.readout = "binary"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.budgets.keep = 9  # type: ignore[misc]
    changed = dataclasses.replace(s, budgets=dataclasses.replace(s.budgets, keep=9))
    assert changed.budgets.keep == 9 and s.budgets.keep == Budgets().keep  # the original is untouched


def test_readouts_are_checked_by_name() -> None:
    assert [as_readout(r) for r in READOUTS] == list(READOUTS)
    with pytest.raises(ValueError, match="unknown readout 'yes-no'; choose one of fused"):
        as_readout("yes-no")


def test_budgets_from_a_stored_dict_convert_types_and_ignore_unknown_keys() -> None:
    b = Budgets.from_dict({"keep": "6", "first_keep_ratio": 1, "gone": 3})
    assert b.keep == 6 and isinstance(b.keep, int) and b.first_keep_ratio == 1.0
    assert isinstance(b.first_keep_ratio, float) and Budgets.from_dict(None) == Budgets()
