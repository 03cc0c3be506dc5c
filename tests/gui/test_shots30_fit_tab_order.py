"""The Fit page by keyboard (issue 30): Tab from the first setting reaches every enabled control the page
shows, each once, before it comes round again; Shift+Tab walks the same ring backwards."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from fakes.windows import answered, snapshot_window
from rigcheck.gui import i18n

pytestmark = pytest.mark.gui


def _tab_stops(page: QWidget) -> list[QWidget]:
    return [
        w
        for w in page.findChildren(QWidget)
        if w.isVisibleTo(page)
        and w.isEnabled()
        and w.focusPolicy() & Qt.FocusPolicy.TabFocus
        and w.focusProxy() is None
        and not (w.parentWidget() is not None and w.parentWidget().focusProxy() is w)  # a spin box's edit
        and type(w).__name__ not in ("QScrollBar",)
    ]


@pytest.mark.parametrize("snapshot", ["rtx4090-64gb.json", "two-gpus-128gb.json"])
def test_tab_reaches_every_fit_control(qtbot: QtBot, tmp_path: Path, snapshot: str) -> None:
    window = snapshot_window(qtbot, tmp_path, snapshot)
    try:
        window.resize(1024, 700)
        window.show()
        qtbot.waitExposed(window)
        window.show_page("fit")
        answered(qtbot, window)
        page = window.pages["fit"]
        first = page.quant  # type: ignore[attr-defined]
        first.setFocus(Qt.FocusReason.TabFocusReason)
        qtbot.wait(10)
        seen: list[QWidget] = []
        for _ in range(200):
            focused = QApplication.focusWidget()
            assert focused is not None
            if seen and focused is seen[0]:
                break
            seen.append(focused)
            qtbot.keyClick(focused, Qt.Key.Key_Tab)
        else:
            raise AssertionError("Tab never came back to the first control")
        inside = [w for w in seen if page.isAncestorOf(w)]
        missing = [
            f"{type(w).__name__} {w.accessibleName() or w.objectName()!r}"
            for w in _tab_stops(page)
            if w not in seen
        ]
        assert not missing, missing
        assert len(inside) == len(set(inside)), "a control reached twice in one round"
        for previous in reversed(seen[-4:]):  # Shift+Tab: the same ring, backwards
            qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
            assert QApplication.focusWidget() is previous
    finally:
        i18n.set_language("en")
