"""The Upgrade page's cost card without a new GPU (issue 30, screenshots): its line sits under its title,
not half-way down a card stretched to the power card's height beside it."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QScrollArea
from pytestqt.qtbot import QtBot

from fakes.windows import answered, snapshot_window

pytestmark = pytest.mark.gui


def test_the_cost_line_is_under_its_title(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "hgx-h100x8-2tb.json", language="it")
    try:
        window.resize(1024, 700)
        window.show()
        window.show_page("upgrade")
        answered(qtbot, window)
        page = window.pages["upgrade"]
        area = page.findChild(QScrollArea)
        area.verticalScrollBar().setValue(area.verticalScrollBar().maximum())
        qtbot.wait(50)
        text = page.cost_text  # type: ignore[attr-defined]
        assert text.isVisible() and not page.chart.isVisible()  # type: ignore[attr-defined]
        card = text.parentWidget()
        labels = [w for w in card.children() if type(w).__name__ == "QLabel"]
        assert len(labels) == 2  # the title and its line
        for label in labels:  # each as tall as its text, none stretched (a label centres its text in it)
            assert label.height() <= label.heightForWidth(label.width()) + 6, (label.text(), label.height())
    finally:
        from rigcheck.gui import i18n

        i18n.set_language("en")
