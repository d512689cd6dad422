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


def _attributes_read_outside_settings() -> set[str]:
    """Every attribute name read anywhere in core/ and app/, except where settings are defined, stored and edited
    (``core/settings.py`` and the dialog, which walk every field generically)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    skip = {root / "core" / "settings.py", root / "app" / "gui" / "settings_dialog.py"}
    found: set[str] = set()
    for path in [*sorted((root / "core").rglob("*.py")), *sorted((root / "app").rglob("*.py"))]:
        if path in skip:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                found.add(node.attr)
    return found


def test_every_setting_and_budget_has_a_reader() -> None:
    """No dead knob: each field of Settings and Budgets (each one the Settings dialog shows) is read by name
    somewhere outside the settings module and the dialog. A field nothing reads is a dial that does nothing."""
    from dataclasses import fields

    from shelfwise.core.settings import Budgets, Settings

    read = _attributes_read_outside_settings()
    unread = [f"{cls.__name__}.{f.name}" for cls in (Settings, Budgets) for f in fields(cls) if f.name not in read]
    assert not unread, f"settings nothing reads (remove them, or make them work): {unread}"


def test_the_reader_walk_finds_a_missing_reader() -> None:
    # the walk above is only as good as its scan: a name nobody reads is not in it, a real field is
    read = _attributes_read_outside_settings()
    assert "request_size" in read and "answer_generate" in read
    assert "no_such_setting_anywhere" not in read
