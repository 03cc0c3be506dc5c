"""Upgrade's models before → after (issue 30, screenshots): a row is as tall as its wrapped verdict (with a
4090 added, "✓ Runs on the GPU · Q8_0 · ~47 tokens/s · BF16 now possible" wraps in bold at 1280 px and
its second line overran the row)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFontMetrics
from pytestqt.qtbot import QtBot

from fakes.windows import answered, snapshot_window

pytestmark = pytest.mark.gui


def test_rows_are_as_tall_as_their_wrapped_verdicts(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.resize(1280, 800)
    window.show()
    window.show_page("upgrade")
    answered(qtbot, window)
    page = window.pages["upgrade"]
    page.select_gpu("nvidia-geforce-rtx-4090")  # type: ignore[attr-defined]
    page.add_button.click()  # type: ignore[attr-defined]
    answered(qtbot, window)
    qtbot.wait(50)
    table = page.table  # type: ignore[attr-defined]
    wrapped = 0
    for row in range(table.rowCount()):
        for column in (1, 2):
            item = table.item(row, column)
            box = QRect(0, 0, table.columnWidth(column) - 8, 10_000)
            needed = (
                QFontMetrics(item.font())
                .boundingRect(box, int(Qt.TextFlag.TextWordWrap), item.text())
                .height()
            )
            wrapped += needed > QFontMetrics(item.font()).lineSpacing() * 1.5
            assert table.rowHeight(row) >= needed + 4, (
                item.text(),
                table.rowHeight(row),
                needed,
            )  # its margins
    assert wrapped, "no verdict wrapped: nothing tested"
