"""Settings: model file, GPU layers, threads, the walk's budgets, readout, adaptive retrieval.

Persisted with QSettings and mapped to the core's :class:`~shelfwise.core.settings.Settings` by two plain
functions, :func:`load_settings` and :func:`save_settings`, so the mapping is testable without the dialog.
"""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings
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
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from shelfwise.core.indexing.encoder import canonical
from shelfwise.core.settings import DEFAULT_EMBEDDER, EMBEDDER_NAMES, READOUTS, Budgets, Settings, as_readout

BUDGET_HELP = {
    "first_keep_ratio": "Share of the first level kept (leans to recall)",
    "keep": "Candidates kept at every later level",
    "passages": "Passages the last level returns (r)",
    "request_size": "Most candidates compared in one request",
    "hybrid": "Dense + lexical candidates added to the last level (0 = off)",
    "branching": "Most children a node may have before it is grouped",
}


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


def load_settings(qs: QSettings, base: Settings | None = None) -> Settings:
    """The persisted settings over ``base`` (which carries what is not persisted here, such as the database)."""
    base = base or Settings()
    budgets = Budgets(**{f.name: _value(qs, f"budgets/{f.name}", getattr(base.budgets, f.name))
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


def save_settings(qs: QSettings, settings: Settings) -> None:
    qs.setValue("model/path", settings.model_path or "")
    qs.setValue("model/gpu_layers", settings.n_gpu_layers)
    qs.setValue("model/threads", settings.n_threads or 0)
    qs.setValue("search/readout", settings.readout)
    qs.setValue("search/adaptive", settings.adaptive)
    qs.setValue("search/answer_passages", settings.answer_passages)
    for f in fields(Budgets):
        qs.setValue(f"budgets/{f.name}", getattr(settings.budgets, f.name))
    qs.sync()


class SettingsDialog(QDialog):
    """The settings, and the library's sentence encoder (``encoder``): choosing another one is a switch the window
    measures and asks about (:meth:`encoder_choice`); it is the library's, not a setting of the app."""

    def __init__(self, settings: Settings, parent: QWidget | None = None, encoder: str = DEFAULT_EMBEDDER) -> None:
        super().__init__(parent)
        self.setWindowTitle("Shelfwise settings")
        self._base = settings

        self.model_path = QLineEdit(settings.model_path or "")
        self.model_path.setPlaceholderText("bundled Gemma 3 270M (Q4_K_M)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_path, 1)
        model_row.addWidget(browse)
        self.gpu_layers = QSpinBox()
        self.gpu_layers.setRange(-1, 999)
        self.gpu_layers.setSpecialValueText("automatic")
        self.gpu_layers.setValue(settings.n_gpu_layers)
        self.gpu_layers.setToolTip("Layers offloaded to the GPU: automatic puts every layer of the answer model and "
                                   "the encoder there when llama.cpp was built for a GPU (CUDA, Vulkan, Metal); 0 "
                                   "keeps them on the CPU")
        self.threads = QSpinBox()
        self.threads.setRange(0, 256)
        self.threads.setSpecialValueText("automatic")
        self.threads.setValue(settings.n_threads or 0)
        self.embedder = QComboBox()
        self.embedder.setEditable(True)
        self.embedder.addItems(list(EMBEDDER_NAMES))
        self.embedder.setCurrentText(encoder)
        self.embedder.setToolTip("This library's sentence encoder, which judges every level: embeddinggemma "
                                 "(multilingual; every new library gets it), minilm (faster, English only) or an "
                                 "embedding GGUF path. Changing it re-embeds the library, after showing how long "
                                 "that takes; until then questions are answered from its words and the new "
                                 "vectors made so far.")
        model_box = QGroupBox("Model")
        model_form = QFormLayout(model_box)
        model_form.addRow("Model file (GGUF)", model_row)
        model_form.addRow("Sentence encoder", self.embedder)
        model_form.addRow("GPU layers", self.gpu_layers)
        model_form.addRow("Threads", self.threads)

        self.readout = QComboBox()
        self.readout.addItems(list(READOUTS))
        self.readout.setCurrentText(settings.readout)
        self.readout.setToolTip("How each candidate is scored: fused evidence, query likelihood, Yes/No, embedder")
        self.adaptive = QCheckBox("Adaptive retrieval (split the question, retrieve only when needed)")
        self.adaptive.setChecked(settings.adaptive)
        self.answer_passages = QSpinBox()
        self.answer_passages.setRange(1, 20)
        self.answer_passages.setValue(settings.answer_passages)
        search_box = QGroupBox("Search")
        search_form = QFormLayout(search_box)
        search_form.addRow("Readout", self.readout)
        search_form.addRow("Passages for the answer", self.answer_passages)
        search_form.addRow(self.adaptive)

        budget_box = QGroupBox("Budgets of the walk")
        budget_form = QFormLayout(budget_box)
        self.budgets: dict[str, QSpinBox | QDoubleSpinBox] = {}
        for f in fields(Budgets):
            value = getattr(settings.budgets, f.name)
            box: QSpinBox | QDoubleSpinBox
            if isinstance(value, float):
                box = QDoubleSpinBox()
                box.setRange(0.01, 1.0)
                box.setSingleStep(0.05)
                box.setDecimals(2)
            else:
                box = QSpinBox()
                box.setRange(0, 1000)
            box.setValue(value)
            box.setToolTip(BUDGET_HELP.get(f.name, ""))
            self.budgets[f.name] = box
            budget_form.addRow(f.name.replace("_", " "), box)

        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults).clicked.connect(self._defaults)
        layout = QVBoxLayout(self)
        layout.addWidget(model_box)
        layout.addWidget(search_box)
        layout.addWidget(budget_box)
        layout.addWidget(buttons)

    def settings(self) -> Settings:
        """The settings as edited (everything the dialog does not show comes from the ones it was opened with)."""
        budgets = Budgets.from_dict({name: box.value() for name, box in self.budgets.items()})
        return replace(
            self._base,
            model_path=self.model_path.text().strip() or None,
            n_gpu_layers=self.gpu_layers.value(),
            n_threads=self.threads.value() or None,
            readout=as_readout(self.readout.currentText()),
            adaptive=self.adaptive.isChecked(),
            answer_passages=self.answer_passages.value(),
            budgets=budgets,
        )

    def encoder_choice(self) -> str:
        """The encoder chosen for this library (``minilm``, ``embeddinggemma`` or a GGUF path)."""
        return canonical(self.embedder.currentText().strip() or DEFAULT_EMBEDDER)

    def _defaults(self) -> None:
        d = Settings()
        self.model_path.clear()
        self.embedder.setCurrentText(DEFAULT_EMBEDDER)
        self.gpu_layers.setValue(d.n_gpu_layers)
        self.threads.setValue(0)
        self.readout.setCurrentText(d.readout)
        self.adaptive.setChecked(d.adaptive)
        self.answer_passages.setValue(d.answer_passages)
        for name, box in self.budgets.items():
            box.setValue(getattr(d.budgets, name))

    def _browse(self) -> None:
        start = self.model_path.text() or str(Path.home())
        path, _ = QFileDialog.getOpenFileName(self, "Model file", start, "GGUF models (*.gguf);;All files (*)")
        if path:
            self.model_path.setText(path)
