"""The Upgrade GPU picker's default order (issue 26): an RTX 4090 owner sees upgrades first, never a
GTX 1650 at the top; step downs only when asked for."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from rigcheck.core.catalog import load_catalog
from rigcheck.core.estimate.buying import best_owned, is_step_down
from rigcheck.core.machine import load_machine
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.upgrade import UpgradePage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


def open_page(qtbot: QtBot, tmp_path: Path, snapshot: str) -> UpgradePage:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    state = AppState(load_catalog(use_overlay=False), settings)
    window = MainWindow(state, lambda: load_machine(FIXTURES / snapshot))
    qtbot.addWidget(window)
    window.open_snapshot(FIXTURES / snapshot)
    window.show_page("upgrade")
    page = window.pages["upgrade"]
    assert isinstance(page, UpgradePage)
    qtbot.waitUntil(lambda: page.report is not None, timeout=5000)
    return page


def listed(page: UpgradePage) -> list[str]:
    """The GPU ids the picker shows, top to bottom."""
    table = page.catalog_list
    return [
        table.item(r, 0).data(Qt.ItemDataRole.UserRole)
        for r in range(table.rowCount())
        if not table.isRowHidden(r) and table.item(r, 0).data(Qt.ItemDataRole.UserRole)  # not a tier's title
    ]


def test_a_4090_owner_sees_no_step_down_and_newest_first(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path, "rtx4090-64gb.json")
    catalog, machine = page.state.catalog, page.state.machine
    assert machine is not None
    owned = best_owned(machine, catalog)
    shown = [catalog.gpu(g) for g in listed(page)]
    assert shown, "the picker lists GPUs"
    assert shown[0] is not None and shown[0].id != "nvidia-geforce-gtx-1650"
    assert not any(spec is not None and is_step_down(spec, owned) for spec in shown)
    # the first listed card is of its vendor's newest generation among the listed ones
    years = [
        s.release_year for s in shown if s is not None and s.vendor == shown[0].vendor and s.release_year
    ]
    assert shown[0].release_year == max(years)


def test_step_downs_come_back_last_when_asked_for(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path, "rtx4090-64gb.json")
    catalog, machine = page.state.catalog, page.state.machine
    assert machine is not None
    owned = best_owned(machine, catalog)
    before = listed(page)
    assert page.show_weaker.isVisibleTo(page)
    page.show_weaker.setChecked(True)
    after = listed(page)
    weaker = [g for g in after if is_step_down(catalog.gpu(g), owned)]
    assert "nvidia-geforce-gtx-1650" in weaker
    assert after[: len(before)] == before  # the step downs follow the upgrades
    assert set(after[len(before) :]) == set(weaker)


def test_a_header_click_still_sorts_by_price(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path, "rtx4090-64gb.json")
    page.catalog_list.sortItems(2, Qt.SortOrder.AscendingOrder)
    prices = [page.catalog_list.item(r, 2).key for r in range(page.catalog_list.rowCount())]
    assert prices == sorted(prices)
    page.reset()  # a machine change keeps the order the user chose
    assert page.catalog_list.horizontalHeader().sortIndicatorSection() == 2


def test_a_gpu_less_machine_lists_every_card_newest_first(qtbot: QtBot, tmp_path: Path) -> None:
    page = open_page(qtbot, tmp_path, "cpu-only-32gb.json")
    assert not page.show_weaker.isVisibleTo(page)  # nothing is a step down from no GPU
    shown = [page.state.catalog.gpu(g) for g in listed(page)]
    keys = [page.catalog_list.item(r, page.catalog_list.columnCount() - 1).key for r in range(len(shown))]
    assert keys == sorted(keys)


def test_what_would_run_it_is_answered_without_a_click(qtbot: QtBot, tmp_path: Path) -> None:
    """A DGX Spark (built in) lists other machines for the model shown as soon as the page opens; the
    answer sits in the 'What changes' card beside the controls."""
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    state = AppState(load_catalog(use_overlay=False), settings)
    spark = FIXTURES / "platforms" / "dgx-spark.json"
    window = MainWindow(state, lambda: load_machine(spark))
    qtbot.addWidget(window)
    window.open_snapshot(spark)
    window.show_page("upgrade")
    page = window.pages["upgrade"]
    assert isinstance(page, UpgradePage)
    qtbot.waitUntil(lambda: page.report is not None and not page.busy(), timeout=30000)
    assert page.built_in and page.options.rowCount() > 0
    assert page.summary.parent() is page.changes_card and page.summary.text()
