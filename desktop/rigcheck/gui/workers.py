"""Run core work off the GUI thread and hand the frozen result back through a signal.

:func:`submit` runs a plain function; :func:`submit_task` one that takes a
:class:`rigcheck.core.steps.Steps` (progress a few times a second, and a :meth:`Task.cancel` that stops
it between two steps). Either way only the result is applied on the GUI thread.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

from rigcheck.core.steps import Cancelled, Steps
from rigcheck.gui.paint_yield import step_aside


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
    pool: QThreadPool,
    fn: Callable[[], Any],
    on_done: Callable[[Any], None],
    on_error: Callable[[str], None],
    owner: QObject | None = None,
) -> Job:
    """Run ``fn`` on ``pool``; its result or error reaches ``on_done`` / ``on_error`` on the GUI thread,
    unless ``owner`` (the page the callbacks fill) was deleted meanwhile (a window closed while a job ran)."""
    job = Job(fn)
    signals = job.signals
    if owner is not None:
        on_done, on_error = _while_alive(owner, on_done), _while_alive(owner, on_error)
    signals.finished.connect(on_done)
    signals.failed.connect(on_error)
    # The result reaches the GUI thread as a queued event addressed to ``signals``. Keep it alive until
    # that event has been handled: otherwise the pool's auto-deleted job can drop the last reference
    # first and Qt delivers the event to a freed Python wrapper (a segfault in Sbk_GetPyOverride, seen
    # under pytest-qt about one run in seven).
    _in_flight.add(signals)

    def release(_value: object = None) -> None:
        QTimer.singleShot(0, lambda: _in_flight.discard(signals))

    signals.finished.connect(release)
    signals.failed.connect(release)
    _start(pool, job)
    return job


#: the jobs submitted inside :func:`held_starts` on the GUI thread (one list while a block runs)
_held: list[list[tuple[QThreadPool, QRunnable]]] = []


@contextmanager
def held_starts() -> Iterator[None]:
    """Jobs submitted on the GUI thread inside this block start together when it ends.

    One user action fans out to every page (a new machine, a backend, a language): the first page's job,
    started at once, would run Python on a pool thread while the GUI thread still updates the other
    pages, and each of the GUI thread's hundreds of calls into Qt would then wait to get the interpreter
    back. Held to the end, the jobs run once the handler is done. Nested blocks start their jobs at the
    end of the outermost one."""
    if _held or threading.current_thread() is not threading.main_thread():
        yield
        return
    _held.append([])
    try:
        yield
    finally:
        for pool, job in _held.pop():
            pool.start(job)


@contextmanager
def held_past_next_turn(then: Callable[[], None]) -> Iterator[None]:
    """Like :func:`held_starts`, but the jobs start on the next turn of the event loop, right after
    ``then()`` has run there: a handler that should have the interpreter to itself (a page switch laying
    out a page) runs before the pool's Python does, not against it. ``then`` is queued when the block
    begins, so it also runs before what the block itself queues for the next turn (a page's next step).
    Inside another held block, the jobs are the outer block's; ``then`` still runs on the next turn."""
    jobs: list[tuple[QThreadPool, QRunnable]] = []

    def later() -> None:
        try:
            then()
        finally:
            for pool, job in jobs:
                pool.start(job)

    QTimer.singleShot(0, later)
    if _held or threading.current_thread() is not threading.main_thread():
        yield
        return
    _held.append(jobs)
    try:
        yield
    finally:
        _held.pop()


def _start(pool: QThreadPool, job: QRunnable) -> None:
    if _held and threading.current_thread() is threading.main_thread():
        _held[-1].append((pool, job))
    else:
        pool.start(job)


def _while_alive(owner: QObject, callback: Callable[[Any], None]) -> Callable[[Any], None]:
    def call(value: Any) -> None:
        if shiboken6.isValid(owner):
            callback(value)

    return call


#: the signal objects of jobs whose result has not been delivered yet (see ``submit``)
_in_flight: set[QObject] = set()


#: how many blocks hold the cyclic garbage collector off now, and whether it was on before the first
#: (see :func:`collector_held`)
_collector = {"holds": 0, "was_on": True}
_collector_lock = threading.Lock()


@contextmanager
def collector_held() -> Iterator[None]:
    """The cyclic garbage collector off while the block runs (on any thread; blocks may overlap), back on
    when the last one ends. A pool task reading 5,000 reports made objects fast enough to set off a full
    collection every half second or so, on the pool thread: 12-33 ms each, with the interpreter held, so
    the GUI thread stood still that long, and each found nothing (the reports hold no cycles)."""
    with _collector_lock:
        if _collector["holds"] == 0:
            _collector["was_on"] = gc.isenabled()
            gc.disable()
        _collector["holds"] += 1
    try:
        yield
    finally:
        with _collector_lock:
            _collector["holds"] -= 1
            if _collector["holds"] == 0 and _collector["was_on"]:
                gc.enable()


class _TaskSignals(QObject):
    finished = Signal(object)
    failed = Signal(str)
    progressed = Signal(float)
    cancelled = Signal()


class Task(QRunnable):
    """``fn(steps)`` on the pool: ``signals.progressed`` carries the fraction done, ``finished`` the result,
    ``cancelled`` that :meth:`cancel` stopped it. ``thread_id`` is the thread it ran on (tests check that
    it was not the GUI's)."""

    def __init__(self, fn: Callable[[Steps], Any], progress_every_s: float = 0.05) -> None:
        super().__init__()
        self._fn = fn
        self.progress_every_s = progress_every_s
        self._stop = threading.Event()
        self.signals = _TaskSignals()
        self.thread_id: int | None = None

    def cancel(self) -> None:
        """Ask the work to stop at its next step (its result, if it still comes, is not delivered)."""
        self._stop.set()

    @property
    def is_cancelled(self) -> bool:
        return self._stop.is_set()

    def run(self) -> None:
        self.thread_id = threading.get_ident()
        stop = self._stop

        def cancelled() -> bool:  # asked between two steps: a paint of the window goes first
            step_aside()
            return stop.is_set()

        steps = Steps(self.signals.progressed.emit, cancelled, every_s=self.progress_every_s)
        try:
            with collector_held():
                result = self._fn(steps)
        except Cancelled:
            self.signals.cancelled.emit()
        except Exception as exc:  # noqa: BLE001 - reported to the user, never lost
            self.signals.failed.emit(f"{type(exc).__name__}: {exc}")
        else:
            if self._stop.is_set():
                self.signals.cancelled.emit()
            else:
                self.signals.finished.emit(result)


def submit_task(
    pool: QThreadPool,
    fn: Callable[[Steps], Any],
    on_done: Callable[[Any], None],
    on_error: Callable[[str], None],
    *,
    on_progress: Callable[[float], None] | None = None,
    on_cancelled: Callable[[], None] | None = None,
    progress_every_s: float = 0.05,
) -> Task:
    """Start ``fn(steps)`` on ``pool``; the callbacks run on the GUI thread (queued signals), ``on_progress``
    at most every ``progress_every_s`` seconds (each one is a handler the GUI thread runs)."""
    task = Task(fn, progress_every_s)
    signals = task.signals
    signals.finished.connect(on_done)
    signals.failed.connect(on_error)
    if on_progress is not None:
        signals.progressed.connect(on_progress)
    if on_cancelled is not None:
        signals.cancelled.connect(on_cancelled)
    _in_flight.add(signals)  # kept alive until its last signal is delivered (see ``submit``)

    def release(_value: object = None) -> None:
        QTimer.singleShot(0, lambda: _in_flight.discard(signals))

    for signal in (signals.finished, signals.failed, signals.cancelled):
        signal.connect(release)
    _start(pool, task)
    return task


def report_exception(exc: BaseException, what: str, *, debug: bool) -> None:
    """One line on stderr for an unexpected error in the app; the whole traceback only with --debug."""
    if debug:
        import traceback  # only with --debug: not on every start-up's import path

        traceback.print_exception(exc, file=sys.stderr)
    sys.stderr.write(f"rigcheck: error: {what}: {type(exc).__name__}: {exc} (run with --debug for details)\n")
