"""Settings: the models (answer model, the GGUFs found in LM Studio's, Ollama's and GPT4All's folders to choose it
from, the library's sentence encoder, the relevance judge), GPU layers, threads;
under a collapsed "Advanced", the research options and the walk's budgets, which calibration sets per collection.

The settings live in the core's one settings file (``load_settings`` / ``save_settings`` in ``core/settings.py``,
read by the command line too); the window keeps QSettings for its geometry only. :func:`window_settings` moves the
values an older window kept in QSettings into that file once, so an upgrade loses nothing.
"""

from __future__ import annotations

from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from shelfwise.core.api.models import FoundModel, encoder_name, found_models
from shelfwise.core.settings import (
    DEFAULT_EMBEDDER,
    EMBEDDER_NAMES,
    LIMITS,
    READOUTS,
    Budgets,
    LoadedSettings,
    Settings,
    as_readout,
    declared,
    load_settings,
    save_settings,
    whole_range,
)

FOUND_PROMPT = "choose one of LM Studio's, Ollama's or GPT4All's models…"
ADVANCED_NOTE = ("Calibration sets the walk's budgets per collection when it indexes, so these values apply only to "
                 "a collection that is not calibrated yet. The readout and adaptive retrieval are research options.")
#: The QSettings groups an older window kept its settings in (moved into the settings file once).
LEGACY_GROUPS = ("model", "search", "budgets")


def found_label(m: FoundModel) -> str:
    """One found model as the list shows it: tool and name, its own name, size, quantisation, chat template."""
    size = f"{m.size / 1e9:.1f} GB" if m.size >= 1e9 else f"{m.size / 1e6:.0f} MB"
    facts = [m.title, size, m.quantisation or "quantisation unknown",
             "chat template" if m.has_chat_template else "no chat template"] if m.usable else [m.why_not]
    return f"{m.tool}: {m.name} ({', '.join(facts)})"


def _value(qs: QSettings, key: str, default: Any) -> Any:
    raw = qs.value(key, None)
    if raw is None or raw == "":
        return default
    try:
        if isinstance(default, bool):
            return raw if isinstance(raw, bool) else str(raw).lower() in ("1", "true", "yes", "on")
        if isinstance(default, int):
            return int(str(raw))
        if isinstance(default, float):
            return float(str(raw))
    except (TypeError, ValueError):
        return default
    return str(raw)


def legacy_settings(qs: QSettings, base: Settings) -> Settings | None:
    """The settings an older window kept in QSettings, over ``base``; None when it kept none."""
    if not any(qs.contains(f"{group}/{key}") for group in LEGACY_GROUPS for key in
               ("path", "gpu_layers", "threads", "readout", "adaptive", "answer_passages",
                *(f.name for f in fields(Budgets)))):
        return None
    budgets = Budgets(**{f.name: _value(qs, f"budgets/{f.name}", asdict(base.budgets)[f.name])
                         for f in fields(Budgets)})
    readout = _value(qs, "search/readout", base.readout)
    threads = _value(qs, "model/threads", base.n_threads or 0)
    return replace(
        base,
        model_path=_value(qs, "model/path", base.model_path or "") or None,
        n_gpu_layers=_value(qs, "model/gpu_layers", base.n_gpu_layers),
        n_threads=threads or None,
        readout=readout if readout in READOUTS else base.readout,
        budgets=budgets,
        adaptive=_value(qs, "search/adaptive", base.adaptive),
        answer_passages=_value(qs, "search/answer_passages", base.answer_passages),
    )


def window_settings(qs: QSettings, base: Settings, path: Path | None = None) -> LoadedSettings:
    """The settings the window opens with: the settings file over ``base``. When there is no file yet and
    QSettings holds an older window's settings, they are written to the file first and removed from QSettings
    (once: QSettings keeps only the window's geometry from then on)."""
    loaded = load_settings(path, base)
    if loaded.found:
        return loaded
    old = legacy_settings(qs, base)
    if old is None:
        return loaded
    try:
        save_settings(old, loaded.path)
    except OSError as exc:
        return LoadedSettings(old, loaded.path, problem=f"could not write the settings file {loaded.path}: {exc}")
    for group in LEGACY_GROUPS:
        qs.remove(group)
    qs.sync()
    return load_settings(loaded.path, base)


class SettingsDialog(QDialog):
    """The settings, and the library's sentence encoder (``encoder``): choosing another one is a switch the window
    measures and asks about (:meth:`encoder_choice`); it is the library's, not a setting of the app."""

    def __init__(self, settings: Settings, parent: QWidget | None = None, encoder: str = DEFAULT_EMBEDDER) -> None:
        super().__init__(parent)
        self.setWindowTitle("Shelfwise settings")
        self._base = settings

        model_box = self._models_box(settings, encoder)
        self._advanced_box(settings)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults).clicked.connect(self._defaults)
        layout = QVBoxLayout(self)
        layout.addWidget(model_box)
        layout.addWidget(self.advanced_toggle)
        layout.addWidget(self.advanced)
        layout.addWidget(buttons)

    def _models_box(self, settings: Settings, encoder: str) -> QGroupBox:
        """The Models group: the answer model (a file, or one found on this computer), the library's encoder,
        the judge, GPU layers and threads."""
        self.model_path = QLineEdit(settings.model_path or "")
        self.model_path.setPlaceholderText("bundled Gemma 3 270M (Q4_K_M)")
        self.model_path.setToolTip(declared("model_path").help)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_path, 1)
        model_row.addWidget(browse)
        self.found = QComboBox()  # the GGUFs of LM Studio, Ollama and GPT4All: choosing one fills the line above
        self._found_paths: list[str] = [""]
        self.found.addItem(FOUND_PROMPT)
        for m in found_models():
            self.found.addItem(found_label(m))
            self._found_paths.append(str(m.path))
            index = self.found.count() - 1
            if not m.usable:
                item = self.found.model().item(index)  # type: ignore[attr-defined]
                item.setEnabled(False)
                self.found.setItemData(index, f"Cannot answer: {m.why_not}", Qt.ItemDataRole.ToolTipRole)
            else:
                self.found.setItemData(index, str(m.path), Qt.ItemDataRole.ToolTipRole)
        if self.found.count() == 1:
            self.found.setItemText(0, "none found in LM Studio's, Ollama's or GPT4All's folders")
            self.found.setEnabled(False)
        elif settings.model_path in self._found_paths:
            self.found.setCurrentIndex(self._found_paths.index(settings.model_path))
        self.found.setToolTip("GGUF models that LM Studio, Ollama and GPT4All keep on this computer (read from their "
                              "model folders; nothing is downloaded). An instruction-tuned model with a chat template "
                              "is prompted with it; its answers are checked against the sources like the bundled "
                              "model's.")
        self.found.currentIndexChanged.connect(self._found_chosen)
        self.embedder = QComboBox()
        self.embedder.setEditable(True)
        self.embedder.addItems(list(EMBEDDER_NAMES))
        self.embedder.setCurrentText(encoder)
        self.embedder.setToolTip("This library's sentence encoder, which judges every level: embeddinggemma "
                                 "(multilingual; every new library gets it), minilm (faster, English only) or an "
                                 "embedding GGUF path. Changing it re-embeds the library, after showing how long "
                                 "that takes; until then questions are answered from its words and the new "
                                 "vectors made so far.")
        self.judge = QComboBox()
        self.judge.setEditable(True)
        self.judge.addItems(list(declared("judge").choices))
        self.judge.setCurrentText(settings.judge or "off")
        self.judge.setToolTip(declared("judge").help)
        self.gpu_layers = QSpinBox()
        self.gpu_layers.setRange(*whole_range("n_gpu_layers"))
        self.gpu_layers.setSpecialValueText("automatic")
        self.gpu_layers.setValue(settings.n_gpu_layers)
        self.gpu_layers.setToolTip(declared("n_gpu_layers").help)
        self.threads = QSpinBox()
        self.threads.setRange(0, whole_range("n_threads")[1])  # 0: automatic
        self.threads.setSpecialValueText("automatic")
        self.threads.setValue(settings.n_threads or 0)
        self.threads.setToolTip(declared("n_threads").help)
        model_box = QGroupBox("Models")
        model_form = QFormLayout(model_box)
        model_form.addRow(declared("model_path").label, model_row)
        model_form.addRow("Models on this computer", self.found)
        model_form.addRow("Sentence encoder", self.embedder)  # the library's, not a setting (encoder_choice)
        model_form.addRow(declared("judge").label, self.judge)
        model_form.addRow(declared("n_gpu_layers").label, self.gpu_layers)
        model_form.addRow(declared("n_threads").label, self.threads)
        return model_box

    def _advanced_box(self, settings: Settings) -> None:
        """The collapsed Advanced part: the readout, the passages for the answer, adaptive retrieval and the
        walk's budgets (calibration sets those per collection)."""
        self.advanced_toggle = QToolButton()
        self.advanced_toggle.setText("Advanced")
        self.advanced_toggle.setCheckable(True)
        self.advanced_toggle.setChecked(False)
        self.advanced = QWidget()
        self.advanced_toggle.toggled.connect(self._show_advanced)
        self.readout = QComboBox()
        self.readout.addItems(list(declared("readout").choices))
        self.readout.setCurrentText(settings.readout)
        self.readout.setToolTip(declared("readout").help)
        self.adaptive = QCheckBox(declared("adaptive").label)
        self.adaptive.setChecked(settings.adaptive)
        self.adaptive.setToolTip(declared("adaptive").help)
        self.answer_passages = QSpinBox()
        self.answer_passages.setRange(*whole_range("answer_passages"))
        self.answer_passages.setValue(settings.answer_passages)
        self.answer_passages.setToolTip(declared("answer_passages").help)
        note = QLabel(ADVANCED_NOTE)
        note.setWordWrap(True)
        note.setObjectName("advancedNote")
        advanced_form = QFormLayout(self.advanced)
        advanced_form.addRow(note)
        advanced_form.addRow(declared("readout").label, self.readout)
        advanced_form.addRow(declared("answer_passages").label, self.answer_passages)
        advanced_form.addRow(self.adaptive)
        self.budgets: dict[str, QSpinBox | QDoubleSpinBox] = {}
        for f in fields(Budgets):
            value = asdict(settings.budgets)[f.name]
            box: QSpinBox | QDoubleSpinBox
            if isinstance(value, float):
                box = QDoubleSpinBox()
                box.setRange(*LIMITS[f"budgets.{f.name}"])
                box.setSingleStep(0.05)
                box.setDecimals(2)
            else:
                box = QSpinBox()
                box.setRange(*whole_range(f"budgets.{f.name}"))
            box.setValue(value)
            said = declared(f"budgets.{f.name}")
            box.setToolTip(said.help)
            self.budgets[f.name] = box
            advanced_form.addRow(said.label, box)
        self.advanced.setVisible(False)

    def _found_chosen(self, index: int) -> None:
        if 0 < index < len(self._found_paths):
            self.model_path.setText(self._found_paths[index])

    def _show_advanced(self, shown: bool) -> None:
        self.advanced.setVisible(shown)
        self.adjustSize()

    def settings(self) -> Settings:
        """The settings as edited (everything the dialog does not show comes from the ones it was opened with)."""
        budgets = Budgets.from_dict({name: box.value() for name, box in self.budgets.items()})
        judge = self.judge.currentText().strip()
        return replace(
            self._base,
            model_path=self.model_path.text().strip() or None,
            judge=None if judge in ("", "off") else judge,
            n_gpu_layers=self.gpu_layers.value(),
            n_threads=self.threads.value() or None,
            readout=as_readout(self.readout.currentText()),
            adaptive=self.adaptive.isChecked(),
            answer_passages=self.answer_passages.value(),
            budgets=budgets,
        )

    def encoder_choice(self) -> str:
        """The encoder chosen for this library (``minilm``, ``embeddinggemma`` or a GGUF path)."""
        return encoder_name(self.embedder.currentText().strip() or DEFAULT_EMBEDDER)

    def _defaults(self) -> None:
        d = Settings()
        self.model_path.clear()
        self.found.setCurrentIndex(0)
        self.embedder.setCurrentText(DEFAULT_EMBEDDER)
        self.judge.setCurrentText("off")
        self.gpu_layers.setValue(d.n_gpu_layers)
        self.threads.setValue(0)
        self.readout.setCurrentText(d.readout)
        self.adaptive.setChecked(d.adaptive)
        self.answer_passages.setValue(d.answer_passages)
        for name, box in self.budgets.items():
            box.setValue(asdict(d.budgets)[name])

    def _browse(self) -> None:
        start = self.model_path.text() or str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, "Model file", start, "GGUF models (*.gguf);;All files (*)")
        if path:
            self.model_path.setText(path)
