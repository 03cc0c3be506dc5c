"""Fleet at 1920×1080 (issue 30, screenshots): with room to spare the verdict, the answer, takes it and the
GPU list keeps its text's width (it stretched over ~850 px of nothing beside "RTX 4090"); at 900 px in
Italian the GPU list stretches again and the table still never scrolls sideways."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from fakes.windows import open_fleet, snapshot_window
from gui.test_guilook3_fleet import _lab
from rigcheck.gui import i18n
from rigcheck.gui.fleet_table import COLUMNS

pytestmark = pytest.mark.gui


def test_spare_room_goes_to_the_verdict(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json", language="it")
    try:
        window.setMinimumSize(0, 0)
        window.resize(1920, 1080)
        window.show()
        folder = tmp_path / "lab"
        folder.mkdir()
        _lab(folder)
        page = open_fleet(qtbot, window, folder)
        qtbot.wait(50)
        table, gpus = page.table, COLUMNS.index("gpus")
        verdict = table.model().columnCount() - 1
        assert table.columnWidth(gpus) < 250
        assert table.columnWidth(verdict) > table.columnWidth(gpus)

        def shown() -> int:
            return sum(
                table.columnWidth(c)
                for c in range(table.model().columnCount())
                if not table.isColumnHidden(c)
            )

        assert abs(shown() - table.viewport().width()) <= 2  # the row is filled, not sideways
        window.resize(900, 600)
        qtbot.wait(50)
        assert shown() <= table.viewport().width() + 2
    finally:
        i18n.set_language("en")
