"""Fit's formats table (issue 30, screenshots): a format without a published quality measurement (IQ3_XXS)
shows "—" as an unknown speed does, not an empty cell that reads as not yet worked out."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from fakes.windows import answered, snapshot_window

pytestmark = pytest.mark.gui


def test_a_format_without_a_measurement_shows_a_dash(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.resize(1024, 700)
    window.show()
    window.show_page("fit")
    answered(qtbot, window)
    ladder = window.pages["fit"].ladder  # type: ignore[attr-defined]
    quality = ladder.columnCount() - 1
    cells = {
        ladder.item(r, 0).text().removeprefix("▶ "): ladder.item(r, quality).text()
        for r in range(ladder.rowCount())
    }
    assert cells["IQ3_XXS"] == "—"
    assert cells["Q4_K_M"].startswith("+0.1754")
    assert all(cells.values())
