"""Fleet (issue 26): the verdict, the answer asked for, keeps its whole words at 900 px in Italian; the
other columns give up their room first."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from pytestqt.qtbot import QtBot

from fakes.windows import FIXTURES, open_fleet, snapshot_window
from rigcheck.core.machine import Drivers, load_machine, save_machine

pytestmark = pytest.mark.gui


def _lab(folder: Path) -> None:
    """Six RTX 4090 reports with three drivers (the review set's fleet)."""
    base = load_machine(FIXTURES / "rtx4090-64gb.json")
    drivers = ["470.82.01", "550.54.14", "550.54.14", "580.65.06", "580.65.06", "580.65.06"]
    for i, driver in enumerate(drivers):
        machine = replace(
            base, host=replace(base.host, hostname=f"lab-{i + 1:02d}"), drivers=Drivers(nvidia=driver)
        )
        save_machine(machine, folder / f"lab-{i + 1:02d}.json")


@pytest.mark.parametrize("language", ["it", "en"])
def test_verdict_is_whole_at_900_px(qtbot: QtBot, tmp_path: Path, language: str) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json", language=language)
    window.setMinimumSize(0, 0)
    window.resize(900, 600)
    window.show()
    folder = tmp_path / "lab"
    folder.mkdir()
    _lab(folder)
    page = open_fleet(qtbot, window, folder)
    model = page.table.model()
    verdict = model.columnCount() - 1
    texts = [
        str(model.data(model.index(r, verdict), Qt.ItemDataRole.DisplayRole)) for r in range(model.rowCount())
    ]
    # a verdict with its speed, as the review set shows: on one line, or its speed on a second one
    assert texts and all("·" in t or "\n" in t for t in texts)
    assert all("token" in t.split("\n")[-1] for t in texts)
    bold = QFont(page.table.font())
    bold.setBold(True)
    metrics = QFontMetrics(bold)
    needed = max(metrics.horizontalAdvance(line) for t in texts for line in t.split("\n"))
    assert page.table.columnWidth(verdict) >= needed + 8  # its words whole, the speed included
    lines = max(t.count("\n") + 1 for t in texts)
    assert page.table.rowHeight(0) >= lines * metrics.lineSpacing()  # and every line has its height
    widths = sum(
        page.table.columnWidth(c) for c in range(model.columnCount()) if not page.table.isColumnHidden(c)
    )
    assert widths <= page.table.viewport().width() + 2  # and still never sideways
    window.close()
