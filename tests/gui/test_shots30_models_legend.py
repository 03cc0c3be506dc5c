"""The Models footer's gated legend (issue 30, screenshots): one line when the window has room for it
(it wrapped onto two at 1920 px beside an empty stretch); at 1024 px it still fits beside the buttons."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from fakes.windows import snapshot_window

pytestmark = pytest.mark.gui


@pytest.mark.parametrize(("width", "height"), [(1920, 1080), (1024, 700)])
def test_the_gated_legend_takes_one_line_when_there_is_room(
    qtbot: QtBot, tmp_path: Path, width: int, height: int
) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.setMinimumSize(0, 0)
    window.resize(width, height)
    window.show()
    window.show_page("models")
    page = window.pages["models"]
    qtbot.wait(50)
    legend = next(label for label in page.findChildren(QLabel) if label.text().startswith("gated:"))
    one_line = legend.fontMetrics().lineSpacing()
    if width == 1920:
        assert legend.heightForWidth(legend.width()) < 1.5 * one_line
    fit_button = page.fit_button  # type: ignore[attr-defined]
    assert legend.geometry().right() < fit_button.geometry().left()
    assert fit_button.geometry().right() <= page.width()
