"""Fleet (issue 26): the verdict column answers as soon as a folder is open, and again when the model
or format changes; no click on Check needed."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from fakes.windows import open_fleet
from gui.test_fleet_page import write_fleet
from rigcheck.core.catalog import load_catalog
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.pages.fleet import FleetPage
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui


def verdict_cells(page: FleetPage) -> list[str]:
    model = page.table.model()
    return [str(model.index(r, model.columnCount() - 1).data() or "") for r in range(model.rowCount())]


def test_the_verdict_column_is_filled_without_a_click(qtbot: QtBot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppState(load_catalog(use_overlay=False), settings), small_machine)
    qtbot.addWidget(window)
    window.show_page("fleet")
    page = window.pages["fleet"]
    assert isinstance(page, FleetPage)
    folder = tmp_path / "audits"
    folder.mkdir()
    write_fleet(folder)
    page.open_folder(folder)
    qtbot.waitUntil(lambda: page.fleet is not None and bool(page.verdicts) and not page.busy(), timeout=20000)
    cells = verdict_cells(page)
    assert len(cells) == 6 and all(cells), cells
    assert page.verdicts["node-big"][0] == "fits" and page.verdicts["node-0"][0] != "fits"  # a 70B at Q4_K_M
    first = dict(page.verdicts)
    page.model.setCurrentIndex(page.model.findData("llama-3.2-3b"))  # a 3B runs on every 4090
    qtbot.waitUntil(lambda: page.verdicts != first and not page.busy(), timeout=20000)
    assert all(verdict == "fits" for verdict, _speed in page.verdicts.values())
    assert all(verdict_cells(page))


def test_versions_no_machine_reports_are_hidden_and_the_verdict_is_coloured(
    qtbot: QtBot, tmp_path: Path
) -> None:
    from PySide6.QtCore import Qt

    from rigcheck.gui.fleet_table import COLUMNS

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow(AppState(load_catalog(use_overlay=False), settings), small_machine)
    qtbot.addWidget(window)
    window.setMinimumSize(0, 0)
    window.resize(1024, 700)
    window.show()
    folder = tmp_path / "audits"
    folder.mkdir()
    write_fleet(folder)
    page = open_fleet(qtbot, window, folder)
    assert page.table.isColumnHidden(COLUMNS.index("rocm"))  # an NVIDIA fleet
    assert not page.table.isColumnHidden(COLUMNS.index("driver"))
    model = page.table.model()
    verdict = model.columnCount() - 1
    colours = [model.index(r, verdict).data(Qt.ItemDataRole.ForegroundRole) for r in range(model.rowCount())]
    assert None not in colours and len({c.name() for c in colours}) >= 2  # fits and does not: two colours
    assert page.table.horizontalScrollBar().maximum() == 0
    # the question is asked above the table that answers it
    assert page.model_box.geometry().bottom() < page.stack.geometry().top()
