"""The page shortcuts pressed, not triggered (issue 30): Ctrl+1…Ctrl+7 bring each page on screen in
English and Italian (test_window_basics checks the actions' key sequences; this presses them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from fakes.windows import snapshot_window
from rigcheck.gui import i18n

pytestmark = pytest.mark.gui

KEYS = (Qt.Key.Key_1, Qt.Key.Key_2, Qt.Key.Key_3, Qt.Key.Key_4, Qt.Key.Key_5, Qt.Key.Key_6, Qt.Key.Key_7)


@pytest.mark.parametrize("language", ["en", "it"])
def test_ctrl_number_shows_each_page(qtbot: QtBot, tmp_path: Path, language: str) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json", language=language)
    try:
        window.resize(1024, 700)
        window.show()
        window.activateWindow()
        qtbot.waitExposed(window)
        with qtbot.waitActive(window):  # a window shortcut reaches only the active window
            window.activateWindow()
        keys = list(window.pages)
        assert len(keys) == len(KEYS)
        for key, page in zip(reversed(KEYS), reversed(keys), strict=True):  # from the last: none is current
            qtbot.keyClick(window.nav, key, Qt.KeyboardModifier.ControlModifier)
            row = keys.index(page)
            qtbot.waitUntil(lambda r=row: window.nav.currentRow() == r, timeout=5000)
            assert window.stack.currentIndex() == row
    finally:
        i18n.set_language("en")
