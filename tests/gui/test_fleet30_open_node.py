"""Double-clicking a machine only starts work (issue 30): the switch to Overview runs on the next turn
with the interpreter to itself, and the pages' pool work for the new machine starts after it."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt, QThreadPool
from pytestqt.qtbot import QtBot
from test_fleet_page import page, rows  # noqa: F401 - the fixture

from rigcheck.gui.fleet_table import COLUMNS
from rigcheck.gui.pages.fleet import FleetPage
from rigcheck.gui.workers import held_past_next_turn, submit

pytestmark = pytest.mark.gui


def test_jobs_held_past_the_next_turn_start_after_it(qtbot: QtBot) -> None:
    pool = QThreadPool()
    order: list[str] = []
    seen: list[object] = []
    with held_past_next_turn(lambda: order.append("then")):
        submit(pool, lambda: order.append("job") or 1, seen.append, seen.append)
        assert pool.waitForDone(5000)
    assert pool.waitForDone(5000)
    assert order == []  # not in this handler, nor as soon as it ends
    qtbot.waitUntil(lambda: seen == [1])
    assert order == ["then", "job"]


def test_a_double_click_switches_page_before_the_pages_work_starts(
    qtbot: QtBot,
    page: FleetPage,  # noqa: F811 - the fixture
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    qtbot.waitUntil(lambda: not page.busy(), timeout=10000)
    order: list[str] = []
    real_start = QThreadPool.start

    def start(pool: QThreadPool, job: object, *args: object) -> None:
        order.append("job")
        real_start(pool, job, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(QThreadPool, "start", start)
    page.state.page_requested.connect(order.append)
    row = next(r for r in range(rows(page)) if page.node_at(r) == "node-big")
    page.open_node(row)
    assert page.state.machine is not None and page.state.machine.host.hostname == "node-big"
    assert order == []  # the handler only took the machine
    qtbot.waitUntil(lambda: "overview" in order)
    assert order[0] == "overview" and "job" in order[1:]


def test_the_fleet_reports_progress_a_few_times_a_second(qtbot: QtBot, page: FleetPage) -> None:  # noqa: F811
    qtbot.waitUntil(lambda: not page.busy(), timeout=10000)
    page.check_model()
    assert page._task is not None and page._task.progress_every_s >= 0.2


def test_rows_arrive_sorted_from_the_pool_and_the_gui_thread_only_swaps_them_in(
    qtbot: QtBot,
    page: FleetPage,  # noqa: F811 - the fixture
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rigcheck.gui import fleet_table

    qtbot.waitUntil(lambda: not page.busy(), timeout=10000)
    page.table.sortByColumn(3, Qt.SortOrder.DescendingOrder)  # by driver, newest first
    shown = [page.node_at(r) for r in range(rows(page))]
    sorted_on: list[bool] = []
    real = fleet_table.sorted_order

    def spy(*args: object) -> list[int]:
        sorted_on.append(threading.current_thread() is threading.main_thread())
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(fleet_table, "sorted_order", spy)
    page.check_model()
    qtbot.waitUntil(lambda: bool(page.verdicts) and not page.busy(), timeout=10000)
    assert sorted_on == [False]  # once, on the pool
    assert [page.node_at(r) for r in range(rows(page))] == shown  # still by driver, newest first
    assert page.table.isColumnHidden(COLUMNS.index("rocm"))  # no machine reports ROCm: known from the pool
