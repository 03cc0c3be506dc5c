"""The Fleet page: open a folder of reports, see drift, check a model across machines, open one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from rigcheck.core.catalog import load_catalog
from rigcheck.core.machine import Drivers, load_machine, save_machine
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.fleet import FleetPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "machines"


def write_fleet(folder: Path) -> None:
    base = load_machine(FIXTURES / "rtx4090-64gb.json")
    for i in range(5):
        driver = "550.54.14" if i == 3 else "570.124.04"  # node-3 lags behind
        machine = replace(
            base,
            host=replace(base.host, hostname=f"node-{i}"),
            drivers=Drivers(nvidia=driver, cuda_driver="12.8"),
        )
        save_machine(machine, folder / f"node-{i}.json")
    two = load_machine(FIXTURES / "two-gpus-128gb.json")
    save_machine(
        replace(
            two,
            host=replace(two.host, hostname="node-big"),
            drivers=Drivers(nvidia="570.124.04", cuda_driver="12.8"),
        ),
        folder / "node-big.json",
    )
    (folder / "broken.json").write_text("{ not json")


@pytest.fixture
def page(qtbot: QtBot, tmp_path: Path) -> FleetPage:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppState(load_catalog(use_overlay=False), settings), small_machine)
    qtbot.addWidget(window)
    window.show_page("fleet")
    fleet_page = window.pages["fleet"]
    assert isinstance(fleet_page, FleetPage)
    folder = tmp_path / "audits"
    folder.mkdir()
    write_fleet(folder)
    fleet_page.open_folder(folder)
    qtbot.waitUntil(lambda: fleet_page.fleet is not None, timeout=10000)
    return fleet_page


def cell(page: FleetPage, row: int, column: int) -> str:
    return str(page.table.model().index(row, column).data())


def rows(page: FleetPage) -> int:
    return page.table.model().rowCount()


def test_folder_opens_with_drift_and_the_bad_file_reported(page: FleetPage) -> None:
    assert rows(page) == 6
    assert "broken.json" in page.problems.text()
    assert "node-3" in page.drift_text.text() and "550.54.14" in page.drift_text.text()
    driver_cells = [cell(page, r, 3) for r in range(rows(page))]
    assert sum(1 for cell in driver_cells if cell.startswith("▲")) == 1


def test_which_machines_can_run_a_70b(qtbot: QtBot, page: FleetPage) -> None:
    page.model.setCurrentIndex(page.model.findData("llama-3.1-70b"))
    page.check_model()
    qtbot.waitUntil(lambda: bool(page.verdicts) and not page.busy(), timeout=10000)
    assert page.verdicts["node-big"][0] == "fits"  # a 3090 and a 4090 hold a 70B Q4_K_M at 8k
    assert page.verdicts["node-0"][0] != "fits"
    assert "1 of 6" in page.status.text()


def test_double_click_opens_the_machine_everywhere(qtbot: QtBot, page: FleetPage) -> None:
    row = next(r for r in range(rows(page)) if page.node_at(r) == "node-big")
    page.table.doubleClicked.emit(page.table.model().index(row, 0))
    assert page.state.machine is not None and page.state.machine.host.hostname == "node-big"
    assert page.state.is_live is False


def test_before_a_folder_is_opened_the_page_says_what_to_do(qtbot: QtBot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppState(load_catalog(use_overlay=False), settings), small_machine)
    qtbot.addWidget(window)
    window.show()
    window.show_page("fleet")
    page = window.pages["fleet"]
    assert isinstance(page, FleetPage)
    assert page.stack.currentIndex() == 0 and page.empty.isVisible()
    assert not page.open_button.isVisible()  # one way to open a folder, in the empty state
    assert not page.table.isVisible() and not page.model_box.isVisible()
    text = " ".join(label.text() for label in page.empty.findChildren(QLabel))
    assert "rigcheck audit --format json" in text and "folder" in text
    window.close()


def test_sort_arrow_and_rows_agree(page: FleetPage) -> None:
    header = page.table.horizontalHeader()
    names = [cell(page, r, 0) for r in range(rows(page))]
    assert header.sortIndicatorSection() == 0 and header.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
    assert names == sorted(names, key=str.casefold)
    header.sectionClicked.emit(2)  # VRAM: numbers, not text ("48 GiB" after "24 GiB", before "128")
    vram = [cell(page, r, 2) for r in range(rows(page))]
    order = header.sortIndicatorOrder()
    numbers = [float(v.split()[0]) for v in vram]
    assert numbers == sorted(numbers, reverse=order == Qt.SortOrder.DescendingOrder)


def test_drift_wording_matches_the_data_without_a_majority(qtbot: QtBot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppState(load_catalog(use_overlay=False), settings), small_machine)
    qtbot.addWidget(window)
    window.show_page("fleet")
    page = window.pages["fleet"]
    assert isinstance(page, FleetPage)
    folder = tmp_path / "lab"
    folder.mkdir()
    base = load_machine(FIXTURES / "rtx4090-64gb.json")
    for i, driver in enumerate(
        ["470.82.01", "550.54.14", "550.54.14", "580.65.06", "580.65.06", "580.65.06"]
    ):
        machine = replace(base, host=replace(base.host, hostname=f"box-{i}"), drivers=Drivers(nvidia=driver))
        save_machine(machine, folder / f"box-{i}.json")
    page.open_folder(folder)
    qtbot.waitUntil(lambda: page.fleet is not None, timeout=10000)
    text = page.drift_text.text()
    assert "No drift" not in text and "✔" not in text
    assert "Drivers differ</b>: 470.82.01 (1), 550.54.14 (2), 580.65.06 (3)" in text
    window.close()
