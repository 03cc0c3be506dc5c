"""The Monitor page's replay: a CSV recorded by ``rigcheck monitor --csv`` read on the pool (in a process
of its own when it is large), with progress and Cancel in the reading bar, then scrubbed with the slider;
back to live readings when the user asks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import SignalInstance, Slot
from PySide6.QtWidgets import QFileDialog, QLabel, QProgressBar, QSlider, QWidget

from rigcheck.core.errors import InputError
from rigcheck.core.known_text import in_language
from rigcheck.core.replay import Recording, read_recording
from rigcheck.core.steps import Steps
from rigcheck.gui.i18n import tr
from rigcheck.gui.pages.monitor_process import read_in_process, wants_a_process
from rigcheck.gui.state import AppState
from rigcheck.gui.workers import Task, submit_task

#: seconds between two updates of the reading bar while a recording is read on the pool
READ_PROGRESS_EVERY_S = 0.25


def _minutes(seconds: float) -> str:
    seconds = max(0.0, seconds)
    hours, rest = divmod(round(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Replay:
    """MonitorPage's open ``recording``: reading it (``reading_bar``), showing it (``replay_label``,
    ``slider``), and leaving it."""

    state: AppState
    recording: Recording | None
    replay_finished: SignalInstance
    reading_bar: QWidget
    reading_label: QLabel
    reading_progress: QProgressBar
    error_label: QLabel
    replay_label: QLabel
    slider: QSlider
    scope: QLabel
    _reading: Task | None
    _generation: int
    _replay_name: str
    _gpu_key: tuple[tuple[int, str], ...] | None
    _clock_max: float

    if TYPE_CHECKING:  # MonitorPage's

        def set_paused(self, paused: bool) -> None: ...

        def _quiet(self) -> None: ...

        def _set_mode(self) -> None: ...

    @Slot()
    def _replay_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self, tr("Replay a recording"), "", tr("Monitor recordings (*.csv)")
        )
        if name:
            self.open_recording(Path(name))

    def open_recording(self, path: Path) -> Task:
        """Read a monitor CSV on the pool (progress and Cancel in the reading bar), then replay it;
        :attr:`replay_finished` says how it ended. A bad file gets a one-line message, never a crash."""
        if self._reading is not None:
            self._reading.cancel()
        self._generation += 1
        generation = self._generation

        def read(steps: Steps) -> Recording | InputError:
            try:
                if wants_a_process(path):  # a Python loop over every line: off this process's interpreter
                    return read_in_process(path, steps)
                return read_recording(path, steps=steps)
            except InputError as exc:
                return exc

        def done(result: Recording | InputError) -> None:
            if generation == self._generation:
                self._end_reading()
                self._show_recording(path, result)

        def failed(message: str) -> None:
            if generation == self._generation:
                self._end_reading()
                self._show_recording(path, InputError(str(path), message))

        def progressed(fraction: float) -> None:
            if generation == self._generation:
                self.reading_progress.setValue(round(fraction * 1000))

        self.reading_label.setText(f"{tr('Reading')} {path.name}…")
        self.reading_progress.setValue(0)
        self.reading_bar.setVisible(True)
        # four updates a second: each one is a GUI-thread handler that waits for the GIL the reader holds
        # (20 a second cost the GUI thread 320 ms over a 6-second read, benchmarks/gui_handlers.py --why)
        self._reading = submit_task(
            self.state.pool,
            read,
            done,
            failed,
            on_progress=progressed,
            progress_every_s=READ_PROGRESS_EVERY_S,
        )
        return self._reading

    def _end_reading(self) -> None:
        self._reading = None
        self.reading_bar.setVisible(False)

    @Slot()
    def cancel_reading(self) -> None:
        """Stop reading a recording; what the page showed before stays."""
        if self._reading is None:
            return
        self._reading.cancel()
        self._generation += 1  # its result, if it still comes, is stale
        self._end_reading()
        self.replay_finished.emit(False)

    def busy(self) -> bool:
        """A recording is still being read on the pool."""
        return self._reading is not None

    def _show_recording(self, path: Path, recording: Recording | InputError) -> None:
        if isinstance(recording, InputError):
            self.error_label.setText(f"✘ {tr('Cannot replay this file')}: {in_language(str(recording))}")
            self.error_label.setVisible(True)
            self.replay_finished.emit(False)
            return
        self.error_label.setVisible(False)
        self.recording = recording
        self.set_paused(False)
        self._quiet()  # live sampling stops while replaying
        self.slider.blockSignals(True)
        self.slider.setRange(0, len(recording) - 1)
        self.slider.setValue(len(recording) - 1)
        self.slider.blockSignals(False)
        self._replay_name = path.name
        self.replay_label.setText(self._replay_text(recording))
        self.scope.setText(tr("A recording, replayed: drag the slider to move through it."))
        self._gpu_key = None
        self._clock_max = 0.0
        self._set_mode()
        self.replay_finished.emit(True)

    def _replay_text(self, recording: Recording) -> str:
        gpus = len(recording.gpus)
        what = tr("GPU") if gpus == 1 else tr("GPUs")
        thinned = ", " + tr("one row in {n} kept").format(n=recording.stride) if recording.stride > 1 else ""
        return (
            f"{tr('Replay')}: {self._replay_name} ({_minutes(recording.duration_s)}, {gpus} {what}{thinned})"
        )

    @Slot()
    def back_to_live(self) -> None:
        self.recording = None
        self._gpu_key = None
        self._clock_max = 0.0
        self._set_mode()
