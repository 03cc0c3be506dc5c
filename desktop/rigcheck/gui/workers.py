"""Run core work off the GUI thread and hand the frozen result back through a signal."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal


class _Signals(QObject):
    finished = Signal(object)
    failed = Signal(str)


class Job(QRunnable):
    """A function to run on the thread pool; ``signals.finished`` carries its (immutable) result."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        super().__init__()
        self._fn = fn
        self.signals = _Signals()

    def run(self) -> None:
        try:
            result = self._fn()
        except Exception as exc:  # noqa: BLE001 - reported to the user, never lost
            self.signals.failed.emit(f"{type(exc).__name__}: {exc}")
        else:
            self.signals.finished.emit(result)


def submit(
    pool: QThreadPool, fn: Callable[[], Any], on_done: Callable[[Any], None], on_error: Callable[[str], None]
) -> Job:
    job = Job(fn)
    job.signals.finished.connect(on_done)
    job.signals.failed.connect(on_error)
    pool.start(job)
    return job


def report_exception(exc: BaseException, what: str, *, debug: bool) -> None:
    """One line on stderr for an unexpected error in the app; the whole traceback only with --debug."""
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    sys.stderr.write(f"rigcheck: error: {what}: {type(exc).__name__}: {exc} (run with --debug for details)\n")
