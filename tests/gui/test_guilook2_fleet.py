"""Fleet (issue 26): the failing-checks count sits under a two-line title, so the column is as narrow as
its words and the verdict keeps the room (Italian at 900 px elided it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QFontMetrics
from pytestqt.qtbot import QtBot

from fakes.machines import small_machine
from fakes.windows import open_fleet
from gui.test_fleet_page import write_fleet
from rigcheck.core.catalog import load_catalog
from rigcheck.core.i18n import set_language, tr
from rigcheck.gui.fleet_table import COLUMNS, HEADERS
from rigcheck.gui.main_window import MainWindow
from rigcheck.gui.state import AppState

pytestmark = pytest.mark.gui


@pytest.mark.parametrize("language", ["en", "it"])
def test_failing_checks_title_is_two_lines_and_its_column_narrow(
    qtbot: QtBot, tmp_path: Path, language: str
) -> None:
    set_language(language)
    try:
        settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
        window = MainWindow(AppState(load_catalog(use_overlay=False), settings), small_machine)
        qtbot.addWidget(window)
        window.setMinimumSize(0, 0)
        window.resize(900, 600)
        window.show()
        folder = tmp_path / "audits"
        folder.mkdir()
        write_fleet(folder)
        page = open_fleet(qtbot, window, folder)
        column = COLUMNS.index("failing")
        title = page.table.model().headerData(column, Qt.Orientation.Horizontal)
        one_line = tr(HEADERS[column])
        assert title == one_line.replace(" ", "\n", 1) and "\n" in title
        metrics = QFontMetrics(page.table.horizontalHeader().font())
        assert page.table.columnWidth(column) < metrics.horizontalAdvance(one_line) + 24
        widths = sum(page.table.columnWidth(c) for c in range(page.table.model().columnCount()))
        assert widths <= page.table.viewport().width() + 2  # never sideways
        window.close()
    finally:
        set_language("en")
