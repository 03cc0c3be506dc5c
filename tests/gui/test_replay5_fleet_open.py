"""Fleet's double-click: the machine is everyone's at once; Overview is shown in a handler of its own."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.machine import load_machine, save_machine
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.fleet import FleetPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


def write_fleet(folder: Path) -> None:
    for i, name in enumerate(
        ("rtx4090-64gb.json", "two-gpus-128gb.json", "rtx4090-64gb.json", "m2-ultra-192gb.json")
    ):
        machine = load_machine(FIXTURES / name)
        save_machine(
            replace(machine, host=replace(machine.host, hostname=f"node-{i}")), folder / f"node-{i}.json"
        )


def shown(window: MainWindow) -> str:
    return str(window.nav.currentItem().data(Qt.ItemDataRole.UserRole))


def test_double_click_sets_the_machine_then_shows_overview_on_the_next_turn(
    qtbot: QtBot, tmp_path: Path
) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppState(load_catalog(use_overlay=False), settings), small_machine)
    qtbot.addWidget(window)
    window.show_page("fleet")
    page = window.pages["fleet"]
    assert isinstance(page, FleetPage)
    (tmp_path / "audits").mkdir()
    write_fleet(tmp_path / "audits")
    page.open_folder(tmp_path / "audits")
    qtbot.waitUntil(lambda: page.fleet is not None, timeout=10000)
    row = next(r for r in range(page.table_model.rowCount()) if page.node_at(r) == "node-3")
    page.table.doubleClicked.emit(page.table.model().index(row, 0))
    # in the double-click's own handler: the machine changed for every page, the page did not yet
    assert page.state.machine is not None and page.state.machine.host.hostname == "node-3"
    assert shown(window) == "fleet"
    qtbot.waitUntil(lambda: shown(window) == "overview", timeout=5000)
    assert page.state.machine.host.hostname == "node-3"
