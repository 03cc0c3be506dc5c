"""The Upgrade page's ways table (issue 30, screenshots): a wrapped cell never breaks a unit at its slash
(Italian at 1024 px read "M3 Ultra con 96 GiB (819 GB/" over "s)")."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QFont, QFontMetricsF
from pytestqt.qtbot import QtBot

from fakes.windows import wrapped_lines
from rigcheck.gui.pages.upgrade_parts import _cell

pytestmark = pytest.mark.gui


@pytest.mark.parametrize(
    "text", ["M3 Ultra con 96 GiB (819 GB/s)", "oppure noleggio $0,68/h", "~1,1 token/s"]
)
def test_a_wrapped_cell_keeps_its_units_whole(qtbot: QtBot, text: str) -> None:
    shown = _cell(text).text()
    font = QFont()
    width = QFontMetricsF(font).horizontalAdvance(text)
    for narrower in range(10, int(width), 4):
        lines = wrapped_lines(shown, narrower, font)
        assert not any(line.rstrip().endswith("/") for line in lines[:-1]), (narrower, lines)
    assert shown.replace("\u2060", "") == text
