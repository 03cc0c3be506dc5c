"""Monitor: live GPU utilisation, memory, power, temperature and clocks, CPU and RAM; or a replay.

One card per metric, each with its current value in large type and a chart on a fixed, meaningful
scale (utilisation 0–100 %, memory 0–capacity, power 0–above the limit, temperature up past the
slowdown threshold), the time axis in seconds or minutes ending at "now". Every GPU has its colour and
a legend entry above the cards, so none is ever hidden behind another.

Live: sampling runs on its own thread (a QTimer inside a worker QObject); each immutable Sample
crosses to the GUI thread through a queued signal and goes into a bounded History.
Replay: a CSV recorded by ``rigcheck monitor --csv`` (read by :mod:`rigcheck.core.replay`), scrubbed
with a slider; dropping such a file on the window opens it here. A snapshot of another machine has no
live source: the page says so once and offers Replay instead of empty charts.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QMetaObject, Qt, QThread, Signal, Slot
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSlider,
    QSystemTrayIcon,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.errors import InputError
from rigcheck.core.fileio import LineFile
from rigcheck.core.monitor import Alert, History, Sample, alerts, row
from rigcheck.core.replay import Recording
from rigcheck.gui.charts import time_label
from rigcheck.gui.elide import ElidedLabel
from rigcheck.gui.i18n import tr
from rigcheck.gui.pages.monitor_charts import CPU_PEN, RAM_PEN, MetricCard, MetricCharts, _View, gpu_pen
from rigcheck.gui.pages.monitor_record import CsvRecording, _csv_line
from rigcheck.gui.pages.monitor_replay import READ_PROGRESS_EVERY_S, Replay, _minutes
from rigcheck.gui.pages.monitor_sampler import SamplerWorker
from rigcheck.gui.state import NUMBER_RANGES, AppState
from rigcheck.gui.widgets import Card, FlowLayout, esc, heading, muted, one_layout_pass, tooltip
from rigcheck.gui.workers import Task

WINDOWS = ((60, "1 min"), (300, "5 min"), (900, "15 min"), (3600, "1 h"))
#: the longest GPU name a legend chip shows whole
MAX_NAME_CHARS = 60
#: below this width the cards go two to a row, below NARROW one
WIDE, NARROW = 1500, 640
# READ_PROGRESS_EVERY_S: read from here by tests
__all__ = ["READ_PROGRESS_EVERY_S", "MonitorPage"]


class MonitorPage(Replay, MetricCharts, CsvRecording, QWidget):
    interval_changed = Signal(float)
    pause_changed = Signal(bool)
    stop_requested = Signal()
    #: a replay finished reading: True when it opened, False when refused or cancelled
    replay_finished = Signal(bool)

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        interval = state.number("monitor/interval", 1.0, *NUMBER_RANGES["monitor/interval"])
        window = int(state.number("monitor/window", 300, *NUMBER_RANGES["monitor/window"]))
        self.history = History(window_s=window, interval_s=interval)
        self.recording: Recording | None = None
        self.paused = False
        self.alerts: tuple[Alert, ...] = ()
        self._thread: QThread | None = None
        self._worker: SamplerWorker | None = None
        #: sampling threads told to stop and not yet joined (see :meth:`_stop_sampling`)
        self._ending: list[tuple[QThread, SamplerWorker | None]] = []
        self._csv: tuple[LineFile, list[str]] | None = None
        #: the recording being read on the pool, and its number (a later open or Cancel makes it stale)
        self._reading: Task | None = None
        self._generation = 0
        self._announced: set[str] = set()
        self._gpu_key: tuple[tuple[int, str], ...] | None = None
        self._clock_max = 0.0
        self._columns = 0
        self._hover: float | None = None
        self._is_live = state.is_live
        self._replay_name = ""

        page = QVBoxLayout(self)
        page.setContentsMargins(16, 12, 16, 12)
        page.setSpacing(8)
        page.addWidget(heading(tr("Monitor")))
        self.scope = muted(tr("Live readings of this computer, sampled off the interface thread."))
        page.addWidget(self.scope)

        controls = QHBoxLayout()
        self.window_combo = QComboBox()
        self.window_combo.setAccessibleName(tr("Time window"))
        for seconds, text in WINDOWS:
            self.window_combo.addItem(text, seconds)
        self.window_combo.setCurrentIndex(max(self.window_combo.findData(window), 0))
        self.interval = QDoubleSpinBox()
        self.interval.setRange(0.1, 10.0)
        self.interval.setSingleStep(0.1)
        self.interval.setDecimals(1)
        self.interval.setSuffix(" s")
        self.interval.setValue(interval)
        self.interval.setAccessibleName(tr("Sampling interval in seconds"))
        self.pause_button = QPushButton(tr("Pause"))
        self.pause_button.setCheckable(True)
        self.record_button = QPushButton(tr("Record to CSV…"))
        self.record_button.setCheckable(True)
        self.clear_button = QPushButton(tr("Clear"))
        self.replay_button = QPushButton(tr("Replay a recording…"))
        self.replay_button.setToolTip(
            tr("Open a CSV recorded with 'rigcheck monitor --csv' (or Record to CSV) and scrub through it")
        )
        self._live_widgets: list[QWidget] = []
        #: hidden when there is nothing to show (a snapshot, no recording open)
        self._data_widgets: list[QWidget] = [self.replay_button]
        for text, widget in ((tr("Window"), self.window_combo), (tr("Every"), self.interval)):
            label = QLabel(text)
            label.setBuddy(widget)
            controls.addWidget(label)
            controls.addWidget(widget)
            if widget is self.interval:
                self._live_widgets += [label, widget]
            else:
                self._data_widgets += [label, widget]
        controls.addStretch(1)
        for button in (self.pause_button, self.record_button, self.clear_button):
            controls.addWidget(button)
            self._live_widgets.append(button)
        controls.addWidget(self.replay_button)
        page.addLayout(controls)

        # replay: which file, a slider over its rows, the position, and the way back to live
        self.replay_bar = QWidget()
        bar = QHBoxLayout(self.replay_bar)
        bar.setContentsMargins(0, 0, 0, 0)
        self.replay_label = ElidedLabel(mode=Qt.TextElideMode.ElideMiddle)  # a 4096-character file name
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setAccessibleName(tr("Position in the recording"))
        self.position_label = QLabel()
        self.live_button = QPushButton(tr("Back to live"))
        bar.addWidget(self.replay_label)
        bar.addWidget(self.slider, 1)
        bar.addWidget(self.position_label)
        bar.addWidget(self.live_button)
        self.replay_bar.setVisible(False)
        page.addWidget(self.replay_bar)

        # a recording being read (a gigabyte takes a while): its name, how far, and a way to stop
        self.reading_bar = QWidget()
        reading = QHBoxLayout(self.reading_bar)
        reading.setContentsMargins(0, 0, 0, 0)
        self.reading_label = ElidedLabel(mode=Qt.TextElideMode.ElideMiddle)
        self.reading_progress = QProgressBar()
        self.reading_progress.setRange(0, 1000)
        self.reading_progress.setTextVisible(False)
        self.reading_progress.setAccessibleName(tr("Progress"))
        self.reading_cancel = QPushButton(tr("Cancel"))
        self.reading_cancel.clicked.connect(self.cancel_reading)
        reading.addWidget(self.reading_label, 1)
        reading.addWidget(self.reading_progress, 1)
        reading.addWidget(self.reading_cancel)
        self.reading_bar.setVisible(False)
        page.addWidget(self.reading_bar)

        # a snapshot has nothing live: say so once, offer Replay
        self.notice = Card()
        self.notice_text = QLabel()
        self.notice_text.setWordWrap(True)
        self.notice_text.setTextFormat(Qt.TextFormat.PlainText)
        self.notice_button = QPushButton(tr("Replay a recording…"))
        self.notice.body.addWidget(self.notice_text)
        self.notice.body.addWidget(self.notice_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.notice.setVisible(False)
        page.addWidget(self.notice)
        self.filler = QWidget()  # takes the cards' room when there are none, so the notice stays on top
        page.addWidget(self.filler, 1)

        self.error_label = QLabel()
        self.error_label.setTextFormat(Qt.TextFormat.PlainText)
        self.error_label.setWordWrap(True)
        self.error_label.setAccessibleName(tr("Problem"))
        self.error_label.setVisible(False)
        page.addWidget(self.error_label)

        self.legend_box = QWidget()
        self.legend = FlowLayout(self.legend_box, spacing=16)
        page.addWidget(self.legend_box)
        self.readout = QLabel(tr("Move the mouse over a chart to read the values at that moment."))
        self.readout.setAccessibleName(tr("Values under the mouse"))
        self.readout.setWordWrap(True)
        page.addWidget(self.readout)
        self.alert_label = QLabel()
        self.alert_label.setWordWrap(True)
        self.alert_label.setAccessibleName(tr("Alerts"))
        page.addWidget(self.alert_label)

        self.cards_area = QScrollArea()
        self.cards_area.setWidgetResizable(True)
        self.cards_area.setFrameShape(QScrollArea.Shape.NoFrame)
        self.cards_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        holder = QWidget()
        self.grid = QGridLayout(holder)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(10)
        self.cards_area.setWidget(holder)
        page.addWidget(self.cards_area, 1)
        self.cards: dict[str, MetricCard] = {}

        self.window_combo.currentIndexChanged.connect(self._window_changed)
        self.interval.valueChanged.connect(self._interval_changed)
        self.pause_button.toggled.connect(self.set_paused)
        self.record_button.toggled.connect(self._record_toggled)
        self.clear_button.clicked.connect(self.clear)
        self.replay_button.clicked.connect(self._replay_dialog)
        self.notice_button.clicked.connect(self._replay_dialog)
        self.live_button.clicked.connect(self.back_to_live)
        self.slider.valueChanged.connect(lambda _v: self.redraw())
        state.machine_changed.connect(self._machine_changed)
        self._set_mode()

    # -- modes -----------------------------------------------------------------------------------

    @property
    def mode(self) -> str:
        """ "replay" (a recording is open), "live" (this computer) or "none" (a snapshot, nothing open)."""
        if self.recording is not None:
            return "replay"
        return "live" if self._is_live else "none"

    def _set_mode(self) -> None:
        mode = self.mode
        with one_layout_pass(self):
            self.replay_bar.setVisible(mode == "replay")
            self.notice.setVisible(mode == "none")
            for widget in self._live_widgets:
                widget.setVisible(mode == "live")
            for widget in (self.cards_area, self.legend_box, self.readout, self.scope, *self._data_widgets):
                widget.setVisible(mode != "none")
            self.filler.setVisible(mode == "none")
            self.alert_label.setVisible(mode == "live")
        if mode == "none":
            self.notice_text.setText(
                tr(
                    "Nothing to read live: the machine shown is a saved snapshot, not this computer. "
                    "To see how it ran, record it there with 'rigcheck monitor --csv run.csv', then "
                    "replay the file here or drop it on this window."
                )
            )
            self._quiet()
        elif mode == "live":
            self.scope.setText(tr("Live readings of this computer, sampled off the interface thread."))
            if self.isVisible():
                self.start()
        self.redraw()

    @Slot(object, str, bool)
    def _machine_changed(self, _machine: object, _label: str, is_live: bool) -> None:
        self._is_live = is_live
        self._set_mode()

    def retranslate(self) -> None:
        """After a language switch: the sampling thread, the history and an open replay all stay; the
        texts made from them are written again."""
        if self.recording is not None:
            self.replay_label.setText(self._replay_text(self.recording))
            self.scope.setText(tr("A recording, replayed: drag the slider to move through it."))
        elif self.mode == "live":
            self.scope.setText(tr("Live readings of this computer, sampled off the interface thread."))
        else:
            self._set_mode()
        self.redraw()

    # -- sampling thread -------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None or self.mode != "live":
            return
        self._thread = QThread(self)
        self._worker = SamplerWorker(self.state.sampler_factory, self.interval.value())
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker.start)
        self._worker.sampled.connect(self.add_sample)
        self._worker.failed.connect(self._failed)
        self.interval_changed.connect(self._worker.set_interval)
        self.pause_changed.connect(self._worker.set_paused)
        self.stop_requested.connect(self._worker.stop)
        self._thread.start()

    def shutdown(self) -> None:
        """Stop sampling and join every sampling thread (the window calls this when it closes); a
        recording being read stops at its next step."""
        self._quiet()
        ending, self._ending = self._ending, []
        for thread, worker in ending:
            if not thread.wait(5000):
                thread.quit()
                thread.wait(5000)
            if worker is not None:
                worker.deleteLater()

    def _quiet(self) -> None:
        """Stop reading a recording, recording to CSV and sampling, without waiting for the sampler."""
        if self._reading is not None:
            self._reading.cancel()
            self._generation += 1
            self._end_reading()
        self._stop_recording()
        self._stop_sampling()

    def _stop_sampling(self) -> None:
        """Tell the sampling thread to stop, and go on: its worker closes the sampler (NVML's shutdown
        and a sample under way can take tens of ms on a GPU machine) and then ends its own loop, off the
        GUI thread. Opening a replay or another machine's snapshot never waits on it; the thread is
        joined when it has finished, or by :meth:`shutdown` when the window closes first."""
        thread, worker = self._thread, self._worker
        if thread is None:
            return
        self._thread = self._worker = None
        for signal in (self.interval_changed, self.pause_changed, self.stop_requested):
            signal.disconnect()
        if worker is not None:
            worker.sampled.disconnect(self.add_sample)  # a sample already on its way is not shown
            QMetaObject.invokeMethod(worker, "stop", Qt.ConnectionType.QueuedConnection)
        self._ending.append((thread, worker))
        thread.finished.connect(self._reap)

    @Slot()
    def _reap(self) -> None:
        """A stopped sampling thread has finished: forget it (its worker is deleted with it)."""
        for thread, worker in [entry for entry in self._ending if entry[0].isFinished()]:
            self._ending.remove((thread, worker))
            thread.wait()  # finished: returns at once, and the thread's resources are released
            if worker is not None:
                worker.deleteLater()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.start()  # sampling then goes on while the page is hidden, so alerts still fire

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._arrange_cards()

    # -- data ------------------------------------------------------------------------------------

    @Slot(object)
    def add_sample(self, sample: Sample) -> None:
        self.history.append(sample)
        if self._csv is not None:
            target, names = self._csv
            values = row(sample)
            try:
                target.write(_csv_line(["" if values.get(n) is None else values[n] for n in names]))
            except InputError as exc:  # a full disk: the rows so far are whole; recording stops
                self._stop_recording()
                self.alert_label.setText(esc(f"✘ {exc}"))
        if not self.paused and self.mode == "live":
            self.redraw()
        self._check_alerts()

    def _source(self) -> tuple[History | Recording | None, float, int]:
        """What the cards show: the history or the recording, the time at the right edge, its row."""
        if self.recording is not None:
            index = self.slider.value()
            return self.recording, float(self.recording.t[index]), index
        latest = self.history.latest()
        if latest is None or self.mode != "live":
            return None, 0.0, 0
        return self.history, latest.t, len(self.history) - 1

    def _gpus(self) -> list[tuple[int, str]]:
        if self.recording is not None:
            machine = self.state.machine
            named = machine is not None and len(machine.gpus) == len(self.recording.gpus)
            return [
                (i, machine.gpus[n].name if named and machine is not None else f"GPU {i}")
                for n, i in enumerate(self.recording.gpus)
            ]
        latest = self.history.latest()
        return [(g.index, g.name) for g in latest.gpus] if latest is not None else []

    def _make_cards(self, gpus: list[tuple[int, str]]) -> None:
        key = tuple(gpus)
        if key == self._gpu_key:
            return
        self._gpu_key = key
        for card in self.cards.values():
            self.grid.removeWidget(card)
            card.hide()  # not setParent(None): that would make it a top-level window until deleted
            card.deleteLater()
        self.cards = {}
        while self.legend.count():
            item = self.legend.takeAt(0)
            if item is not None and item.widget() is not None:
                item.widget().deleteLater()
        specs = [
            ("util", tr("GPU utilisation"), "%"),
            ("memory", tr("GPU memory"), "GiB"),
            ("power", tr("GPU power"), "W"),
            ("temperature", tr("GPU temperature"), "°C"),
            ("clock", tr("GPU clock"), "MHz"),
        ] if gpus else []  # fmt: skip
        for key_, title, unit in [*specs, ("host", tr("CPU and RAM"), "%")]:
            card = MetricCard(title, unit)
            card.chart.hovered.connect(self._hovered)
            self.cards[key_] = card
        for index, name in gpus:
            # the name is the recording's (anyone's text): escaped inside our own markup
            # a 4096-character name is cut (whole in the tooltip), or the chip would widen the window
            short = name if len(name) <= MAX_NAME_CHARS else name[: MAX_NAME_CHARS - 1] + "…"
            # a recording without GPU names calls them "GPU 0": said once, not "GPU 0 · GPU 0"
            named = f"GPU {index}"
            if short.strip() and short != named:
                named += f" · {esc(short)}"
            chip = QLabel(f"<span style='color:{gpu_pen(index)}'>■</span> {named}")
            chip.setTextFormat(Qt.TextFormat.RichText)
            chip.setAccessibleName(f"GPU {index} {short}")
            if short != name:
                chip.setToolTip(tooltip(name))
            self.legend.addWidget(chip)
        for text, colour in ((tr("CPU"), CPU_PEN), (tr("RAM"), RAM_PEN)):
            chip = QLabel(f"<span style='color:{colour}'>■</span> {text}")
            self.legend.addWidget(chip)
        if not gpus and self.mode == "live":
            self.scope.setText(tr("No GPU to monitor: showing CPU and RAM."))
        self._columns = 0
        self._arrange_cards()

    def _arrange_cards(self) -> None:
        width = self.cards_area.viewport().width() or self.width()
        count = 3 if width >= WIDE else 2 if width >= NARROW else 1
        count = min(count, max(1, len(self.cards)))
        if count == self._columns and all(self.grid.indexOf(c) >= 0 for c in self.cards.values()):
            return
        self._columns = count
        for card in self.cards.values():
            self.grid.removeWidget(card)
        for n, card in enumerate(self.cards.values()):
            self.grid.addWidget(card, n // count, n % count)
        for column in range(3):
            self.grid.setColumnStretch(column, 1 if column < count else 0)

    def redraw(self) -> None:
        source, now, index = self._source()
        if source is None:
            for card in self.cards.values():
                card.chart.set_data([], [], float(self.window_combo.currentData()))
            return
        self._make_cards(self._gpus())
        window = float(self.window_combo.currentData())
        t, _ = source.series("time")
        # the rows on screen: from just before the window's left edge to the row at its right edge
        lo = max(0, int(np.searchsorted(t, now - window, side="left")) - 1)
        hi = index + 1
        at = min(max(self._hover_index(t, now, index), lo), hi - 1) - lo
        rows = len(t)
        t = t[lo:hi]
        x = t - now
        now_label = tr("now") if self.recording is None else _minutes(now)
        for card in self.cards.values():
            card.chart.now_label = now_label
        gpus = self._gpus()
        view = _View(source, t, x, at, window, lo, hi, rows)
        if gpus:
            self._draw_util(view, gpus)
            self._draw_memory(view, gpus)
            self._draw_power(view, gpus)
            self._draw_temperature(view, gpus)
            self._draw_clock(view, gpus)
        self._draw_host(view)
        if self.recording is not None:
            self.position_label.setText(f"{_minutes(now)} / {_minutes(self.recording.duration_s)}")

    def _hover_index(self, t: np.ndarray, now: float, index: int) -> int:
        if self._hover is None or not len(t):
            return index
        target = now + self._hover
        return int(np.clip(np.searchsorted(t, target), 0, len(t) - 1))

    @Slot(object)
    def _hovered(self, x: float | None) -> None:
        self._hover = x
        for card in self.cards.values():
            card.chart.set_cursor(x)
        source = self._source()[0]
        if x is None or source is None:
            self.readout.setText(tr("Move the mouse over a chart to read the values at that moment."))
        else:
            self.readout.setText(tr("Values at") + f" {time_label(x)}")
        self.redraw()

    def _check_alerts(self) -> None:
        self.alerts = alerts(self.history)
        if not self.alerts:
            self.alert_label.setText(f"✔ {tr('No alerts')}")
            return
        self.alert_label.setText(
            "<br>".join(f"▲ <b>{tr(a.kind.replace('_', ' '))}</b>: {esc(a.message)}" for a in self.alerts)
        )
        window = self.window()
        for alert in self.alerts:
            key = f"{alert.kind}:{alert.gpu_index}"
            if key in self._announced:
                continue
            self._announced.add(key)
            if not window.isVisible() and QSystemTrayIcon.isSystemTrayAvailable():
                tray = QSystemTrayIcon(window.windowIcon(), self)
                tray.show()
                tray.showMessage("RigCheck", alert.message, QSystemTrayIcon.MessageIcon.Warning)
        self._announced &= {f"{a.kind}:{a.gpu_index}" for a in self.alerts}

    @Slot(str)
    def _failed(self, message: str) -> None:
        self.alert_label.setText(f"✘ {tr('Sampling failed')}: {esc(message)}")

    # -- controls --------------------------------------------------------------------------------

    @Slot(bool)
    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self.pause_button.setText(tr("Resume") if paused else tr("Pause"))
        self.pause_changed.emit(paused)

    @Slot()
    def clear(self) -> None:
        self.history.clear()
        self.redraw()

    @Slot(int)
    def _window_changed(self, _index: int) -> None:
        seconds = int(self.window_combo.currentData())
        self.state.settings.setValue("monitor/window", seconds)
        self.history.resize(seconds, self.interval.value())
        self.redraw()

    @Slot(float)
    def _interval_changed(self, value: float) -> None:
        self.state.settings.setValue("monitor/interval", value)
        self.history.resize(float(self.window_combo.currentData()), value)
        self.interval_changed.emit(value)
