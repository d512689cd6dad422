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


def test_the_settings_file_round_trips_and_keeps_what_it_does_not_know(tmp_path: Path) -> None:
    import json

    from shelfwise.core.settings import SETTINGS_VERSION, load_settings, save_settings

    path = tmp_path / "settings.json"
    assert load_settings(path).settings == Settings() and not load_settings(path).found
    path.write_text(json.dumps({"version": 99, "from_a_newer_version": {"x": 1}, "n_threads": 3}), encoding="utf-8")
    s = Settings(db_path=tmp_path / "lib.db", model_path="/m.gguf", n_threads=4, readout="binary", judge="bundled",
                 budgets=Budgets(keep=7), judge_levels=("passage",), embedder_path="minilm")
    save_settings(s, path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["version"] == SETTINGS_VERSION and data["from_a_newer_version"] == {"x": 1}
    assert "db_path" not in data and "embedder_path" not in data  # the library's, not the user's
    loaded = load_settings(path, Settings(db_path=tmp_path / "lib.db"))
    assert loaded.found and not loaded.problem
    assert loaded.settings == dataclasses.replace(s, embedder_path=None)


def test_a_damaged_settings_file_gives_the_defaults_and_says_so(tmp_path: Path) -> None:
    import json

    from shelfwise.core.settings import load_settings

    path = tmp_path / "settings.json"
    for text in ("{\"n_threads\": 4", "[1, 2]", "\xff\xfe"):
        path.write_bytes(text.encode("latin-1"))
        loaded = load_settings(path)
        assert loaded.settings == Settings() and str(path) in loaded.problem
    path.write_text(json.dumps({"n_threads": "many", "readout": "yes-no", "keep": 3, "adaptive": True,
                                "budgets": {"keep": "x"}}), encoding="utf-8")
    loaded = load_settings(path)
    assert loaded.settings == Settings(adaptive=True)  # what was usable is used
    assert "n_threads" in loaded.problem and "readout" in loaded.problem and "budgets" in loaded.problem


def test_the_command_line_reads_the_settings_file_and_its_flags_override_it(tmp_path: Path) -> None:
    import click

    from shelfwise.app.cli.group import CliState, settings_for
    from shelfwise.core.settings import save_settings, settings_path

    save_settings(Settings(n_threads=5, readout="binary", answer_passages=3))  # SHELFWISE_SETTINGS: conftest's
    assert settings_path() == tmp_path / "settings.json"
    ctx = click.Context(click.Command("x"), obj=CliState(tmp_path / "lib.db"))
    with ctx:
        s = settings_for(ctx, readout="fused", n_gpu_layers=None)
    assert (s.n_threads, s.readout, s.answer_passages, s.db_path) == (5, "fused", 3, tmp_path / "lib.db")
