"""Upgrade (issue 26): "What would it take?" answered on the first screen at 1024×700 (the ways to run
the model above the candidate's controls), the ways table never sideways, the GPU picker one line a row."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from fakes.windows import answered, snapshot_window
from rigcheck.gui.pages.upgrade import UpgradePage

pytestmark = pytest.mark.gui


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_answer_is_on_the_first_screen_at_1024x700(qtbot: QtBot, tmp_path: Path, language: str) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json", language=language)
    window.setMinimumSize(0, 0)
    window.resize(1024, 700)
    window.show()
    window.show_page("upgrade")
    page = window.pages["upgrade"]
    assert isinstance(page, UpgradePage)
    page.what_would_it_take("llama-3.3-70b")
    qtbot.waitUntil(lambda: not page.busy() and not page.options.isHidden(), timeout=30000)
    answered(qtbot, window)
    table = page.options
    assert table.rowCount() > 0
    # the question, its best answer and the first ways to run it lie inside the window, unscrolled
    bottom = page.mapFromGlobal(window.mapToGlobal(QPoint(0, window.height()))).y()
    first_row = table.viewport().mapTo(page, QPoint(0, table.rowViewportPosition(0) + table.rowHeight(0)))
    assert first_row.y() < bottom
    assert page.asked.mapTo(page, QPoint(0, page.asked.height())).y() < bottom
    # the controls that change the candidate come after the answer
    candidate = page.catalog_list.mapTo(page, QPoint(0, 0)).y()
    assert table.mapTo(page, QPoint(0, 0)).y() < candidate
    # never sideways: the columns add up to the table's width, and the first names the GPUs
    assert table.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    widths = sum(table.columnWidth(c) for c in range(table.columnCount()))
    assert widths <= table.viewport().width() + 2
    assert table.columnWidth(3) >= 40  # Notes keep room to be read
    window.close()


def test_picker_rows_are_one_line(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "cpu-only-32gb.json")
    window.setMinimumSize(0, 0)
    window.resize(1024, 700)
    window.show()
    window.show_page("upgrade")
    page = window.pages["upgrade"]
    assert isinstance(page, UpgradePage)
    answered(qtbot, window)
    picker = page.catalog_list
    line = picker.fontMetrics().lineSpacing()
    shown = [r for r in range(picker.rowCount()) if not picker.isRowHidden(r)]
    assert shown
    assert all(picker.rowHeight(r) < 2 * line for r in shown)
    assert not picker.wordWrap()
    long = [r for r in shown if "Workstation Edition" in picker.item(r, 0).text()]
    assert long and all("Workstation Edition" in picker.item(r, 0).toolTip() for r in long)
    window.close()


def test_a_built_in_machine_gets_a_table_as_tall_as_its_rows(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "m2-ultra-192gb.json")
    window.setMinimumSize(0, 0)
    window.resize(1024, 700)
    window.show()
    window.show_page("upgrade")
    page = window.pages["upgrade"]
    assert isinstance(page, UpgradePage)
    page.what_would_it_take("llama-3.3-70b")
    qtbot.waitUntil(lambda: not page.busy() and not page.options.isHidden(), timeout=30000)
    answered(qtbot, window)
    table = page.options
    rows = sum(table.rowHeight(r) for r in range(table.rowCount()))
    assert table.height() <= rows + table.horizontalHeader().height() + 12  # no empty box under one row
    assert table.columnWidth(3) >= table.viewport().width() // 8  # Notes are read, not "…"
    window.close()


def test_machines_without_prices_get_no_price_column(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "m2-ultra-192gb.json")
    window.resize(1024, 700)
    window.show()
    window.show_page("upgrade")
    page = window.pages["upgrade"]
    assert isinstance(page, UpgradePage)
    page.what_would_it_take("llama-3.3-70b")
    qtbot.waitUntil(lambda: not page.busy() and not page.options.isHidden(), timeout=30000)
    assert page.options.isColumnHidden(1)
    speed = page.options.columnWidth(2)
    assert speed >= min(page.options.sizeHintForColumn(2), page.options.viewport().width() // 4)
    window.close()
