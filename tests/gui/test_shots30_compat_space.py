"""Compatibility at 1024×700 (issue 30, screenshots): the findings reach the page's bottom margin; the
selected finding's details and the "copied" line appear only once they say something (empty, they left
~60 px blank under the tree)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from fakes.windows import answered, snapshot_window

pytestmark = pytest.mark.gui


def test_the_findings_take_the_page_down_to_its_margin(qtbot: QtBot, tmp_path: Path) -> None:
    window = snapshot_window(qtbot, tmp_path, "rtx4090-64gb.json")
    window.resize(1024, 700)
    window.show()
    window.show_page("compat")
    answered(qtbot, window)
    page = window.pages["compat"]
    tree = page.tree  # type: ignore[attr-defined]
    assert page.height() - tree.geometry().bottom() <= 20
    assert not page.details.isVisible() and not page.copied.isVisible()  # type: ignore[attr-defined]
    parent = tree.topLevelItem(0)
    tree.setCurrentItem(parent.child(0))
    assert page.details.isVisible() and page.details.text()  # type: ignore[attr-defined]
    page.copy("pip install torch")  # type: ignore[attr-defined]
    assert page.copied.isVisible()  # type: ignore[attr-defined]
    tree.setCurrentItem(parent)
    assert not page.details.isVisible()  # type: ignore[attr-defined]
