"""Monitor: live GPU utilisation, memory, power (against the limit), temperature and clocks; CPU and RAM.

Sampling runs on its own thread (a QTimer inside a worker QObject); each immutable Sample crosses to
the GUI thread through a queued signal and goes into a bounded History. Curves are created once and
updated in place with peak downsampling and clipping to the view, as pyqtgraph's scrolling examples do.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSystemTrayIcon,
    QVBoxLayout,
    QWidget,
)

from rigcheck.core.monitor import Alert, History, Sample, alerts, columns, row
from rigcheck.gui.i18n import tr
from rigcheck.gui.state import AppState
from rigcheck.gui.widgets import esc, heading, muted

WINDOWS = ((60, "1 min"), (300, "5 min"), (900, "15 min"), (3600, "1 h"))
PENS = ("#4f7fd9", "#d9913c", "#3aa889", "#b35cc4", "#d45b6a", "#8c8f96", "#c9b22e", "#4fb6d9")
#: (title, unit, series suffix, scale to display unit)
PLOTS = (
    ("Utilization", "%", "util_percent", 1.0),
    ("Memory used", "GiB", "mem_used_bytes", 1 / 1024**3),
    ("Power", "W", "power_w", 1.0),
    ("Temperature", "°C", "temp_c", 1.0),
    ("SM clock", "MHz", "sm_clock_mhz", 1.0),
)


class SamplerWorker(QObject):
    """Lives on the sampling thread: owns the sampler and its timer; emits one Sample per tick."""

    sampled = Signal(object)
    failed = Signal(str)

    def __init__(self, factory: Any, interval_s: float) -> None:
        super().__init__()
        self._factory = factory
        self._interval_ms = int(interval_s * 1000)
        self._sampler: Any = None
        self._timer: QTimer | None = None

    @Slot()
    def start(self) -> None:
        try:
            self._sampler = self._factory()
        except Exception as exc:  # noqa: BLE001 - shown to the user instead of killing the thread
            self.failed.emit(f"{type(exc).__name__}: {exc}")
            return
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self.tick)
        self._timer.start(self._interval_ms)
        self.tick()

    @Slot()
    def tick(self) -> None:
        if self._sampler is None:
            return
        try:
            self.sampled.emit(self._sampler.sample())
        except Exception as exc:  # noqa: BLE001 - the sampler promises not to raise; if it does, say so
            self.failed.emit(f"{type(exc).__name__}: {exc}")

    @Slot(float)
    def set_interval(self, interval_s: float) -> None:
        self._interval_ms = int(interval_s * 1000)
        if self._timer is not None:
            self._timer.setInterval(self._interval_ms)

    @Slot(bool)
    def set_paused(self, paused: bool) -> None:
        if self._timer is not None:
            if paused:
                self._timer.stop()
            else:
                self._timer.start(self._interval_ms)

    @Slot()
    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer.deleteLater()
            self._timer = None
        if self._sampler is not None:
            self._sampler.close()
            self._sampler = None


class MonitorPage(QWidget):
    interval_changed = Signal(float)
    pause_changed = Signal(bool)
    stop_requested = Signal()

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state = state
        interval = float(state.settings.value("monitor/interval", 1.0))  # type: ignore[arg-type]
        window = int(state.settings.value("monitor/window", 300))  # type: ignore[arg-type]
        self.history = History(window_s=window, interval_s=interval)
        self.paused = False
        self.alerts: tuple[Alert, ...] = ()
        self._thread: QThread | None = None
        self._worker: SamplerWorker | None = None
        self._curves: dict[str, pg.PlotDataItem] = {}
        self._limit_lines: dict[int, pg.InfiniteLine] = {}
        self._gpu_count = -1
        self._csv: tuple[TextIO, Any, list[str]] | None = None
        self._announced: set[str] = set()

        page = QVBoxLayout(self)
        page.setContentsMargins(16, 12, 16, 12)
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
        for text, widget in ((tr("Window"), self.window_combo), (tr("Every"), self.interval)):
            label = QLabel(text)
            label.setBuddy(widget)
            controls.addWidget(label)
            controls.addWidget(widget)
        controls.addStretch(1)
        for button in (self.pause_button, self.record_button, self.clear_button):
            controls.addWidget(button)
        page.addLayout(controls)

        self.readout = QLabel(tr("Move the mouse over a plot to read the values at that moment."))
        self.readout.setAccessibleName(tr("Values under the mouse"))
        self.readout.setWordWrap(True)
        page.addWidget(self.readout)
        self.alert_label = QLabel()
        self.alert_label.setWordWrap(True)
        self.alert_label.setAccessibleName(tr("Alerts"))
        page.addWidget(self.alert_label)

        pg.setConfigOptions(antialias=False, foreground=self.palette().windowText().color())
        self.plots_widget = pg.GraphicsLayoutWidget()
        self.plots_widget.setBackground(self.palette().base().color())
        page.addWidget(self.plots_widget, 1)
        self.plots: dict[str, pg.PlotItem] = {}
        self._crosshairs: list[pg.InfiniteLine] = []
        for row_index, (title, unit, key, _scale) in enumerate((*PLOTS, ("CPU and RAM", "%", "host", 1.0))):
            plot = self.plots_widget.addPlot(row=row_index, col=0)
            plot.setTitle(f"{tr(title)} ({unit})", size="9pt")
            plot.showGrid(x=True, y=True, alpha=0.2)
            plot.setDownsampling(mode="peak")
            plot.setClipToView(True)
            plot.setMouseEnabled(x=False, y=False)
            plot.hideButtons()
            # No setXLink: redraw() sets every plot's range itself, and linked views recurse through
            # pyqtgraph's viewRangeChanged, where PySide6 6.12 hit a refcount crash (none_dealloc).
            line = pg.InfiniteLine(
                angle=90, movable=False, pen=pg.mkPen((128, 128, 128), style=Qt.PenStyle.DashLine)
            )
            line.setVisible(False)
            plot.addItem(line, ignoreBounds=True)
            self._crosshairs.append(line)
            self.plots[key] = plot
        self.plots["host"].addLegend(offset=(10, 5))
        self._curves["cpu_percent"] = self.plots["host"].plot(
            pen=pg.mkPen(PENS[0], width=1.5), name=tr("CPU %")
        )
        self._curves["ram_percent"] = self.plots["host"].plot(
            pen=pg.mkPen(PENS[1], width=1.5), name=tr("RAM %")
        )
        self._mouse_proxy = pg.SignalProxy(
            self.plots_widget.scene().sigMouseMoved, rateLimit=30, slot=self._mouse_moved
        )

        self.window_combo.currentIndexChanged.connect(self._window_changed)
        self.interval.valueChanged.connect(self._interval_changed)
        self.pause_button.toggled.connect(self.set_paused)
        self.record_button.toggled.connect(self._record_toggled)
        self.clear_button.clicked.connect(self.clear)
        state.machine_changed.connect(self._machine_changed)
        self._machine_changed(state.machine, state.machine_label, state.is_live)

    # -- sampling thread -------------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
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
        """Stop sampling and join the thread (the window calls this when it closes)."""
        self._stop_recording()
        if self._thread is None:
            return
        self.stop_requested.emit()
        self._thread.quit()
        self._thread.wait(5000)
        if self._worker is not None:
            self._worker.deleteLater()
        self._thread = None
        self._worker = None

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self.start()  # sampling then goes on while the page is hidden, so alerts still fire

    # -- data ------------------------------------------------------------------------------------

    @Slot(object)
    def add_sample(self, sample: Sample) -> None:
        self.history.append(sample)
        if self._csv is not None:
            handle, writer, names = self._csv
            values = row(sample)
            writer.writerow(["" if values.get(n) is None else values[n] for n in names])
            handle.flush()
        if len(sample.gpus) != self._gpu_count:
            self._make_gpu_curves(sample)
        if not self.paused:
            self.redraw()
        self._check_alerts()

    def _make_gpu_curves(self, sample: Sample) -> None:
        for key, curve in list(self._curves.items()):
            if key.startswith("gpu"):
                curve.getViewBox().removeItem(curve)
                del self._curves[key]
        for line in self._limit_lines.values():
            self.plots["power_w"].removeItem(line)
        self._limit_lines.clear()
        for title, _unit, suffix, _scale in PLOTS:
            plot = self.plots[suffix]
            if plot.legend is None and sample.gpus:
                plot.addLegend(offset=(10, 5))
            for gpu in sample.gpus:
                pen = pg.mkPen(PENS[gpu.index % len(PENS)], width=1.5)
                self._curves[f"gpu{gpu.index}_{suffix}"] = plot.plot(
                    pen=pen, name=f"GPU {gpu.index} ({tr(title)})"
                )
        self._gpu_count = len(sample.gpus)
        if not sample.gpus:
            self.scope.setText(tr("No GPU to monitor: showing CPU and RAM."))

    def redraw(self) -> None:
        latest = self.history.latest()
        if latest is None:
            return
        now = latest.t
        for key, curve in self._curves.items():
            if key == "ram_percent":
                t, used = self.history.series("ram_used_bytes")
                total = latest.ram_total_bytes or 0
                values = used / total * 100 if total else used * np.nan
            else:
                t, values = self.history.series(key)
                scale = next((s for _title, _unit, suffix, s in PLOTS if key.endswith(suffix)), 1.0)
                values = values * scale
            curve.setData(t - now, values, connect="finite")
        window = float(self.window_combo.currentData())
        for plot in self.plots.values():
            plot.setXRange(-window, 0, padding=0)
        for gpu in latest.gpus:
            if gpu.power_limit_watts:
                line = self._limit_lines.get(gpu.index)
                if line is None:
                    pen = pg.mkPen(PENS[gpu.index % len(PENS)], style=Qt.PenStyle.DashLine)
                    line = pg.InfiniteLine(
                        angle=0, movable=False, pen=pen, label=f"GPU {gpu.index} {tr('limit')}"
                    )
                    self.plots["power_w"].addItem(line)
                    self._limit_lines[gpu.index] = line
                line.setValue(gpu.power_limit_watts)

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
        for curve in self._curves.values():
            curve.setData([], [])

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

    @Slot(bool)
    def _record_toggled(self, on: bool) -> None:
        if not on:
            self._stop_recording()
            return
        name, _ = QFileDialog.getSaveFileName(
            self, tr("Record to CSV"), "rigcheck-monitor.csv", "CSV (*.csv)"
        )
        if not name:
            self.record_button.setChecked(False)
            return
        self.record_to(Path(name))

    def record_to(self, path: Path) -> None:
        latest = self.history.latest()
        try:
            handle = path.open("w", newline="", encoding="utf-8")
        except OSError as exc:
            self.alert_label.setText(esc(f"✘ {path}: {exc.strerror or exc}"))
            self.record_button.setChecked(False)
            return
        names = columns(latest) if latest is not None else ["time", "wall", "cpu_percent", "ram_used_bytes"]
        writer = csv.writer(handle)
        writer.writerow(names)
        self._csv = (handle, writer, names)
        self.record_button.setText(tr("Stop recording"))
        self.record_button.blockSignals(True)  # already recording: do not ask for a file again
        self.record_button.setChecked(True)
        self.record_button.blockSignals(False)

    def _stop_recording(self) -> None:
        if self._csv is not None:
            self._csv[0].close()
            self._csv = None
        self.record_button.setText(tr("Record to CSV…"))

    @Slot(object, str, bool)
    def _machine_changed(self, _machine: object, label: str, is_live: bool) -> None:
        if not is_live:
            self.scope.setText(
                tr("Live readings of this computer: a snapshot cannot be monitored.") + f" ({label})"
            )

    def _mouse_moved(self, event: tuple[Any, ...]) -> None:
        position = event[0]
        for plot in self.plots.values():
            if plot.sceneBoundingRect().contains(position):
                x = plot.vb.mapSceneToView(position).x()
                break
        else:
            return
        latest = self.history.latest()
        if latest is None:
            return
        for line in self._crosshairs:
            line.setVisible(True)
            line.setValue(x)
        target = latest.t + x
        samples = self.history.samples()
        nearest = min(samples, key=lambda s: abs(s.t - target))
        parts = [f"{x:.1f} s"]
        for gpu in nearest.gpus:
            util = f"{gpu.utilization_percent:.0f}%" if gpu.utilization_percent is not None else "?"
            power = f"{gpu.power_watts:.0f} W" if gpu.power_watts is not None else "?"
            temp = f"{gpu.temperature_c:.0f}°C" if gpu.temperature_c is not None else "?"
            parts.append(f"GPU {gpu.index}: {util} · {power} · {temp}")
        if nearest.cpu_percent is not None:
            parts.append(f"CPU {nearest.cpu_percent:.0f}%")
        self.readout.setText("   ".join(parts))
