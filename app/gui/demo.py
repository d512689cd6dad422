"""Demo mode: replay a walk level by level in the walk view: the candidates, then their scores, then the cut.

Three steps per level (listed, scored, kept/pruned), played by a timer whose speed the slider sets; Play/Pause,
Step and Stop. Nothing is recomputed: it replays a recorded :class:`~shelfwise.core.navigation.trace.Trace`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSlider, QWidget

from shelfwise.app.gui.plain import plain_label
from shelfwise.app.gui.walk_view import Reveal, WalkView
from shelfwise.core.navigation.trace import Trace

PHASES = ("listed", "scored", "kept and pruned")


def demo_steps(trace: Trace) -> list[Reveal]:
    return [Reveal(level, phase) for level in range(len(trace.levels)) for phase in range(len(PHASES))]


class DemoBar(QWidget):
    """Controls for replaying ``trace`` into ``walk``. Emits ``stopped`` when the replay ends or is closed."""

    stopped = Signal()
    stepped = Signal(int)  # index of the step just shown

    def __init__(self, walk: WalkView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.walk = walk
        self.trace: Trace | None = None
        self.steps: list[Reveal] = []
        self.position = -1
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.step)

        self.play_button = QPushButton("Pause")
        self.play_button.clicked.connect(self.toggle)
        self.step_button = QPushButton("Step")
        self.step_button.clicked.connect(self._manual_step)
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop)
        self.speed = QSlider(Qt.Orientation.Horizontal)
        self.speed.setRange(1, 10)
        self.speed.setValue(4)
        self.speed.setToolTip("Replay speed")
        self.speed.valueChanged.connect(self._apply_speed)
        self.status = plain_label()
        self.status.setObjectName("hint")

        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.play_button)
        row.addWidget(self.step_button)
        row.addWidget(self.stop_button)
        row.addWidget(QLabel("speed"))
        row.addWidget(self.speed, 1)
        row.addWidget(self.status)
        self._apply_speed()
        self.setVisible(False)

    def interval_ms(self) -> int:
        return int(2400 / self.speed.value())

    def start(self, trace: Trace, autoplay: bool = True) -> None:
        self.trace = trace
        self.steps = demo_steps(trace)
        self.position = -1
        self.setVisible(True)
        self.walk.replay_button.setEnabled(False)
        self.step()
        if autoplay:
            self.play()
        else:
            self.pause()

    def play(self) -> None:
        self.timer.start(self.interval_ms())
        self.play_button.setText("Pause")

    def pause(self) -> None:
        self.timer.stop()
        self.play_button.setText("Play")

    def toggle(self) -> None:
        if self.timer.isActive():
            self.pause()
        else:
            if self.position >= len(self.steps) - 1:
                self.position = -1
            self.play()

    def _manual_step(self) -> None:
        self.pause()
        self.step()

    def step(self) -> None:
        if self.trace is None or not self.steps:
            return
        if self.position >= len(self.steps) - 1:
            self.pause()
            return
        self.position += 1
        reveal = self.steps[self.position]
        self.walk.show_trace(self.trace, reveal=reveal)
        level = self.trace.levels[reveal.level]
        self.status.setText(f"level {reveal.level + 1}/{len(self.trace.levels)} · {level.label}: "
                            f"{PHASES[reveal.phase]}")
        self.stepped.emit(self.position)
        if self.position >= len(self.steps) - 1:
            self.pause()
            self.play_button.setText("Replay")

    def stop(self) -> None:
        self.timer.stop()
        self.setVisible(False)
        if self.trace is not None:
            self.walk.show_trace(self.trace)  # the full walk again
        self.stopped.emit()

    def _apply_speed(self) -> None:
        if self.timer.isActive():
            self.timer.setInterval(self.interval_ms())
