"""Settings declared once (issue 51, deliver 5): the window's Settings dialog and the commands' options show what
``DECLARED`` in ``core/settings.py`` says of each setting, and the ranges ``LIMITS`` gives."""

from __future__ import annotations

from dataclasses import fields

import click
import pytest

from shelfwise.core.settings import DECLARED, LIMITS, Budgets, Settings, declared

# the options of `shelfwise ask` that set a declared setting
ASK_OPTIONS = {"model_path": "model_path", "judge": "judge", "n_gpu_layers": "gpu_layers", "n_threads": "threads",
               "readout": "readout", "adaptive": "adaptive"}


def test_every_declared_key_is_a_setting_with_a_range_where_it_is_a_number() -> None:
    names = {f.name for f in fields(Settings)} | {f"budgets.{f.name}" for f in fields(Budgets)}
    assert [d.key for d in DECLARED if d.key not in names] == []
    assert len({d.key for d in DECLARED}) == len(DECLARED)
    numbers = {k for k in names if k.startswith("budgets.")} | {"n_gpu_layers", "n_threads", "answer_passages"}
    assert {d.key for d in DECLARED} & numbers <= set(LIMITS)
    with pytest.raises(KeyError):
        declared("db_path")  # the library is the front end's choice, not a setting the dialog shows


def test_the_ask_options_take_their_help_and_choices_from_the_declarations() -> None:
    from shelfwise.app.cli.ask import ask_cmd

    params = {p.name: p for p in ask_cmd.params}
    for key, name in ASK_OPTIONS.items():
        option = params[name]
        assert isinstance(option, click.Option) and option.help == declared(key).help, key
    readout = params["readout"].type
    assert isinstance(readout, click.Choice) and tuple(readout.choices) == declared("readout").choices


def test_the_dialog_shows_each_declared_setting_with_its_label_and_help(qtbot) -> None:
    from PySide6.QtWidgets import QCheckBox, QFormLayout, QLabel, QWidget

    from shelfwise.app.gui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(Settings())
    qtbot.addWidget(dialog)
    rows: dict[str, QWidget] = {}
    for form in dialog.findChildren(QFormLayout):
        for i in range(form.rowCount()):
            label = form.itemAt(i, QFormLayout.ItemRole.LabelRole)
            field = form.itemAt(i, QFormLayout.ItemRole.FieldRole)
            if label is not None and isinstance(label.widget(), QLabel) and field is not None:
                rows[label.widget().text()] = field.widget() or field.layout().itemAt(0).widget()
            elif field is not None and isinstance(field.widget(), QCheckBox):
                rows[field.widget().text()] = field.widget()
    for d in DECLARED:
        assert d.label in rows, d.key
        assert rows[d.label].toolTip() == d.help, d.key
