"""Pool work steps aside while the window paints (gui/paint_yield.py)."""

from __future__ import annotations

import threading
import time

import pytest
from PySide6.QtCore import QCoreApplication, QEvent
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from rigcheck.core.steps import Steps
from rigcheck.gui import paint_yield
from rigcheck.gui.workers import submit_task

pytestmark = pytest.mark.gui


def test_a_paint_holds_pool_steps_until_the_next_turn_of_the_event_loop(qtbot: QtBot) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    paint_yield.install(window)
    assert not paint_yield.painting()
    QCoreApplication.sendEvent(window, QEvent(QEvent.Type.UpdateRequest))
    assert paint_yield.painting(), "the paint has begun: pool steps wait"
    waited: list[float] = []

    def pool_step() -> None:
        start = time.perf_counter()
        paint_yield.step_aside()
        waited.append(time.perf_counter() - start)

    thread = threading.Thread(target=pool_step)
    thread.start()
    time.sleep(0.03)
    assert not waited, "the step waits while the window paints"
    qtbot.waitUntil(lambda: not paint_yield.painting(), timeout=2000)  # the next turn lets it go
    thread.join(2)
    assert waited and 0.02 < waited[0] < paint_yield.MAX_PAUSE_S + 0.05


def test_a_step_never_waits_longer_than_the_cap() -> None:
    paint_yield._painted.clear()  # a paint that never ends (no event loop turns)
    try:
        start = time.perf_counter()
        paint_yield.step_aside()
        assert paint_yield.MAX_PAUSE_S * 0.9 < time.perf_counter() - start < paint_yield.MAX_PAUSE_S + 0.1
    finally:
        paint_yield._painted.set()


def test_a_pool_task_takes_its_steps_only_between_paints(qtbot: QtBot) -> None:
    """submit_task's Steps ask step_aside() before each item: work does not go on while a paint runs."""
    from PySide6.QtCore import QThreadPool

    seen: list[bool] = []

    def work(steps: Steps) -> int:
        for n in range(5):
            steps(n, 5)
            seen.append(paint_yield.painting())
        return 5

    done: list[int] = []
    paint_yield._painted.clear()
    try:
        submit_task(QThreadPool.globalInstance(), work, done.append, lambda _m: None)
        time.sleep(0.05)
        assert not seen, "the first step waits for the paint"
    finally:
        paint_yield._painted.set()
    qtbot.waitUntil(lambda: done == [5], timeout=5000)
    assert seen == [False] * 5


def test_the_overview_cards_wait_for_a_paint_between_two_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """recommend_cards (pool work with no Steps) steps aside before each model's recommendation."""
    from rigcheck.gui import fitview

    asked: list[int] = []
    monkeypatch.setattr(fitview, "step_aside", lambda: asked.append(1))
    monkeypatch.setattr(fitview, "from_catalog", lambda spec: spec)

    def refused(*_args: object, **_kwargs: object) -> None:
        raise fitview.InputError("model", "not runnable")  # the card is skipped, as an unreadable model is

    monkeypatch.setattr(fitview, "recommend", refused)
    assert fitview.recommend_cards([object(), object(), object()], None, None, live=False) == ()  # type: ignore[list-item, arg-type]
    assert len(asked) == 3
