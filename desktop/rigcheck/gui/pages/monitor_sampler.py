"""The Monitor page's sampling thread: a worker QObject moved to its own QThread, owning the sampler and
its QTimer, that emits one immutable Sample per tick (queued to the GUI thread)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, QThread, QTimer, Signal, Slot


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
        # ends the thread's loop only after the sampler is closed: a quit() from the GUI thread could end
        # the loop before this queued call ran, leaving the sampler open
        app = QCoreApplication.instance()
        thread = QThread.currentThread()
        if app is not None and thread is not app.thread():
            thread.quit()
