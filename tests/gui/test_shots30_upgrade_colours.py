"""The Upgrade page's verdicts in their colours (issue 30, screenshots): the models before → after and a
built-in machine's choices were plain text while the Models page and the Overview's cards paint the same
verdicts green, amber or red."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from fakes.windows import answered, snapshot_window
from rigcheck.gui.fitview import verdict_view

pytestmark = pytest.mark.gui


def test_before_and_after_are_painted_in_the_verdicts_colours(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "cpu-only-32gb.json")
    window.resize(1024, 700)
    window.show()
    window.show_page("upgrade")
    answered(qtbot, window)
    table = window.pages["upgrade"].table  # type: ignore[attr-defined]
    assert table.rowCount() > 0
    colours = set()
    for row in range(table.rowCount()):
        for column in (1, 2):
            item = table.item(row, column)
            assert item.foreground().style() != 0, (row, column, item.text())  # a brush was set
            colours.add(item.foreground().color().name())
    fits = verdict_view("fits", None, 50.0)[2]
    assert colours - {"#000000"}, colours
    assert len(colours) >= 2 or fits.lower() in colours  # a CPU-only box: on the CPU, too slow, does not fit
