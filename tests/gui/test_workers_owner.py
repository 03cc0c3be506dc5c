"""A pool job whose page was deleted while it ran delivers nothing (no call into a freed widget)."""

from __future__ import annotations

import threading

from PySide6.QtCore import QThreadPool
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from rigcheck.gui.workers import submit


def test_a_result_for_a_deleted_owner_is_dropped(qtbot: QtBot) -> None:
    pool = QThreadPool()
    label = QLabel()
    release = threading.Event()
    seen: list[object] = []

    def done(value: object) -> None:
        seen.append(value)
        label.setText(str(value))  # would raise "already deleted" without the guard

    submit(pool, lambda: release.wait(5) and 42, done, seen.append, owner=label)
    label.deleteLater()
    qtbot.waitUntil(lambda: not __import__("shiboken6").isValid(label))
    release.set()
    assert pool.waitForDone(5000)
    qtbot.wait(50)  # the queued result is handled
    assert seen == []


def test_a_live_owner_gets_its_result(qtbot: QtBot) -> None:
    pool = QThreadPool()
    label = QLabel()
    qtbot.addWidget(label)
    seen: list[object] = []
    submit(pool, lambda: 42, seen.append, seen.append, owner=label)
    qtbot.waitUntil(lambda: seen == [42])


def test_jobs_submitted_while_starts_are_held_start_when_the_block_ends(qtbot: QtBot) -> None:
    from rigcheck.gui.workers import held_starts

    pool = QThreadPool()
    ran: list[str] = []
    seen: list[object] = []
    with held_starts():
        submit(pool, lambda: ran.append("first") or 1, seen.append, seen.append)
        with held_starts():  # nested: still held until the outer block ends
            submit(pool, lambda: ran.append("second") or 2, seen.append, seen.append)
        assert pool.waitForDone(5000)
        assert ran == []  # nothing competes with the handler that is still running
    assert pool.waitForDone(5000)
    assert sorted(ran) == ["first", "second"]
    qtbot.waitUntil(lambda: sorted(seen) == [1, 2])  # type: ignore[type-var]


def test_the_collector_is_off_while_pool_tasks_run_and_back_on_after_the_last(qtbot: QtBot) -> None:
    import gc

    from rigcheck.gui.workers import submit_task

    pool = QThreadPool()
    pool.setMaxThreadCount(2)
    first_may_end, second_may_end = threading.Event(), threading.Event()
    during: list[bool] = []
    done: list[object] = []

    def work(gate: threading.Event) -> object:
        def run(_steps: object) -> object:
            during.append(gc.isenabled())
            assert gate.wait(5)
            during.append(gc.isenabled())
            return gate

        return run

    assert gc.isenabled()
    submit_task(pool, work(first_may_end), done.append, done.append)
    submit_task(pool, work(second_may_end), done.append, done.append)
    qtbot.waitUntil(lambda: len(during) == 2)
    first_may_end.set()  # one ends while the other still runs: the collector stays off
    qtbot.waitUntil(lambda: len(done) == 1)
    assert not gc.isenabled()
    second_may_end.set()
    qtbot.waitUntil(lambda: len(done) == 2)
    assert during == [False, False, False, False] and gc.isenabled()
