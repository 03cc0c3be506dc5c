"""The Upgrade page's ways table (issue 30, screenshots): each row's "Try it" is a button at its own height,
centred in its row, not a slab stretched over a row of four wrapped lines (Italian at 1024 px)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from fakes.windows import answered, snapshot_window
from rigcheck.gui import i18n

pytestmark = pytest.mark.gui


def test_try_buttons_keep_their_height(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json", language="it")
    try:
        window.resize(1024, 700)
        window.show()
        window.show_page("upgrade")
        answered(qtbot, window)
        qtbot.wait(50)
        table = window.pages["upgrade"].options  # type: ignore[attr-defined]
        assert table.rowCount() > 0
        tall = 0
        for row in range(table.rowCount()):
            cell = table.cellWidget(row, 4)
            button = cell.button
            assert button.height() <= button.sizeHint().height() + 2
            middle = button.mapTo(table.viewport(), button.rect().center()).y()
            top = table.rowViewportPosition(row)
            assert abs(middle - (top + table.rowHeight(row) / 2)) <= 2
            tall += table.rowHeight(row) > button.sizeHint().height() + 8
        assert tall, "no row taller than its button: nothing tested"
    finally:
        i18n.set_language("en")
