"""An elided label keeps its whole text in a tooltip whenever it is drawn elided (issue 30, screenshots):
a short text cut in a narrow card ("capacità 24,0 Gi…") had none, only texts over 40 characters did."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from rigcheck.gui.elide import ElidedLabel

pytestmark = pytest.mark.gui


def test_an_elided_short_text_has_its_tooltip(qtbot: QtBot) -> None:
    label = ElidedLabel("capacità 24,0 GiB ciascuna")
    qtbot.addWidget(label)
    label.resize(400, 20)
    label.show()
    assert label.shown_text() == label.text() and label.toolTip() == ""
    label.resize(60, 20)
    assert label.shown_text() != label.text()
    assert "capacità 24,0 GiB ciascuna" in label.toolTip()
    label.setText("24,0 GiB")
    label.resize(400, 20)
    assert label.toolTip() == ""
