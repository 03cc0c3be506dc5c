"""Pool work steps aside while the window paints, so a repaint does not wait for the interpreter.

A repaint calls into Python hundreds of times (a table's ``data()`` for every role of every visible
cell: ~1,100 calls for the Fleet table), and each call takes the interpreter back from a pool thread that
is parsing or checking in Python: on a two-core box ~0.05-0.15 ms each, so a paint of 20 ms of work took
60-90 ms (benchmarks/gui_handlers.py, Fleet: open 5,000 reports). The window marks each of its paints
(``QEvent.UpdateRequest``), and pool work, at its next step (:class:`rigcheck.core.steps.Steps` asks
whether to cancel between two items), waits until the paint is over, never longer than
:data:`MAX_PAUSE_S`. Work that takes no steps is not paused.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QEvent, QObject, QTimer

#: the longest a pool thread waits for one paint (a paint that never ends does not stop the work)
MAX_PAUSE_S = 0.1

_painted = threading.Event()
_painted.set()


def step_aside() -> None:
    """On a pool thread, between two steps: wait while the window paints (at most MAX_PAUSE_S)."""
    if not _painted.is_set():
        _painted.wait(MAX_PAUSE_S)


def painting() -> bool:
    """Whether the window is painting now (pool work waits at its next step)."""
    return not _painted.is_set()


class PaintYield(QObject):
    """An event filter for the top-level window: a paint starts, pool steps wait; the next turn of the
    event loop, after the paint, lets them go on."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.UpdateRequest and _painted.is_set():
            _painted.clear()
            QTimer.singleShot(0, _painted.set)
        return False


def install(window: QObject) -> PaintYield:
    """Make pool work step aside while ``window`` paints; the filter lives as long as the window."""
    watcher = PaintYield(window)
    window.installEventFilter(watcher)
    return watcher


__all__ = ["MAX_PAUSE_S", "PaintYield", "install", "painting", "step_aside"]
